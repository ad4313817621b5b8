/*
 * XrBodyTrackerFB: one embody body per tracker, updated at the times the application asks
 * for (XrBodyJointsLocateInfoFB::time, normally the predicted display time) from the
 * head and grips located at that time in the layer's own space (STAGE, else LOCAL), and
 * returned in the application's base space.
 *
 * Settings: lyr_settings.c. Calibration: a fixed height (the settings) is kept; without
 * one the body starts at 1.75 m and calibrates itself from the headset's height over the
 * first 3 s of tracking (as the headless program does), and again after each recentring
 * (XrEventDataReferenceSpaceChangePending); each calibration bumps skeletonChangedCount.
 * Without STAGE the same height places the floor instead (lyr_input_set_floor).
 *
 * Flags: every joint of an active body is VALID; only the head (headset), the wrists and
 * palms (controllers) and the bones body trackers hold are TRACKED, and only while their
 * device is. The rest is inferred. Confidence is the share of the three devices tracked.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "layer/lyr_internal.h"
#include "util/u_log.h"
#include "util/u_path.h"

#define DEFAULT_HEIGHT_M 1.75f
#define PATH_MAX_LEN 4096

/* Where a hand's fingers come from. */
enum finger_source {
    FINGERS_RELAXED = 0,
    FINGERS_TRACKED,    /* hand tracking through the hand model */
    FINGERS_CONTROLLER, /* the controller's inputs, as curls */
};

struct lyr_tracker {
    struct lyr_session *session;
    uint32_t joint_count;
    struct body *body;
    struct lyr_joint_pose *joints; /* joint_count, in the layer's space, of the last update */
    XrSpaceLocationFlags *flags;   /* joint_count, of the last update */
    struct sk_pose rest;           /* the fitted skeleton at rest, for xrGetBodySkeletonFB */
    bool updated;
    XrTime first_time;
    XrTime last_time;
    struct em_tracking_frame last_frame;
    uint32_t skeleton_changed;
    struct in_height_estimator *estimator; /* while calibrating from the headset */
    double estimate_start_s;               /* the first frame the estimator was given */
    /* The fingers (enum hd_hand), under the session's lock like the rest: the hand model,
     * its last good tracked finger poses, the pose last given (held while it blends out),
     * its source (enum finger_source; relaxed until one gives a pose) and its weight over
     * the relaxed hand (update_hands). */
    struct hd_model hand_model[HD_HAND_COUNT];
    struct hd_tracking_state hand_state[HD_HAND_COUNT];
    struct hd_pose hand_pose[HD_HAND_COUNT];
    enum finger_source hand_source[HD_HAND_COUNT];
    float hand_weight[HD_HAND_COUNT];
};

/* The longest the layer gathers the headset's height before it calibrates. */
#define CALIBRATE_WITHIN_S 3.0

/* ---- Lifetime ------------------------------------------------------------------------- */

void
lyr_tracker_free(struct lyr_tracker *t)
{
    if (!t)
        return;
    body_destroy(&t->body);
    sk_pose_fini(&t->rest);
    free(t->joints);
    free(t->flags);
    free(t->estimator);
    free(t);
}

/* Gathers the headset's height over the first seconds: for the player's height (STAGE,
 * unless it is fixed) or for the floor (LOCAL, decided once the spaces exist). */
static void
start_estimate(struct lyr_tracker *t)
{
    if (!t->estimator)
        t->estimator = malloc(sizeof *t->estimator);
    t->estimate_start_s = -1.0;
    if (t->estimator) {
        struct body_desc desc;
        body_get_desc(t->body, &desc);
        in_height_estimator_init(t->estimator, desc.offsets.head_position_m, desc.floor_height_m);
    }
}

static void
refresh_rest(struct lyr_tracker *t)
{
    sk_pose_set_rest(&t->rest, body_skeleton(t->body));
    t->skeleton_changed++;
}

