/* The avatars a run shows (app_lanes.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/app_args.h"
#include "app/app_lanes.h"
#include "embody/m_math.h"
#include "util/u_log.h"
#include "util/u_path.h"

/* Half the distance between two avatars side by side, per metre of height: arms held out
 * at the sides do not meet. */
#define SIDE_BY_SIDE_HALF_GAP_PER_M 0.32f
/* How quickly the side by side line turns after the body's facing (seconds). */
#define SIDE_BY_SIDE_TURN_S 1.0f

static const uint32_t k_setups[] = {ST_SETUP_3, ST_SETUP_4, ST_SETUP_6, ST_SETUP_8, ST_SETUP_11};
#define SETUP_COUNT ((int)(sizeof k_setups / sizeof k_setups[0]))

/* What a --compare item may be, the setups listed from k_setups: "a tracker setup (3, 4,
 * 6, 8 or 11), a body (prior, procedural) or a prior model file". */
#define COMPARE_ITEMS_MAX 160

static const char *
compare_items(char *text, size_t size)
{
    size_t n = (size_t)snprintf(text, size, "a tracker setup (");
    for (int s = 0; s < SETUP_COUNT && n < size; ++s) {
        char name[16];
        st_tracker_setup_name(k_setups[s], name, sizeof name);
        n += (size_t)snprintf(text + n, size - n, "%s%s",
                              s == 0 ? "" : (s == SETUP_COUNT - 1 ? " or " : ", "), name);
    }
    if (n < size)
        snprintf(text + n, size - n, "), a body (prior, procedural) or a prior model file");
    return text;
}

/* True when `text` is a whole number: meant as a tracker setup, not a file name. */
static bool
is_number(const char *text)
{
    return text[0] && strspn(text, "0123456789") == strlen(text);
}

enum em_result
app_lane_spec_parse(const char *text, struct app_lane_spec *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    char items[COMPARE_ITEMS_MAX];
    if (!text[0])
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--compare: an empty item; expected A,B: two of %s",
                       compare_items(items, sizeof items));
    if (strcmp(text, "prior") == 0 || strcmp(text, "procedural") == 0) {
        out->body = strcmp(text, "prior") == 0 ? 1 : 2;
        return EM_OK;
    }
    for (int s = 0; s < SETUP_COUNT; ++s) {
        char name[16];
        st_tracker_setup_name(k_setups[s], name, sizeof name);
        if (strcmp(text, name) == 0) {
            out->trackers_set = true;
            out->trackers = k_setups[s];
            return EM_OK;
        }
    }
    if (is_number(text))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--compare: %s is not a tracker setup; each item is %s", text,
                       compare_items(items, sizeof items));
    out->body = 1;
    out->model = text;
    return EM_OK;
}

static int
setup_index(uint32_t trackers)
{
    for (int s = 0; s < SETUP_COUNT; ++s)
        if (k_setups[s] == trackers)
            return s;
    return -1;
}

static void
lane_label(struct app_lane *lane, int index, int count, const char *model_name)
{
    char setup[96];
    if (lane->all_trackers)
        snprintf(setup, sizeof setup, "the recording's trackers");
    else {
        char name[80];
        st_tracker_setup_name(lane->trackers, name, sizeof name);
        snprintf(setup, sizeof setup, setup_index(lane->trackers) >= 0 ? "%s points" : "%s", name);
    }
    const char *body = lane->procedural ? "procedural" : "learned prior";
    if (count > 1)
        snprintf(lane->label, sizeof lane->label, "%c: %s · %s%s%s", 'A' + index, setup, body,
                 model_name ? " " : "", model_name ? model_name : "");
    else
        snprintf(lane->label, sizeof lane->label, "%s · %s", setup, body);
}

/* The default prior model, loaded once when P asks for it and the avatar has none. */
static const struct pr_model *
default_prior(struct app_lanes *lanes)
{
    if (lanes->avatar->has_prior)
        return &lanes->avatar->prior;
    if (lanes->has_default_prior)
        return &lanes->default_prior;
    char path[APP_PATH_MAX];
    struct em_error err = {{0}};
    if (!u_path_find_data(PR_DEFAULT_MODEL, path, sizeof path) ||
        pr_model_load(path, &lanes->default_prior, &err) != EM_OK) {
        U_LOG_W("the learned prior %s: %s", PR_DEFAULT_MODEL,
                err.message[0] ? err.message : "not found");
        return NULL;
    }
    lanes->has_default_prior = true;
    return &lanes->default_prior;
}

static enum em_result
build_body(struct app_lanes *lanes, struct app_lane *lane, struct em_error *err)
{
    struct body_desc desc;
    app_avatar_body_desc(lanes->avatar, &desc);
    desc.prior = lane->procedural ? NULL : lane->prior;
    /* The clip's own skeleton is eval's known body: its trackers sit as eval puts them. */
    if (lanes->known_mounts)
        ev_trackers_known_mounts(&lanes->truth->clip, desc.tracker_mount);
    body_destroy(&lane->body);
    return body_create(&desc, &lane->body, err);
}

