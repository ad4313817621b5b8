/*
 * Applying faults to tracking frames (src/fault/fault.h): the running state of a set
 * (the faults' clock, each latency fault's history, each dropout's held poses and burst
 * state, the random generators) and the per-frame step, in the order faults happen to a
 * real tracker.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fault/fault.h"
#include "embody/m_math.h"

#define DEVICE_SLOTS (EM_DEVICE_COUNT + EM_TRACKER_COUNT)
#define DEFAULT_STEP_S (1.0 / 60.0)
#define PI 3.14159265358979323846

/* A device's past samples, oldest first in a ring. */
struct history {
    int first, count;
    double time_s[FLT_LATENCY_HISTORY];
    struct em_device_pose pose[FLT_LATENCY_HISTORY];
};

struct flt_state {
    struct flt_set set;
    bool started;
    double start_s, last_s;
    uint64_t rng[FLT_MAX_FAULTS];
    struct history *history[FLT_MAX_FAULTS];                  /* [DEVICE_SLOTS] per latency fault */
    bool lost[FLT_MAX_FAULTS][DEVICE_SLOTS];                  /* dropout: lost at the last frame */
    struct em_device_pose held[FLT_MAX_FAULTS][DEVICE_SLOTS]; /* last pose before a loss */
};

/* ---- random numbers (splitmix64: small, and the same on every platform) ---- */