/* xrCreateBodyTrackerFB with the session locked. */
static XrResult
create_body_tracker(struct lyr_session *s, const XrBodyTrackerCreateInfoFB *info,
                    XrBodyTrackerFB *out_tracker)
{
    if (!info || info->type != XR_TYPE_BODY_TRACKER_CREATE_INFO_FB || !out_tracker)
        return XR_ERROR_VALIDATION_FAILURE;
    const uint32_t count = lyr_joint_count(info->bodyJointSet);
    if (count == 0 || (count == XR_FULL_BODY_JOINT_COUNT_META && !s->instance->full_body))
        return XR_ERROR_VALIDATION_FAILURE;
    int slot = -1;
    for (int i = 0; i < LYR_MAX_TRACKERS && slot < 0; ++i)
        if (!s->trackers[i])
            slot = i;
    if (slot < 0)
        return XR_ERROR_LIMIT_REACHED;

    const struct lyr_settings *st = &s->instance->settings;
    struct body_desc desc = st->body;
    desc.skeleton = &st->skeleton;
    desc.height_m = st->fixed_height_m > 0.0f ? st->fixed_height_m : DEFAULT_HEIGHT_M;
    desc.prior = st->has_prior ? &st->prior : NULL;
    struct lyr_tracker *t = calloc(1, sizeof *t);
    struct em_error err = {{0}};
    if (!t)
        return XR_ERROR_OUT_OF_MEMORY;
    t->session = s;
    t->joint_count = count;
    t->joints = calloc(count, sizeof *t->joints);
    t->flags = calloc(count, sizeof *t->flags);
    XrResult r = XR_SUCCESS;
    if (!t->joints || !t->flags)
        r = XR_ERROR_OUT_OF_MEMORY;
    else if (body_create(&desc, &t->body, &err) != EM_OK) {
        U_LOG_E("openxr layer: %s", err.message);
        r = XR_ERROR_RUNTIME_FAILURE;
    } else if (sk_pose_init(&t->rest, body_skeleton(t->body)) != EM_OK)
        r = XR_ERROR_OUT_OF_MEMORY;
    for (int h = 0; h < HD_HAND_COUNT && XR_SUCCEEDED(r); ++h) {
        const struct hd_model_desc hand = {.hand = (enum hd_hand)h};
        if (hd_model_init(&hand, &t->hand_model[h], &err) != EM_OK) {
            U_LOG_E("openxr layer: %s", err.message);
            r = XR_ERROR_RUNTIME_FAILURE;
        }
        hd_tracking_state_init(&t->hand_state[h]);
    }
    if (XR_FAILED(r)) {
        lyr_tracker_free(t);
        return r;
    }
    refresh_rest(t);
    start_estimate(t);
    s->trackers[slot] = t;
    *out_tracker = (XrBodyTrackerFB)t;
    return XR_SUCCESS;
}

XrResult XRAPI_CALL
lyr_create_body_tracker(XrSession session, const XrBodyTrackerCreateInfoFB *info,
                        XrBodyTrackerFB *out_tracker)
{
    struct lyr_session *s = lyr_session_lock(session);
    if (!s)
        return XR_ERROR_HANDLE_INVALID;
    const XrResult r = create_body_tracker(s, info, out_tracker);
    lyr_session_unlock(s);
    return r;
}

XrResult XRAPI_CALL
lyr_destroy_body_tracker(XrBodyTrackerFB handle)
{
    struct lyr_tracker *t = NULL;
    struct lyr_session *s = lyr_tracker_lock(handle, &t);
    if (!s)
        return XR_ERROR_HANDLE_INVALID;
    for (int i = 0; i < LYR_MAX_TRACKERS; ++i)
        if (s->trackers[i] == t)
            s->trackers[i] = NULL;
    lyr_tracker_free(t);
    lyr_session_unlock(s);
    return XR_SUCCESS;
}

/* ---- Calibration ------------------------------------------------------------------------ */

static float
body_height(const struct lyr_tracker *t)
{
    struct body_status status;
    body_get_status(t->body, &status);
    return status.height_m;
}