static void
restart_mean(struct app_lane *lane)
{
    memset(lane->sum_cm, 0, sizeof lane->sum_cm);
    lane->frames = 0;
    lane->has_error = false;
}

static enum em_result
init_lane(struct app_lanes *lanes, int i, const struct app_lanes_desc *desc, struct em_error *err)
{
    struct app_lane *lane = &lanes->lane[i];
    const struct app_lane_spec *spec = &desc->spec[i];
    lane->trackers = spec->trackers_set ? spec->trackers : desc->trackers;
    lane->all_trackers = !spec->trackers_set && desc->all_trackers;
    const bool run_prior = lanes->avatar->has_prior;
    lane->procedural = spec->body == 2 || (spec->body == 0 && !run_prior);
    const char *model_name = NULL;
    if (spec->model) {
        if (app_check_readable("--compare", spec->model, err) != EM_OK) {
            char items[COMPARE_ITEMS_MAX];
            const size_t n = strlen(err->message);
            snprintf(err->message + n, sizeof err->message - n, " (each item is %s)",
                     compare_items(items, sizeof items));
            return EM_ERROR_IO;
        }
        if (pr_model_load(spec->model, &lane->own_prior, err) != EM_OK) {
            app_error_prefix(err, "--compare");
            return EM_ERROR_PARSE;
        }
        lane->has_own_prior = true;
        lane->prior = &lane->own_prior;
        model_name = strrchr(spec->model, '/') ? strrchr(spec->model, '/') + 1 : spec->model;
    } else if (!lane->procedural) {
        lane->prior = default_prior(lanes);
        if (!lane->prior)
            return em_fail(err, EM_ERROR_IO,
                           "--compare: prior: the learned prior %s cannot be "
                           "loaded (see the warning)",
                           PR_DEFAULT_MODEL);
    }
    lane_label(lane, i, desc->count, model_name);
    enum em_result r = build_body(lanes, lane, err);
    if (r == EM_OK && desc->count > 1)
        r = sk_pose_init(&lane->shown, body_skeleton(lane->body));
    return r;
}

enum em_result
app_lanes_init(struct app_lanes *out, const struct app_lanes_desc *desc, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    out->avatar = desc->avatar;
    out->truth = desc->truth;
    out->known_mounts = desc->truth && desc->truth->scored && desc->avatar_is_clip;
    out->count = desc->count < 1 ? 1 : (desc->count > APP_MAX_LANES ? APP_MAX_LANES : desc->count);
    out->last_time_s = (double)NAN;
    for (int i = 0; i < out->count; ++i) {
        const enum em_result r = init_lane(out, i, desc, err);
        if (r != EM_OK)
            return r;
    }
    return EM_OK;
}

void
app_lanes_fini(struct app_lanes *lanes)
{
    for (int i = 0; i < APP_MAX_LANES; ++i) {
        struct app_lane *lane = &lanes->lane[i];
        body_destroy(&lane->body);
        sk_pose_fini(&lane->shown);
        if (lane->has_own_prior)
            pr_model_fini(&lane->own_prior);
    }
    if (lanes->has_default_prior)
        pr_model_fini(&lanes->default_prior);
    memset(lanes, 0, sizeof *lanes);
}

void
app_lane_mask(const struct app_lane *lane, const struct em_tracking_frame *frame,
              struct em_tracking_frame *out)
{
    *out = *frame;
    if (lane->all_trackers)
        return;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        if (!(lane->trackers & EM_TRACKER_BIT(t))) {
            out->tracker_present &= ~EM_TRACKER_BIT(t);
            out->tracker[t].flags = 0;
        }
}

static void
score(struct app_lanes *lanes, struct app_lane *lane, int row)
{
    lane->has_error = app_truth_error(lanes->truth, row, lane->body, lane->error_cm);
    if (!lane->has_error)
        return;
    for (int g = 0; g < EV_GROUP_COUNT; ++g)
        lane->sum_cm[g] += lane->error_cm[g];
    lane->frames++;
}

void
app_lanes_update(struct app_lanes *lanes, const struct em_tracking_frame *frame,
                 const struct em_tracking_frame *first)
{
    /* A paused replay gives the same frame again: not a new sample of the mean. */
    const bool repeated = lanes->scored_any && frame->time_s == lanes->last_time_s;
    const int row = lanes->truth ? app_truth_row(lanes->truth, frame->time_s) : 0;
    for (int i = 0; i < lanes->count; ++i) {
        struct app_lane *lane = &lanes->lane[i];
        if (i == 0 && first)
            lane->frame = *first;
        else
            app_lane_mask(lane, frame, &lane->frame);
        body_update(lane->body, &lane->frame);
        if (lanes->truth && !repeated)
            score(lanes, lane, row);
    }
    lanes->last_time_s = frame->time_s;
    lanes->scored_any = true;
}

