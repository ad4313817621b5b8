/*
 * The player's standing height from the headset over a stream or a session
 * (include/embody/input.h): the height at which the head is held still, found from the
 * whole stream (a file) or growing as the evidence comes (live). The constants were
 * chosen on the training clips (../shared/mocap-train), measured by
 * tests/bench/height_estimate.sh.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embody/input.h"
#include "embody/m_math.h"
#include "embody/skeleton.h"
#include "embody/stream.h"

/* The share of the still time spent below the height used: high enough that sitting,
 * crouching and a slouch do not pull it down, below 1 so that one moment does not decide. */
#define STILL_PERCENTILE 0.9
/* Standing players hold their skull base a little higher than the still-head percentile
 * gives over their rest pose's: the median ratio over the training clips. */
#define STANDING_SCALE 0.993f
/* A T-pose's grip-to-grip distance over standing height: the default humanoid's arm span
 * (1.02 heights) less the hands beyond the grips (2.8 palms); no training clip's grips
 * come further apart at shoulder height (at most 0.877). A lower bound of the height. */
#define TPOSE_GRIPS_PER_HEIGHT 0.87f
/* A T-pose: both grips within this of shoulder height (this far below the skull base). */
#define TPOSE_HEIGHT_TOLERANCE_M 0.15f
#define SHOULDER_BELOW_SKULL_M 0.12f
/* A frame gap longer than this counts as this long (a paused or dropped source). */
#define MAX_FRAME_GAP_S 0.1

/* The headset's default position on the head (body_desc's), head joint frame. */
static const float k_default_head_position_m[3] = {0.0f, 0.08f, 0.09f};

void
in_height_estimator_init(struct in_height_estimator *e, const float *head_position_m,
                         float floor_y_m)
{
    memset(e, 0, sizeof *e);
    const float *p = head_position_m;
    if (!p || (p[0] == 0.0f && p[1] == 0.0f && p[2] == 0.0f))
        p = k_default_head_position_m;
    /* The view looks down the head's -Z with its +X turned over (diag(-1, 1, -1)): the
     * skull base, at -p in the head's frame, is at (p.x, -p.y, p.z) in the view's. */
    m_vec3_set(e->skull_in_view_m, p[0], -p[1], p[2]);
    e->floor_y_m = floor_y_m;
}

static int
bin_of(float skull_m)
{
    const int bin = (int)floorf(skull_m / IN_HEIGHT_BIN_M);
    return bin < 0 ? 0 : bin >= IN_HEIGHT_BINS ? IN_HEIGHT_BINS - 1 : bin;
}

/* Drops the samples older than the stillness window, then adds this one; true when the
 * head moved less than IN_HEIGHT_STILL_RANGE_M over a full window. */
static bool
held_still(struct in_height_estimator *e, double time_s, float skull_m)
{
    while (e->recent_count > 0 &&
           time_s - e->recent_time_s[e->recent_first] > IN_HEIGHT_STILL_WINDOW_S) {
        e->recent_first = (e->recent_first + 1) % IN_HEIGHT_RECENT_MAX;
        e->recent_count--;
    }
    if (e->recent_count == IN_HEIGHT_RECENT_MAX) { /* a very fast source: keep the newest */
        e->recent_first = (e->recent_first + 1) % IN_HEIGHT_RECENT_MAX;
        e->recent_count--;
    }
    const int slot = (e->recent_first + e->recent_count) % IN_HEIGHT_RECENT_MAX;
    e->recent_time_s[slot] = time_s;
    e->recent_y_m[slot] = skull_m;
    e->recent_count++;
    float low = skull_m, high = skull_m;
    for (int i = 0; i < e->recent_count; ++i) {
        const float y = e->recent_y_m[(e->recent_first + i) % IN_HEIGHT_RECENT_MAX];
        low = fminf(low, y);
        high = fmaxf(high, y);
    }
    const double spanned = time_s - e->recent_time_s[e->recent_first];
    return spanned >= 0.9 * IN_HEIGHT_STILL_WINDOW_S && high - low < IN_HEIGHT_STILL_RANGE_M;
}

/* Both hands out at shoulder height: their distance bounds the height from below. */
static void
note_tpose(struct in_height_estimator *e, const struct em_tracking_frame *frame, float skull_m)
{
    const struct em_device_pose *l = &frame->device[EM_DEVICE_LEFT_HAND];
    const struct em_device_pose *r = &frame->device[EM_DEVICE_RIGHT_HAND];
    if (!em_device_pose_usable(l) || !em_device_pose_usable(r) ||
        !m_vec3_is_finite(l->pose.position_m) || !m_vec3_is_finite(r->pose.position_m))
        return;
    const float shoulder_y = e->floor_y_m + skull_m - SHOULDER_BELOW_SKULL_M;
    if (fabsf(l->pose.position_m[1] - shoulder_y) > TPOSE_HEIGHT_TOLERANCE_M ||
        fabsf(r->pose.position_m[1] - shoulder_y) > TPOSE_HEIGHT_TOLERANCE_M)
        return;
    const float grips = m_vec3_distance(l->pose.position_m, r->pose.position_m);
    if (grips < IN_HEIGHT_MAX_M * TPOSE_GRIPS_PER_HEIGHT) /* not a tracking glitch */
        e->tpose_grips_m = fmaxf(e->tpose_grips_m, grips);
}