/* While estimating: once the window is full, calibrates on the frame with the headset at
 * the standing eye height (a glance down at the start does not decide). In LOCAL space,
 * where the floor is unknown, that height places the floor instead (as the program's
 * calibration does there), the player's height staying. Returns true when the layer's
 * space moved (the frame must be located again). */
static bool
calibrate_step(struct lyr_tracker *t, const struct em_tracking_frame *frame)
{
    struct lyr_session *s = t->session;
    if (t->estimator && !s->local && s->instance->settings.fixed_height_m > 0.0f) {
        free(t->estimator); /* STAGE and a fixed height: nothing to estimate */
        t->estimator = NULL;
    }
    if (!t->estimator)
        return false;
    if (t->estimate_start_s < 0.0)
        t->estimate_start_s = frame->time_s;
    /* Calibrate once the head was held still long enough, or after CALIBRATE_WITHIN_S
     * whatever the player did (the estimate then uses every height it saw): a session
     * must not wait for a still head that never comes. */
    const bool confident = in_height_estimator_add(t->estimator, frame);
    if (!confident && frame->time_s - t->estimate_start_s < CALIBRATE_WITHIN_S)
        return false;
    /* The headset's height when the head was held still standing: the skull base the
     * estimator found, plus the headset's offset above it. */
    float height_m = 0.0f, skull_m = 0.0f;
    struct em_error estimate_err = {{0}};
    const bool estimated =
        in_height_estimate(t->estimator, &height_m, &skull_m, &estimate_err) == EM_OK;
    free(t->estimator);
    t->estimator = NULL;
    if (!estimated) {
        U_LOG_W("openxr layer: no height from the headset: %s", estimate_err.message);
        return false;
    }
    struct body_desc desc;
    body_get_desc(t->body, &desc);
    const float eye_y = desc.floor_height_m + skull_m + desc.offsets.head_position_m[1];
    if (s->local) {
        const float floor = s->floor_local_m + eye_y - body_eye_height_for(body_height(t));
        if (XR_FAILED(lyr_input_set_floor(s, floor)))
            return false;
        U_LOG_I("openxr layer: the floor %.2f m below LOCAL's origin (from the headset)",
                (double)-floor);
        body_reset(t->body);
        return true;
    }
    struct em_tracking_frame standing = *frame;
    standing.device[EM_DEVICE_HEAD].pose.position_m[1] = eye_y;
    struct em_error err = {{0}};
    if (body_calibrate(t->body, &standing, &err) == EM_OK) {
        struct body_status status;
        body_get_status(t->body, &status);
        U_LOG_I("openxr layer: calibrated from the headset: height %.2f m",
                (double)status.height_m);
        refresh_rest(t);
    } else {
        U_LOG_W("openxr layer: calibration failed: %s", err.message);
    }
    return false;
}

/* LOCAL space before any estimate: the floor a standing eye height below the headset. */
static bool
first_floor(struct lyr_tracker *t, const struct em_tracking_frame *frame)
{
    struct lyr_session *s = t->session;
    const struct em_device_pose *head = &frame->device[EM_DEVICE_HEAD];
    if (!s->local || s->floor_known || !em_device_pose_usable(head))
        return false;
    const float floor =
        s->floor_local_m + head->pose.position_m[1] - body_eye_height_for(body_height(t));
    return XR_SUCCEEDED(lyr_input_set_floor(s, floor));
}

void
lyr_trackers_recalibrate(struct lyr_session *s)
{
    for (int i = 0; i < LYR_MAX_TRACKERS; ++i) {
        struct lyr_tracker *t = s->trackers[i];
        if (!t)
            continue;
        body_reset(t->body);
        start_estimate(t);
    }
    s->floor_known = false; /* LOCAL moved with the recentring: placed again */
}

/* ---- Locating ------------------------------------------------------------------------- */

static float
floor_y(const struct lyr_tracker *t)
{
    return t->session->instance->settings.body.floor_height_m;
}

/* VALID for every joint; TRACKED where a tracked device holds the joint: the headset
 * the head, a controller its wrist and palm, a body tracker the body uses fully its bone. */
