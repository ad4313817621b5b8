/*
 * The player's standing height from the headset's height over the first seconds of a
 * stream or a session (include/embody/input.h): what the live calibration measures from
 * one moment, made robust by looking at a few seconds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embody/input.h"
#include "embody/m_math.h"
#include "embody/skeleton.h"
#include "embody/stream.h"

/* The share of the window's eye heights below the one used: high enough that crouching
 * and looking down do not pull it down, below 1 so that one jump does not decide. */
#define EYE_PERCENTILE 0.9

void
in_height_estimator_init(struct in_height_estimator *e)
{
    memset(e, 0, sizeof *e);
}

bool
in_height_estimator_add(struct in_height_estimator *e, const struct em_tracking_frame *frame)
{
    const struct em_device_pose *head = &frame->device[EM_DEVICE_HEAD];
    const bool full = e->count == IN_HEIGHT_MAX_SAMPLES ||
                      (e->started && frame->time_s - e->first_time_s >= IN_HEIGHT_WINDOW_S);
    if (full)
        return true;
    if (!em_device_pose_usable(head) || !m_vec3_is_finite(head->pose.position_m) ||
        !isfinite(frame->time_s))
        return false;
    if (!e->started) {
        e->started = true;
        e->first_time_s = frame->time_s;
    }
    e->eye_m[e->count++] = head->pose.position_m[1];
    return false;
}

static int
compare_floats(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

float
in_height_standing_eye_y(const struct in_height_estimator *e)
{
    if (e->count == 0)
        return NAN;
    float sorted[IN_HEIGHT_MAX_SAMPLES];
    memcpy(sorted, e->eye_m, (size_t)e->count * sizeof *sorted);
    qsort(sorted, (size_t)e->count, sizeof *sorted, compare_floats);
    return sorted[(int)floor(EYE_PERCENTILE * (double)(e->count - 1))];
}

enum em_result
in_height_estimate(const struct in_height_estimator *e, float floor_y_m, float head_up_m,
                   float *out_height_m, float *out_eye_m, struct em_error *err)
{
    if (e->count == 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "no tracked headset to estimate the height from");
    const float eye = in_height_standing_eye_y(e) - floor_y_m;
    const float height = (eye - head_up_m) / SK_HEAD_JOINT_HEIGHT_RATIO;
    if (out_eye_m)
        *out_eye_m = eye;
    if (!(height >= IN_HEIGHT_MIN_M && height <= IN_HEIGHT_MAX_M))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "the headset is %.2f m above the floor over the first %.0f s, which is "
                       "not a standing eye height (a height of %.2f m)",
                       (double)eye, IN_HEIGHT_WINDOW_S, (double)height);
    *out_height_m = height;
    return EM_OK;
}

enum em_result
in_height_estimate_file(const char *path, float floor_y_m, float head_up_m, float *out_height_m,
                        float *out_eye_m, struct em_error *err)
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
    in_height_estimator_init(e);
    for (int i = 0; i < stream.frame_count && !in_height_estimator_add(e, &stream.frames[i]); ++i) {
    }
    st_stream_fini(&stream);
    struct em_error why = {{0}};
    r = in_height_estimate(e, floor_y_m, head_up_m, out_height_m, out_eye_m, &why);
    free(e);
    if (r != EM_OK)
        em_fail(err, r, "%s: %s", path, why.message);
    return r;
}