static uint64_t
next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double
uniform(uint64_t *s)
{
    return ((double)(next_u64(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Standard normal (Box-Muller). */
static double
gaussian(uint64_t *s)
{
    const double u = uniform(s), v = uniform(s);
    return sqrt(-2.0 * log(u)) * cos(2.0 * PI * v);
}

/* ---- devices by slot: head and hands, then the body trackers ---- */

static struct em_device_pose *
slot_pose(struct em_tracking_frame *f, int slot)
{
    return slot < EM_DEVICE_COUNT ? &f->device[slot] : &f->tracker[slot - EM_DEVICE_COUNT];
}

static bool
slot_present(const struct em_tracking_frame *f, int slot)
{
    return slot < EM_DEVICE_COUNT ||
           (f->tracker_present & EM_TRACKER_BIT(slot - EM_DEVICE_COUNT)) != 0;
}

/* ---- create / destroy ---- */

enum em_result
flt_state_create(const struct flt_set *set, struct flt_state **out_state, struct em_error *err)
{
    *out_state = NULL;
    struct flt_state *s = calloc(1, sizeof *s);
    if (!s)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "faults: out of memory");
    s->set = *set;
    for (int i = 0; i < s->set.count; ++i) {
        s->rng[i] = set->seed ^ (0x5851f42d4c957f2dull * (uint64_t)(i + 1));
        if (s->set.fault[i].kind != FLT_LATENCY)
            continue;
        s->history[i] = calloc(DEVICE_SLOTS, sizeof *s->history[i]);
        if (!s->history[i]) {
            flt_state_destroy(&s);
            return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "faults: out of memory");
        }
    }
    *out_state = s;
    return EM_OK;
}

void
flt_state_destroy(struct flt_state **state)
{
    if (!state || !*state)
        return;
    for (int i = 0; i < FLT_MAX_FAULTS; ++i)
        free((*state)->history[i]);
    free(*state);
    *state = NULL;
}

/* ---- each kind on one device ---- */

static void
apply_offset(const struct flt_fault *f, struct em_device_pose *d)
{
    const float up[3] = {0.0f, (float)(f->amount * 0.01), 0.0f};
    float moved[3];
    m_quat_rotate(d->pose.orientation, up, moved);
    m_vec3_add(d->pose.position_m, moved, d->pose.position_m);
}

static void
apply_turn(const struct flt_fault *f, struct em_device_pose *d)
{
    static const float y_axis[3] = {0.0f, 1.0f, 0.0f};
    float turn[4];
    m_quat_from_axis_angle(y_axis, (float)(f->amount * PI / 180.0), turn);
    m_quat_mul(d->pose.orientation, turn, d->pose.orientation); /* about its own +Y */
}

static void
apply_drift(const struct flt_fault *f, double elapsed_s, struct em_device_pose *d)
{
    static const float y_axis[3] = {0.0f, 1.0f, 0.0f};
    const double deg = f->amount * elapsed_s / 60.0;
    float yaw[4];
    m_quat_from_axis_angle(y_axis, (float)(fmod(deg, 360.0) * PI / 180.0), yaw);
    m_quat_mul(yaw, d->pose.orientation, d->pose.orientation); /* about the world's +Y */
}

static void
apply_noise(const struct flt_fault *f, uint64_t *rng, struct em_device_pose *d)
{
    for (int a = 0; a < 3; ++a)
        d->pose.position_m[a] += (float)(gaussian(rng) * f->amount * 0.001);
}

static void
swap_pair(const struct flt_fault *f, struct em_tracking_frame *frame)
{
    int slots[2], n = 0;
    for (int s = 0; s < DEVICE_SLOTS && n < 2; ++s)
        if (f->devices & (1u << s))
            slots[n++] = s;
    if (n < 2 || !slot_present(frame, slots[0]) || !slot_present(frame, slots[1]))
        return;
    const struct em_device_pose a = *slot_pose(frame, slots[0]);
    *slot_pose(frame, slots[0]) = *slot_pose(frame, slots[1]);
    *slot_pose(frame, slots[1]) = a;
}

static void
history_push(struct history *h, double t, const struct em_device_pose *d)
{
    if (h->count == FLT_LATENCY_HISTORY) {
        h->first = (h->first + 1) % FLT_LATENCY_HISTORY;
        h->count--;
    }
    const int at = (h->first + h->count) % FLT_LATENCY_HISTORY;
    h->time_s[at] = t;
    h->pose[at] = *d;
    h->count++;
}

/* The pose the history had at `t`: interpolated between the samples either side when both
 * are usable, else the older one's; the oldest before the history begins. */
static void
history_at(const struct history *h, double t, struct em_device_pose *out)
{
    int older = h->first;
    for (int k = 1; k < h->count; ++k) {
        const int i = (h->first + k) % FLT_LATENCY_HISTORY;
        if (h->time_s[i] > t)
            break;
        older = i;
    }
    *out = h->pose[older];
    const int newer = (older + 1) % FLT_LATENCY_HISTORY;
    const int newest = (h->first + h->count - 1) % FLT_LATENCY_HISTORY;
    if (older == newest || h->time_s[older] > t || !em_device_pose_usable(&h->pose[older]) ||
        !em_device_pose_usable(&h->pose[newer]))
        return;
    const float w = (float)((t - h->time_s[older]) / (h->time_s[newer] - h->time_s[older]));
    m_vec3_lerp(h->pose[older].pose.position_m, h->pose[newer].pose.position_m, w,
                out->pose.position_m);
    m_quat_slerp(h->pose[older].pose.orientation, h->pose[newer].pose.orientation, w,
                 out->pose.orientation);
}

/* Whether a share dropout is lost at this frame: a two-state chain whose losses last
 * FLT_DROPOUT_BURST_S on average and take `share` of the time. */
static bool
share_lost(const struct flt_fault *f, uint64_t *rng, bool was_lost, bool first, double dt_s)
{
    const double share = f->amount;
    if (share <= 0.0 || share >= 1.0)
        return share >= 1.0;
    if (first)
        return uniform(rng) < share;
    const double leave = fmin(1.0, dt_s / FLT_DROPOUT_BURST_S);
    const double enter = fmin(1.0, leave * share / (1.0 - share));
    return uniform(rng) < (was_lost ? 1.0 - leave : enter);
}

/* ---- one fault on a frame ---- */

static void
apply_fault(struct flt_state *s, int i, struct em_tracking_frame *frame, bool first, double dt_s)
{
    const struct flt_fault *f = &s->set.fault[i];
    const double elapsed_s = frame->time_s - s->start_s;
    if (f->kind == FLT_SWAP) {
        swap_pair(f, frame);
        return;
    }
    for (int slot = 0; slot < DEVICE_SLOTS; ++slot) {
        if (!(f->devices & (1u << slot)) || !slot_present(frame, slot))
            continue;
        struct em_device_pose *d = slot_pose(frame, slot);
        const bool usable = em_device_pose_usable(d);
        switch (f->kind) {
        case FLT_OFFSET:
            if (usable)
                apply_offset(f, d);
            break;
        case FLT_TURN:
            if (usable)
                apply_turn(f, d);
            break;
        case FLT_DRIFT:
            if (usable)
                apply_drift(f, elapsed_s, d);
            break;
        case FLT_NOISE:
            if (usable)
                apply_noise(f, &s->rng[i], d);
            break;
        case FLT_LATENCY:
            history_push(&s->history[i][slot], frame->time_s, d);
            history_at(&s->history[i][slot], frame->time_s - f->amount * 0.001, d);
            break;
        case FLT_DROPOUT: {
            const bool lost = f->window
                                  ? elapsed_s >= f->window_from_s && elapsed_s < f->window_to_s
                                  : share_lost(f, &s->rng[i], s->lost[i][slot], first, dt_s);
            if (lost && !first) {
                *d = s->held[i][slot];
                d->flags = 0;
            } else if (lost) {
                d->flags = 0; /* nothing delivered before: keep the value, trust nothing */
                s->held[i][slot] = *d;
            } else {
                s->held[i][slot] = *d;
            }
            s->lost[i][slot] = lost;
            break;
        }
        case FLT_SWAP:
        case FLT_KIND_COUNT: break;
        }
    }
}

void
flt_state_apply(struct flt_state *state, struct em_tracking_frame *frame)
{
    const bool first = !state->started;
    if (first) {
        state->started = true;
        state->start_s = state->last_s = frame->time_s;
    }
    const double dt_s = first ? DEFAULT_STEP_S : frame->time_s - state->last_s;
    state->last_s = frame->time_s;
    for (int kind = 0; kind < FLT_KIND_COUNT; ++kind)
        for (int i = 0; i < state->set.count; ++i)
            if ((int)state->set.fault[i].kind == kind)
                apply_fault(state, i, frame, first, dt_s);
}

enum em_result
flt_apply_frames(const struct flt_set *set, struct em_tracking_frame *frames, int count,
                 struct em_error *err)
{
    if (set->count == 0)
        return EM_OK;
    struct flt_state *state = NULL;
    const enum em_result r = flt_state_create(set, &state, err);
    if (r != EM_OK)
        return r;
    for (int i = 0; i < count; ++i)
        flt_state_apply(state, &frames[i]);
    flt_state_destroy(&state);
    return EM_OK;
}