static void
update_flags(struct lyr_tracker *t)
{
    const XrSpaceLocationFlags tracked_bits =
        XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT | XR_SPACE_LOCATION_POSITION_TRACKED_BIT;
    for (uint32_t i = 0; i < t->joint_count; ++i) {
        t->flags[i] =
            XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT;
        const int driver = lyr_joint_driver(i);
        if (driver >= 1 && driver <= EM_DEVICE_COUNT &&
            em_device_pose_usable(&t->last_frame.device[driver - 1]))
            t->flags[i] |= t->last_frame.device[driver - 1].flags & tracked_bits;
    }
    struct body_tracker_status status[EM_TRACKER_COUNT];
    body_get_trackers(t->body, status);
    for (int k = 0; k < EM_TRACKER_COUNT; ++k) {
        const int joint = lyr_tracker_joint(k, t->joint_count);
        if (joint >= 0 && status[k].present && status[k].state == BODY_DEVICE_TRACKED &&
            status[k].weight >= 1.0f)
            t->flags[joint] |= t->last_frame.tracker[k].flags & tracked_bits;
    }
}

/* Hand `h`'s tracked joints through the hand model (hd_pose_from_tracking refuses absurd
 * joints one by one; a finger with one keeps its last good pose): false when the hand is
 * not tracked (no hand tracking, the hand inactive, its wrist or knuckles refused). */
static bool
tracked_pose(struct lyr_tracker *t, int h, XrTime time, struct hd_pose *out)
{
    struct hd_xr_hand joints;
    if (!lyr_input_locate_hand(t->session, h, time, &joints) || !joints.active)
        return false;
    struct hd_tracking_report report;
    hd_pose_from_tracking(&t->hand_model[h], &joints, &t->hand_state[h], out, &report);
    /* Every finger fell back: the hand's frame itself was refused. */
    return report.fallback_mask != (1u << HD_FINGER_COUNT) - 1u;
}

/* Hand `h`'s fingers from its controller's inputs (as the program makes them): false
 * while they are not active or its grip is not tracked (a controller put down). */
static bool
controller_pose(struct lyr_tracker *t, int h, const struct em_tracking_frame *frame,
                struct hd_pose *out)
{
    struct hd_controller_input input;
    const struct hd_profile *profile = NULL;
    const struct em_device_pose *grip = &frame->device[EM_DEVICE_LEFT_HAND + h];
    if (!em_device_pose_usable(grip) || !(grip->flags & EM_POSE_POSITION_TRACKED) ||
        !lyr_input_read_fingers(t->session, h, &input, &profile))
        return false;
    struct hd_curls curls;
    hd_curls_from_controller(profile, &input, &curls);
    hd_pose_from_curls(&t->hand_model[h], &curls, out);
    return true;
}

/* The fingers at `time` (the session's lock held), each hand from the first source that
 * has them: hand tracking, else the controller's inputs, else the relaxed hand. One
 * blend carries every change of source, the weight of the shown pose over the relaxed
 * hand (moved by 1 / HD_HANDOVER_S a second of application time): it rises while the
 * pose's source gives it, falls (the last pose held) while it does not. A change from
 * one source straight to the other waits until the old pose has blended out, then the
 * new one blends in: the fingers pass through the relaxed hand, never jump. */
