/*
 * Is a model file's network one that can drive a body (include/embody/prior.h,
 * pr_model_check)? A file can pass every format check (magic, sizes, checksum, finite
 * numbers) and still hold weights of 1e38 whose every prediction is non-finite, so the
 * body would quietly run without its prior (issue 20). Two checks: every parameter
 * within a range no trained network comes near, and one forward pass on a fixed probe
 * (a player standing still) whose decoded joints must be finite and where a human's are.
 */
#include <math.h>
#include <string.h>

#include "embody/prior.h"

/* Trained parameters are within a few hundred; normalisation means within metres. */
#define MAX_PARAM 1e4f
/* The probe: a 1.75 m player standing still at the origin, controllers at the hips. */
#define PROBE_HEIGHT_M 1.75f
#define PROBE_HEAD_Y_M 1.65f
/* Every decoded joint within this of the head, and below it. */
#define PROBE_MAX_REACH_M 2.5f

static const char *
block_of(const struct pr_model *m, long i)
{
    const float *p = m->params + i;
    const struct {
        const float *start;
        const char *name;
    } blocks[] = {{m->b3, "the output layer's biases"}, {m->w3, "the output layer's weights"},
                  {m->b2, "the second layer's biases"}, {m->w2, "the second layer's weights"},
                  {m->b1, "the first layer's biases"},  {m->w1, "the first layer's weights"},
                  {m->out_std, "the output deviations"}, {m->out_mean, "the output means"},
                  {m->in_std, "the input deviations"},   {m->in_mean, "the input means"}};
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; ++b)
        if (blocks[b].start && p >= blocks[b].start)
            return blocks[b].name;
    return "a parameter";
}

static void
probe_history(struct pr_history *h)
{
    pr_history_reset(h);
    struct em_tracking_frame f;
    memset(&f, 0, sizeof f);
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        f.device[d].pose.orientation[3] = 1.0f;
        f.device[d].flags = EM_POSE_ALL_VALID;
    }
    f.device[EM_DEVICE_HEAD].pose.position_m[1] = PROBE_HEAD_Y_M;
    for (int s = 0; s < 2; ++s) {
        float *p = f.device[s ? EM_DEVICE_RIGHT_HAND : EM_DEVICE_LEFT_HAND].pose.position_m;
        p[0] = s ? -0.25f : 0.25f;
        p[1] = 0.95f;
    }
    for (int i = 0; i < PR_HISTORY_FRAMES + 2; ++i) {
        f.time_s = (double)i / 60.0;
        pr_history_push(h, &f);
    }
}

static bool
joint_plausible(const float *p, const float *head)
{
    if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
        return false;
    const float d[3] = {p[0] - head[0], p[1] - head[1], p[2] - head[2]};
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) <= PROBE_MAX_REACH_M &&
           p[1] < head[1];
}

enum em_result
pr_model_check(const struct pr_model *m, const char *source, struct em_error *err)
{
    const long n = pr_model_param_count(m->feature_count, m->hidden_count, m->output_count);
    for (long i = 0; i < n; ++i)
        if (!(fabsf(m->params[i]) <= MAX_PARAM))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: %s hold %g (parameter %ld); a trained prior's are within %g: "
                           "not a usable model",
                           source, block_of(m, i), (double)m->params[i], i, (double)MAX_PARAM);
    static struct pr_history history; /* large; the check runs once per load */
    probe_history(&history);
    float features[PR_FEATURE_COUNT], out[PR_OUTPUT_COUNT], yaw = 0.0f;
    pr_features(&history, PROBE_HEIGHT_M, 0.0f, features, &yaw);
    pr_model_infer(m, features, out);
    for (int i = 0; i < m->output_count; ++i)
        if (!isfinite(out[i]))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: for a player standing still the network's output %d is not a "
                           "finite number: not a usable model",
                           source, i);
    struct pr_truth pose;
    float contact[2];
    const float head[3] = {0.0f, PROBE_HEAD_Y_M, 0.0f};
    pr_decode_outputs(out, m->output_count, head, yaw, PROBE_HEIGHT_M, 0.0f, &pose, contact);
    const struct {
        const float *p;
        const char *name;
    } joints[] = {{pose.hips_m, "hips"},
                  {pose.ankle_m[0], "left ankle"},
                  {pose.ankle_m[1], "right ankle"},
                  {pose.knee_m[0], "left knee"},
                  {pose.knee_m[1], "right knee"},
                  {pose.toes_m[0], "left toes"},
                  {pose.toes_m[1], "right toes"},
                  {pose.neck_m, "neck"}, /* the torso's last: a model of set 1 has none */
                  {pose.upper_arm_m[0], "left shoulder"},
                  {pose.upper_arm_m[1], "right shoulder"},
                  {pose.back_m[0], "spine"}, /* the back's: sets 1 and 2 have none */
                  {pose.back_m[1], "chest"},
                  {pose.lower_arm_m[0], "left elbow"}, /* sets 1 to 3 have none */
                  {pose.lower_arm_m[1], "right elbow"}};
    const size_t checked = sizeof joints / sizeof joints[0] - (pose.has_elbows ? 0 : 2) -
                           (pose.has_back ? 0 : 2) - (pose.has_torso ? 0 : 3);
    for (size_t j = 0; j < checked; ++j)
        if (!joint_plausible(joints[j].p, head))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: for a player standing still it puts the %s at (%.3g, %.3g, "
                           "%.3g) m, head at (0, %.2f, 0): not where a human's is, not a "
                           "usable model",
                           source, joints[j].name, (double)joints[j].p[0], (double)joints[j].p[1],
                           (double)joints[j].p[2], (double)PROBE_HEAD_Y_M);
    return EM_OK;
}
