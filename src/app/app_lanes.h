/*
 * The avatars a run shows (issue 28): one, or two side by side with --compare A,B. Each
 * is a body of its own fed the same tracking, through its own tracker setup (the body
 * trackers it is given: 3, 4, 6, 8 or 11 points, or all a recording has) and its own body
 * (the learned prior, a model file of it, or the procedural estimate). Keys switch the
 * first avatar's setup (K) and body (P) while a replay plays; each avatar's error against
 * a replayed clip's truth is kept for the HUD, this frame and the mean so far.
 */
#ifndef EMBODY_APP_LANES_H
#define EMBODY_APP_LANES_H

#include <stdbool.h>
#include <stdint.h>

#include "app/app_avatar.h"
#include "app/app_truth.h"
#include "embody/body.h"
#include "embody/prior.h"
#include "render/render.h"
#include "embody/tracking.h"

#define APP_MAX_LANES RENDER_MAX_LANES

/* What one avatar is, as --compare's item (or the plain options) asks. */
struct app_lane_spec {
    bool trackers_set; /* false: the run's own setup (--trackers, or all a file has) */
    uint32_t trackers; /* EM_TRACKER_BIT each */
    int body;          /* 0 the run's own (--body), 1 the learned prior, 2 procedural */
    const char *model; /* a prior model file (implies the prior), or NULL */
};

/* Parses one --compare item: "3" ... "11" a setup, "prior" or "procedural" a body,
 * anything else a prior model file (checked when loaded). */
enum em_result app_lane_spec_parse(const char *text, struct app_lane_spec *out,
                                   struct em_error *err);

struct app_lane {
    struct body *body;
    uint32_t trackers; /* the setup given to the body */
    bool all_trackers; /* a stream file's own trackers, whatever they are (until K) */
    bool procedural;
    const struct pr_model *prior; /* NULL when procedural */
    struct pr_model own_prior;    /* a --compare model file */
    bool has_own_prior;
    char label[160];
    float offset_m[3];    /* where it is drawn, from where it is */
    struct sk_pose shown; /* its pose moved by offset_m (two lanes only) */
    bool has_error;
    double error_cm[EV_GROUP_COUNT];
    double sum_cm[EV_GROUP_COUNT];
    long frames;
    struct em_tracking_frame frame; /* the frame it was given (its setup's trackers) */
};

struct app_lanes {
    int count;
    struct app_lane lane[APP_MAX_LANES];
    struct app_avatar *avatar;     /* the avatar every lane's body is built for */
    const struct app_truth *truth; /* a replayed clip, or NULL */
    bool known_mounts; /* the avatar is the clip's own skeleton: eval's tracker mounts */
    struct pr_model default_prior; /* loaded when P asks for the prior without one */
    bool has_default_prior;
    double last_time_s; /* the last frame scored (a paused replay repeats it) */
    bool scored_any;
    float heading_rad; /* the facing the side by side offsets follow, smoothed */
    bool have_heading;
};

/* Everything a run's lanes are built from. */
struct app_lanes_desc {
    struct app_avatar *avatar;
    const struct app_truth *truth; /* NULL: no truth */
    bool avatar_is_clip;           /* the avatar is the replayed clip's own skeleton */
    int count;                     /* 1, or 2 for --compare */
    struct app_lane_spec spec[APP_MAX_LANES];
    uint32_t trackers; /* the run's own setup */
    bool all_trackers; /* the run's own setup is a file's trackers */
};

/* Builds each lane's body (the prior, or a model file, loaded as asked). Errors name the
 * --compare item. `out` is the caller's to app_lanes_fini (also on failure). */
enum em_result app_lanes_init(struct app_lanes *out, const struct app_lanes_desc *desc,
                              struct em_error *err);

void app_lanes_fini(struct app_lanes *lanes);

/* Gives each lane `frame` with its setup's trackers only (the first lane `first` instead,
 * when not NULL: the frame as the program has it, already masked), updates its body, and
 * scores it against the truth's row for the frame's time (a repeated time is not scored
 * again). */
void app_lanes_update(struct app_lanes *lanes, const struct em_tracking_frame *frame,
                      const struct em_tracking_frame *first);

/* The frame with only the trackers of `lane`'s setup. */
void app_lane_mask(const struct app_lane *lane, const struct em_tracking_frame *frame,
                   struct em_tracking_frame *out);

/* K: the first lane's next named setup (3, 4, 6, 8, 11, 3 ...); its mean starts again.
 * Writes what happened to `message`. */
void app_lanes_next_setup(struct app_lanes *lanes, char *message, size_t size);

/* P: the first lane's other body (prior <-> procedural), built afresh; its mean starts
 * again. Writes what happened (or why not) to `message`. */
void app_lanes_next_body(struct app_lanes *lanes, char *message, size_t size);

/* Calibrates (C) or recenters (R) every lane's body but the first, which the caller does. */
void app_lanes_follow_calibration(struct app_lanes *lanes, const struct em_tracking_frame *frame);
void app_lanes_follow_recenter(struct app_lanes *lanes);

/* With two lanes: each one's pose moved sideways by its offset (the two side by side,
 * across the first body's facing), for drawing. */
void app_lanes_place(struct app_lanes *lanes);

/* The HUD's line for lane `i`. */
void app_lanes_hud(const struct app_lanes *lanes, int i, struct render_hud_lane *out);

#endif
