/*
 * Replaying a 3-point stream file as an input source (include/embody/input.h), with the
 * file's finger columns for each frame it delivers (in_source_fingers).
 *
 * The whole file is read at creation, so next() only copies a frame and, in real time,
 * sleeps until the frame is due on the monotonic clock: it never allocates. Frame k is
 * due at  start + (t_k - t_first)  where start is when the first frame was asked for;
 * time spent paused moves `start` on, and a consumer that stalls for long (a window being
 * dragged) moves it on too rather than getting a burst of stale frames.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/input.h"
#include "embody/stream.h"
#include "util/u_time.h"

/* Later than this, the clock is reset to the frame instead of hurrying to catch up. */
#define MAX_LATENESS_NS 100000000LL

/* The most max_wait_s may be (an hour; nanoseconds of it fit an int64_t easily). */
#define MAX_WAIT_LIMIT_S 3600.0

/* Period of a one-frame stream, which has no interval of its own (a common headset rate). */
#define SINGLE_FRAME_PERIOD_S (1.0 / 60.0)

struct replay {
    struct in_source base;
    struct st_stream stream;
    char name[64];
    bool real_time;
    bool loop;
    bool paused;
    int next_index;     /* the frame next() delivers next */
    int current_index;  /* the frame delivered last (its fingers: replay_fingers) */
    bool have_current;  /* `current` holds the last delivered frame */
    double period_s;    /* mean interval between frames */
    double loop_offset_s; /* added to the file's t: grows by one play length per loop */
    bool clock_started;
    int64_t anchor_ns;  /* when the frame of time anchor_time_s is due */
    double anchor_time_s;
    int64_t paused_at_ns;
    double max_wait_s;
    in_replay_gap_fn on_gap;
    void *on_gap_user;
    bool gap_told;
    double last_time_s; /* the file's t (with the loop offset) of the last frame paced */
    struct em_tracking_frame current;
};

static struct replay *
replay_of(struct in_source *src)
{
    return (struct replay *)src;
}

/* Sleeps until `due_ns` on the monotonic clock (sleeps may end early: check again). */
static void
wait_until(int64_t due_ns)
{
    for (int64_t now = u_time_now_ns(); now < due_ns; now = u_time_now_ns())
        u_time_sleep_ns(due_ns - now);
}

/* A frame due too long after now: it comes max_wait_s from now, and the clock goes on
 * from it. Compared in seconds (double) before anything becomes nanoseconds, so a gap of
 * 1e10 s cannot overflow. */
static bool
cap_wait(struct replay *r, double previous_s, double time_s, int64_t now)
{
    const double wait_s = (time_s - r->anchor_time_s) - (double)(now - r->anchor_ns) * 1e-9;
    if (wait_s <= r->max_wait_s)
        return false;
    if (!r->gap_told && r->on_gap) {
        r->gap_told = true;
        r->on_gap(r->on_gap_user, time_s - previous_s, time_s, r->max_wait_s);
    }
    r->anchor_ns = now + (int64_t)(r->max_wait_s * 1e9);
    r->anchor_time_s = time_s;
    wait_until(r->anchor_ns);
    return true;
}

static void
pace(struct replay *r, double time_s)
{
    const int64_t now = u_time_now_ns();
    const double previous_s = r->last_time_s;
    r->last_time_s = time_s;
    if (!r->clock_started) {
        r->clock_started = true;
        r->anchor_ns = now;
        r->anchor_time_s = time_s;
        return;
    }
    if (cap_wait(r, previous_s, time_s, now))
        return;
    /* Rounded up, so a frame never comes before its time. */
    const int64_t due = r->anchor_ns + (int64_t)ceil((time_s - r->anchor_time_s) * 1e9);
    if (now - due > MAX_LATENESS_NS) {
        r->anchor_ns = now;
        r->anchor_time_s = time_s;
        return;
    }
    wait_until(due);
}

static enum em_result
deliver_next(struct replay *r, struct em_tracking_frame *out_frame)
{
    if (r->next_index == r->stream.frame_count) {
        if (!r->loop)
            return EM_END_OF_STREAM;
        const struct em_tracking_frame *f = r->stream.frames;
        r->loop_offset_s += f[r->stream.frame_count - 1].time_s - f[0].time_s + r->period_s;
        r->next_index = 0;
    }
    r->current_index = r->next_index;
    r->current = r->stream.frames[r->next_index++];
    r->current.time_s += r->loop_offset_s;
    r->have_current = true;
    if (r->real_time)
        pace(r, r->current.time_s);
    *out_frame = r->current;
    return EM_OK;
}