void
app_lanes_next_setup(struct app_lanes *lanes, char *message, size_t size)
{
    struct app_lane *lane = &lanes->lane[0];
    const int at = lane->all_trackers ? -1 : setup_index(lane->trackers);
    lane->trackers = k_setups[(at + 1) % SETUP_COUNT];
    lane->all_trackers = false;
    restart_mean(lane);
    lane_label(lane, 0, lanes->count, NULL);
    snprintf(message, size, "tracker setup: %s", lane->label);
}

void
app_lanes_next_body(struct app_lanes *lanes, char *message, size_t size)
{
    struct app_lane *lane = &lanes->lane[0];
    const struct pr_model *prior = lane->procedural ? default_prior(lanes) : NULL;
    if (lane->procedural && !prior) {
        snprintf(message, size, "no learned prior to switch to (%s: see the log)",
                 PR_DEFAULT_MODEL);
        return;
    }
    lane->procedural = !lane->procedural;
    if (prior)
        lane->prior = prior;
    struct em_error err = {{0}};
    if (build_body(lanes, lane, &err) != EM_OK) {
        snprintf(message, size, "cannot build the body: %.200s", err.message);
        U_LOG_E("%s", message);
        return;
    }
    restart_mean(lane);
    lane_label(lane, 0, lanes->count, NULL);
    snprintf(message, size, "body: %s", lane->label);
}

void
app_lanes_follow_calibration(struct app_lanes *lanes, const struct em_tracking_frame *frame)
{
    for (int i = 1; i < lanes->count; ++i) {
        struct em_tracking_frame masked;
        app_lane_mask(&lanes->lane[i], frame, &masked);
        struct em_error err = {{0}};
        if (body_calibrate(lanes->lane[i].body, &masked, &err) != EM_OK)
            U_LOG_W("avatar %c: calibration failed: %s", 'A' + i, err.message);
    }
}

void
app_lanes_follow_recenter(struct app_lanes *lanes)
{
    for (int i = 1; i < lanes->count; ++i)
        body_recenter(lanes->lane[i].body);
}

/* The side by side line turns after the first body's facing, slowly, so the two stay
 * side by side in the mirror as the player turns without swinging at every step. */
static void
follow_heading(struct app_lanes *lanes)
{
    struct body_status status;
    body_get_status(lanes->lane[0].body, &status);
    if (!isfinite(status.heading_rad))
        return;
    if (!lanes->have_heading) {
        lanes->heading_rad = status.heading_rad;
        lanes->have_heading = true;
        return;
    }
    const float k = 1.0f - expf(-(1.0f / 60.0f) / SIDE_BY_SIDE_TURN_S);
    lanes->heading_rad = m_angle_wrap(lanes->heading_rad +
                                      m_angle_wrap(status.heading_rad - lanes->heading_rad) * k);
}

void
app_lanes_place(struct app_lanes *lanes)
{
    if (lanes->count < 2)
        return;
    follow_heading(lanes);
    const float half =
        SIDE_BY_SIDE_HALF_GAP_PER_M * sk_humanoid_height(body_skeleton(lanes->lane[0].body));
    /* The body's right: facing (sin h, 0, cos h) crossed with up. */
    const float right[3] = {-cosf(lanes->heading_rad), 0.0f, sinf(lanes->heading_rad)};
    for (int i = 0; i < lanes->count; ++i) {
        struct app_lane *lane = &lanes->lane[i];
        const float side = i == 0 ? -half : half;
        m_vec3_scale(right, side, lane->offset_m);
        const struct sk_pose *pose = body_pose(lane->body);
        sk_pose_copy(pose, &lane->shown);
        for (int j = 0; j < lane->shown.joint_count; ++j)
            m_vec3_add(lane->shown.position_m[j], lane->offset_m, lane->shown.position_m[j]);
    }
}

void
app_lanes_hud(const struct app_lanes *lanes, int i, struct render_hud_lane *out)
{
    memset(out, 0, sizeof *out);
    const struct app_lane *lane = &lanes->lane[i];
    out->label = lane->label;
    out->has_error = lane->has_error;
    out->mean_frames = lane->frames;
    for (int g = 0; g < EV_GROUP_COUNT && g < RENDER_ERROR_GROUPS; ++g) {
        out->error_cm[g] = (float)lane->error_cm[g];
        out->mean_cm[g] = lane->frames > 0 ? (float)(lane->sum_cm[g] / (double)lane->frames) : 0.0f;
    }
}