static void
update_hands(struct lyr_tracker *t, XrTime time, const struct em_tracking_frame *frame,
             struct lyr_hand_shape *out_hands)
{
    const float dt_s = t->updated ? (float)((double)(time - t->last_time) * 1e-9) : 0.0f;
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        struct hd_pose pose;
        enum finger_source source = FINGERS_RELAXED;
        if (tracked_pose(t, h, time, &pose))
            source = FINGERS_TRACKED;
        else if (controller_pose(t, h, frame, &pose))
            source = FINGERS_CONTROLLER;
        const bool takes_over =
            source != FINGERS_RELAXED && (source == t->hand_source[h] || t->hand_weight[h] <= 0.0f);
        if (takes_over) {
            t->hand_pose[h] = pose;
            t->hand_source[h] = source;
        }
        const float step = dt_s / HD_HANDOVER_S;
        float w = t->hand_weight[h] + (takes_over ? step : -step);
        w = w < 0.0f ? 0.0f : (w > 1.0f ? 1.0f : w);
        if (takes_over && !t->updated)
            w = 1.0f; /* given from the first frame: nothing to blend from */
        t->hand_weight[h] = t->hand_source[h] != FINGERS_RELAXED ? w : 0.0f;
        out_hands[h] = (struct lyr_hand_shape){
            .model = &t->hand_model[h], .pose = &t->hand_pose[h], .weight = t->hand_weight[h]};
    }
}

/* Brings the body to `time` (once per new time; an older or equal time keeps the body). */
static XrResult
update(struct lyr_tracker *t, XrTime time)
{
    if (t->updated && time <= t->last_time)
        return XR_SUCCESS;
    struct em_tracking_frame frame;
    const XrTime first = t->updated ? t->first_time : time;
    const struct em_tracking_frame *last = t->updated ? &t->last_frame : NULL;
    XrResult r = lyr_input_locate(t->session, time, last, &frame);
    frame.time_s = (double)(time - first) * 1e-9;
    if (XR_SUCCEEDED(r) && (first_floor(t, &frame) || calibrate_step(t, &frame))) {
        r = lyr_input_locate(t->session, time, last, &frame); /* in the space as it is now */
        frame.time_s = (double)(time - first) * 1e-9;
    }
    if (XR_FAILED(r))
        return r;
    t->first_time = first;
    body_update(t->body, &frame);
    struct body_status status;
    body_get_status(t->body, &status);
    struct lyr_hand_shape hands[HD_HAND_COUNT];
    update_hands(t, time, &frame, hands);
    lyr_joints_from_pose(body_skeleton(t->body), body_pose(t->body), status.heading_rad, floor_y(t),
                         t->joint_count, hands, t->joints);
    t->last_frame = frame;
    t->last_time = time;
    t->updated = true;
    update_flags(t);
    return XR_SUCCESS;
}

static void
fill_inactive(XrBodyJointLocationsFB *locations)
{
    locations->isActive = XR_FALSE;
    locations->confidence = 0.0f;
    for (uint32_t i = 0; i < locations->jointCount; ++i) {
        locations->jointLocations[i].locationFlags = 0;
        locations->jointLocations[i].pose = (XrPosef){.orientation.w = 1.0f};
    }
}

/* base <- layer space: p' = R p + t, q' = R q. */
static void
to_base(const XrPosef *T_base_ref, const struct lyr_joint_pose *j, XrPosef *out)
{
    versor R = {T_base_ref->orientation.x, T_base_ref->orientation.y, T_base_ref->orientation.z,
                T_base_ref->orientation.w};
    vec3 p;
    glm_quat_rotatev(R, (float *)j->position_m, p);
    versor q;
    glm_quat_mul(R, (float *)j->rotation, q);
    out->position = (XrVector3f){p[0] + T_base_ref->position.x, p[1] + T_base_ref->position.y,
                                 p[2] + T_base_ref->position.z};
    out->orientation = (XrQuaternionf){q[0], q[1], q[2], q[3]};
}

