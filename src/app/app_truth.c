/* The truth beside the avatar (app_truth.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app_truth.h"

static enum em_result
allocate(struct app_truth *t, struct em_error *err)
{
    const size_t n = (size_t)t->bvh.joint_count;
    t->parent = malloc(n * sizeof *t->parent);
    t->ghost_m = malloc(n * sizeof *t->ghost_m);
    t->fk_position = malloc(n * sizeof *t->fk_position);
    t->fk_rotation = malloc(n * sizeof *t->fk_rotation);
    if (!t->parent || !t->ghost_m || !t->fk_position || !t->fk_rotation)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory for the clip's ghost");
    for (size_t j = 0; j < n; ++j)
        t->parent[j] = t->bvh.joints[j].parent;
    return EM_OK;
}

/* The rows as st_mocap_to_stream makes them: every step-th frame, 60 Hz or the clip's. */
static void
time_rows(struct app_truth *t)
{
    const long step = lround(1.0 / (t->bvh.frame_time_s * 60.0));
    t->step = step < 1 ? 1 : (int)step;
    t->row_count = (t->bvh.frame_count + t->step - 1) / t->step;
    t->row_s = t->bvh.frame_time_s * t->step;
    t->first_time_s = 0.0;
}

enum em_result
app_truth_load(const char *path, struct app_truth *out, char *why, size_t why_size,
               struct em_error *err)
{
    memset(out, 0, sizeof *out);
    enum em_result r = st_bvh_load(path, &out->bvh, err);
    if (r != EM_OK)
        return r;
    if (out->bvh.frame_count < 1) {
        app_truth_fini(out);
        return em_fail(err, EM_ERROR_PARSE, "%s: the clip has no frames", path);
    }
    out->unit_scale = st_bvh_guess_unit_scale(&out->bvh);
    time_rows(out);
    r = allocate(out, err);
    if (r != EM_OK) {
        app_truth_fini(out);
        return r;
    }
    struct em_error clip_err = {{0}};
    out->scored = ev_clip_load(path, 0, &out->clip, &clip_err) == EM_OK;
    if (out->scored) {
        out->first_time_s = out->clip.stream.frames[0].time_s;
        out->row_count = out->clip.truth.frame_count;
    } else if (why) {
        snprintf(why, why_size, "%s", clip_err.message);
    }
    app_truth_pose(out, 0);
    return EM_OK;
}

void
app_truth_fini(struct app_truth *truth)
{
    if (truth->scored)
        ev_clip_fini(&truth->clip);
    st_bvh_fini(&truth->bvh);
    free(truth->parent);
    free(truth->ghost_m);
    free(truth->fk_position);
    free(truth->fk_rotation);
    memset(truth, 0, sizeof *truth);
}

int
app_truth_row(const struct app_truth *truth, double time_s)
{
    if (truth->row_count < 1 || !(truth->row_s > 0.0) || !isfinite(time_s))
        return 0;
    const double rows = floor((time_s - truth->first_time_s) / truth->row_s + 0.5);
    const double wrapped = fmod(rows, (double)truth->row_count);
    const int row = (int)(wrapped < 0.0 ? wrapped + truth->row_count : wrapped);
    return row < truth->row_count ? row : truth->row_count - 1;
}

void
app_truth_pose(struct app_truth *truth, int row)
{
    int frame = row * truth->step;
    if (frame >= truth->bvh.frame_count)
        frame = truth->bvh.frame_count - 1;
    st_bvh_frame_pose(&truth->bvh, frame < 0 ? 0 : frame, truth->fk_position, truth->fk_rotation);
    for (int j = 0; j < truth->bvh.joint_count; ++j)
        for (int k = 0; k < 3; ++k)
            truth->ghost_m[j][k] = (float)(truth->fk_position[j][k] * truth->unit_scale);
}

bool
app_truth_error(const struct app_truth *truth, int row, const struct body *body,
                double out_cm[EV_GROUP_COUNT])
{
    if (!truth->scored || row < 0 || row >= truth->clip.truth.frame_count)
        return false;
    double ours[EV_JOINT_COUNT][3];
    if (ev_body_scored_positions(body, ours, NULL) != EM_OK)
        return false;
    ev_frame_error_cm((const double(*)[3])ours,
                      (const double(*)[3])truth->clip.truth.position_m[row], out_cm);
    return true;
}