static enum em_result
replay_next(struct in_source *src, struct em_tracking_frame *out_frame)
{
    struct replay *r = replay_of(src);
    if (!r->paused || !r->have_current)
        return deliver_next(r, out_frame);
    /* Paused: the same frame and time again, one period apart in real time so that the
     * caller's loop does not spin. */
    if (r->real_time)
        u_time_sleep_ns((int64_t)(r->period_s * 1e9));
    *out_frame = r->current;
    return EM_OK;
}

static void
replay_set_paused(struct in_source *src, bool paused)
{
    struct replay *r = replay_of(src);
    if (paused == r->paused)
        return;
    const int64_t now = u_time_now_ns();
    if (paused)
        r->paused_at_ns = now;
    else
        r->anchor_ns += now - r->paused_at_ns; /* the pause does not count as play time */
    r->paused = paused;
}

/* The finger columns of the frame delivered last (a paused replay's too). */
static bool
replay_fingers(struct in_source *src, struct st_fingers *out_fingers)
{
    const struct replay *r = replay_of(src);
    if (!r->stream.fingers || !r->have_current)
        return false;
    *out_fingers = r->stream.fingers[r->current_index];
    return true;
}

static void
replay_destroy(struct in_source *src)
{
    struct replay *r = replay_of(src);
    st_stream_fini(&r->stream);
    free(r);
}

/* A copy of frames made in memory (a stream made from a clip); at least one frame. */
static enum em_result
take_stream(const struct st_stream *from, struct st_stream *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    if (from->frame_count < 1)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "replay: a stream without frames");
    const size_t bytes = (size_t)from->frame_count * sizeof *out->frames;
    out->frames = aligned_alloc(16, bytes);
    if (!out->frames)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "replay: out of memory");
    memcpy(out->frames, from->frames, bytes);
    out->frame_count = out->capacity = from->frame_count;
    if (from->fingers) {
        const size_t finger_bytes = (size_t)from->frame_count * sizeof *out->fingers;
        out->fingers = malloc(finger_bytes);
        if (!out->fingers) {
            st_stream_fini(out);
            return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "replay: out of memory");
        }
        memcpy(out->fingers, from->fingers, finger_bytes);
        out->finger_mask = from->finger_mask;
    }
    return EM_OK;
}

enum em_result
in_replay_create(const struct in_replay_desc *desc, struct in_source **out_source,
                 struct em_error *err)
{
    *out_source = NULL;
    if (!desc || (!desc->path && !desc->stream))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "replay: no stream file given");
    /* The frames hold 16-byte aligned versors. */
    const size_t bytes = (sizeof(struct replay) + 15) & ~(size_t)15;
    struct replay *r = aligned_alloc(16, bytes);
    if (!r)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "replay: out of memory");
    memset(r, 0, sizeof *r);
    const enum em_result res = desc->stream ? take_stream(desc->stream, &r->stream, err)
                                            : st_stream_load(desc->path, &r->stream, err);
    if (res != EM_OK) {
        free(r);
        return res;
    }
    if (r->stream.cut_line && desc->on_cut_row)
        desc->on_cut_row(desc->on_gap_user, r->stream.cut_line);
    snprintf(r->name, sizeof r->name, "%s", desc->name ? desc->name : "replay");
    r->real_time = !desc->as_fast_as_possible;
    r->loop = desc->loop;
    r->max_wait_s = desc->max_wait_s > 0.0 ? fmin(desc->max_wait_s, MAX_WAIT_LIMIT_S)
                                           : IN_REPLAY_DEFAULT_MAX_WAIT_S;
    r->on_gap = desc->on_gap;
    r->on_gap_user = desc->on_gap_user;
    const int n = r->stream.frame_count;
    r->period_s = n > 1 ? (r->stream.frames[n - 1].time_s - r->stream.frames[0].time_s) / (n - 1)
                        : SINGLE_FRAME_PERIOD_S;
    r->base.name = r->name;
    r->base.next = replay_next;
    r->base.submit = NULL;
    r->base.set_paused = replay_set_paused;
    r->base.destroy = replay_destroy;
    r->base.fingers = replay_fingers;
    *out_source = &r->base;
    return EM_OK;
}