/* xrLocateBodyJointsFB with the tracker's session locked. */
static XrResult
locate_body_joints(struct lyr_tracker *t, const XrBodyJointsLocateInfoFB *info,
                   XrBodyJointLocationsFB *locations)
{
    if (!info || info->type != XR_TYPE_BODY_JOINTS_LOCATE_INFO_FB || !locations ||
        locations->type != XR_TYPE_BODY_JOINT_LOCATIONS_FB ||
        locations->jointCount != t->joint_count || !locations->jointLocations)
        return XR_ERROR_VALIDATION_FAILURE;
    if (info->baseSpace == XR_NULL_HANDLE)
        return XR_ERROR_HANDLE_INVALID;
    if (info->time <= 0)
        return XR_ERROR_TIME_INVALID;
    struct lyr_session *s = t->session;
    locations->skeletonChangedCount = t->skeleton_changed;
    locations->time = info->time;
    if (!lyr_input_ready(s)) {
        fill_inactive(locations);
        return XR_SUCCESS;
    }
    if (!s->app_syncs)
        lyr_input_sync_own(s);
    XrResult r = update(t, info->time);
    if (XR_FAILED(r))
        return r;
    XrSpaceLocation base = {.type = XR_TYPE_SPACE_LOCATION};
    r = s->instance->next.locate_space(s->reference, info->baseSpace, info->time, &base);
    if (XR_FAILED(r))
        return r;
    const XrSpaceLocationFlags both =
        XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT;
    const struct em_device_pose *head = &t->last_frame.device[EM_DEVICE_HEAD];
    locations->skeletonChangedCount = t->skeleton_changed;
    if ((base.locationFlags & both) != both || !em_device_pose_usable(head)) {
        fill_inactive(locations);
        return r;
    }
    int tracked = 0;
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        tracked += (t->last_frame.device[d].flags & EM_POSE_POSITION_TRACKED) != 0;
    locations->isActive = XR_TRUE;
    locations->confidence = (float)tracked / (float)EM_DEVICE_COUNT;
    for (uint32_t i = 0; i < t->joint_count; ++i) {
        to_base(&base.pose, &t->joints[i], &locations->jointLocations[i].pose);
        locations->jointLocations[i].locationFlags = t->flags[i];
    }
    return r;
}

XrResult XRAPI_CALL
lyr_locate_body_joints(XrBodyTrackerFB handle, const XrBodyJointsLocateInfoFB *info,
                       XrBodyJointLocationsFB *locations)
{
    struct lyr_tracker *t = NULL;
    struct lyr_session *s = lyr_tracker_lock(handle, &t);
    if (!s)
        return XR_ERROR_HANDLE_INVALID;
    const XrResult r = locate_body_joints(t, info, locations);
    lyr_session_unlock(s);
    return r;
}

/* xrGetBodySkeletonFB with the tracker's session locked. */
static XrResult
get_body_skeleton(struct lyr_tracker *t, XrBodySkeletonFB *skeleton)
{
    if (!skeleton || skeleton->type != XR_TYPE_BODY_SKELETON_FB ||
        skeleton->jointCount != t->joint_count || !skeleton->joints)
        return XR_ERROR_VALIDATION_FAILURE;
    /* The rest pose with the root at the origin on the floor (y = 0), facing +Z. */
    struct lyr_joint_pose *rest = calloc(t->joint_count, sizeof *rest);
    if (!rest)
        return XR_ERROR_OUT_OF_MEMORY;
    lyr_joints_from_pose(body_skeleton(t->body), &t->rest, 0.0f, 0.0f, t->joint_count, NULL, rest);
    const XrPosef identity = {.orientation.w = 1.0f};
    const vec3 root = {rest[0].position_m[0], 0.0f, rest[0].position_m[2]};
    for (uint32_t i = 0; i < t->joint_count; ++i) {
        struct lyr_joint_pose j = rest[i];
        glm_vec3_sub(j.position_m, (float *)root, j.position_m);
        skeleton->joints[i].joint = (int32_t)i;
        skeleton->joints[i].parentJoint = lyr_joint_parent(i);
        to_base(&identity, &j, &skeleton->joints[i].pose);
    }
    free(rest);
    return XR_SUCCESS;
}

XrResult XRAPI_CALL
lyr_get_body_skeleton(XrBodyTrackerFB handle, XrBodySkeletonFB *skeleton)
{
    struct lyr_tracker *t = NULL;
    struct lyr_session *s = lyr_tracker_lock(handle, &t);
    if (!s)
        return XR_ERROR_HANDLE_INVALID;
    const XrResult r = get_body_skeleton(t, skeleton);
    lyr_session_unlock(s);
    return r;
}