bool
in_height_estimator_add(struct in_height_estimator *e, const struct em_tracking_frame *frame)
{
    const struct em_device_pose *head = &frame->device[EM_DEVICE_HEAD];
    if (!em_device_pose_usable(head) || !m_vec3_is_finite(head->pose.position_m) ||
        !isfinite(frame->time_s) || (e->started && frame->time_s <= e->last_time_s))
        return e->still_total_s >= IN_HEIGHT_CONFIDENT_STILL_S;
    float q[4];
    for (int k = 0; k < 4; ++k)
        q[k] = head->pose.orientation[k];
    if (!(fabsf(m_quat_dot(q, q) - 1.0f) < 0.02f))
        m_quat_identity(q); /* an unusable rotation: the offset as if upright */
    float skull_offset[3];
    m_quat_rotate(q, e->skull_in_view_m, skull_offset);
    const float skull_m = head->pose.position_m[1] + skull_offset[1] - e->floor_y_m;
    const double dt = e->started ? fmin(frame->time_s - e->last_time_s, MAX_FRAME_GAP_S) : 0.0;
    e->started = true;
    e->last_time_s = frame->time_s;
    e->frames++;
    const bool still = held_still(e, frame->time_s, skull_m);
    note_tpose(e, frame, skull_m);
    /* A head higher than a tall person's stands on something: no evidence of a height. */
    if (!isfinite(skull_m) || skull_m > IN_HEIGHT_PLAUSIBLE_MAX_M * SK_HEAD_JOINT_HEIGHT_RATIO)
        return e->still_total_s >= IN_HEIGHT_CONFIDENT_STILL_S;
    const int bin = bin_of(skull_m);
    e->any_s[bin] += (float)dt;
    e->any_total_s += dt;
    if (still) {
        e->still_s[bin] += (float)dt;
        e->still_total_s += dt;
    }
    return e->still_total_s >= IN_HEIGHT_CONFIDENT_STILL_S;
}

/* The height below which `share` of the histogram's time lies (the bin's middle). */
static float
histogram_percentile(const float *seconds, double total_s, double share)
{
    double below = 0.0;
    for (int i = 0; i < IN_HEIGHT_BINS; ++i) {
        below += (double)seconds[i];
        if (below >= share * total_s)
            return ((float)i + 0.5f) * IN_HEIGHT_BIN_M;
    }
    return ((float)IN_HEIGHT_BINS - 0.5f) * IN_HEIGHT_BIN_M;
}

enum em_result
in_height_estimate(const struct in_height_estimator *e, float *out_height_m, float *out_skull_m,
                   struct em_error *err)
{
    if (e->frames == 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "no tracked headset to estimate the height from");
    const bool have_still = e->still_total_s >= IN_HEIGHT_MIN_STILL_S;
    float skull;
    if (have_still)
        skull = histogram_percentile(e->still_s, e->still_total_s, STILL_PERCENTILE);
    else if (e->any_total_s > 0.0)
        skull = histogram_percentile(e->any_s, e->any_total_s, STILL_PERCENTILE);
    else
        skull = e->recent_y_m[e->recent_first]; /* one frame, or all of them too high */
    const float height = fmaxf(STANDING_SCALE * skull / SK_HEAD_JOINT_HEIGHT_RATIO,
                               e->tpose_grips_m / TPOSE_GRIPS_PER_HEIGHT);
    if (out_skull_m)
        *out_skull_m = skull;
    if (!(height >= IN_HEIGHT_MIN_M && height <= IN_HEIGHT_MAX_M))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "the headset's skull base is %.2f m above the floor where %s, which is "
                       "not a standing height (%.2f m)",
                       (double)skull, have_still ? "held still" : "highest", (double)height);
    *out_height_m = height;
    return EM_OK;
}

enum em_result
in_height_estimate_file(const char *path, const float *head_position_m, float floor_y_m,
                        float *out_height_m, float *out_skull_m, struct em_error *err)
{
    struct st_stream stream;
    enum em_result r = st_stream_load(path, &stream, err);
    if (r != EM_OK)
        return r;
    struct in_height_estimator *e = malloc(sizeof *e);
    if (!e) {
        st_stream_fini(&stream);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    in_height_estimator_init(e, head_position_m, floor_y_m);
    for (int i = 0; i < stream.frame_count; ++i)
        in_height_estimator_add(e, &stream.frames[i]);
    st_stream_fini(&stream);
    struct em_error why = {{0}};
    r = in_height_estimate(e, out_height_m, out_skull_m, &why);
    free(e);
    if (r != EM_OK)
        em_fail(err, r, "%s: %s", path, why.message);
    return r;
}
