/*
 * The truth beside the avatar (issue 28): a motion capture clip played with
 * `--replay CLIP.bvh` is also the real motion the reconstruction is after. This keeps the
 * clip as the evaluation loads it (ev_clip_load: the true positions of the scored joints
 * at each 60 Hz row) for the HUD's errors, computed by the evaluation's own per-frame
 * function (ev_frame_error_cm), and the clip's whole skeleton posed frame by frame for the
 * ghost the mirror draws.
 *
 * Units: metres in the stream's tracking space (+Y up, floor at y = 0), centimetres for
 * errors, seconds for the stream's time.
 */
#ifndef EMBODY_APP_TRUTH_H
#define EMBODY_APP_TRUTH_H

#include <stdbool.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/result.h"
#include "embody/stream.h"

struct app_truth {
    struct ev_clip clip; /* the evaluation's clip: truth rows, known body, tracker axes */
    bool scored;         /* the clip has the scored joints (CMU names): errors are known */
    struct st_bvh bvh;   /* the clip, for the ghost */
    double unit_scale;   /* metres per file unit */
    int step;            /* clip frames per stream row (2 for 120 fps) */
    int row_count;       /* rows of the stream made from it */
    double first_time_s; /* the first row's time */
    double row_s;        /* time between rows */
    int *parent;         /* per joint of the clip, -1 for the root */
    float (*ghost_m)[3]; /* the clip's joints at the row last posed (app_truth_pose) */
    double (*fk_position)[3];
    double (*fk_rotation)[4];
};

/* Loads the clip at `path` (a BVH file). A clip without the evaluation's scored joints
 * still has a ghost (scored false, the reason in `why` when not NULL). Errors name the
 * file; `out` is the caller's to app_truth_fini, zeroed on failure. */
enum em_result app_truth_load(const char *path, struct app_truth *out, char *why, size_t why_size,
                              struct em_error *err);

void app_truth_fini(struct app_truth *truth);

/* The stream row of the frame at `time_s` (a looped replay's time runs on: the row is
 * taken modulo the clip's length). */
int app_truth_row(const struct app_truth *truth, double time_s);

/* Poses the ghost (ghost_m) at stream row `row`. */
void app_truth_pose(struct app_truth *truth, int row);

/* This frame's error of `body`'s pose against row `row`'s truth, cm per evaluation group
 * (EV_GROUP_ALL ...), as `embody eval` scores that row. False when the clip has no scored
 * joints or the body cannot be scored (a bone missing, a non-finite pose). */
bool app_truth_error(const struct app_truth *truth, int row, const struct body *body,
                     double out_cm[EV_GROUP_COUNT]);

#endif
