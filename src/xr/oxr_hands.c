/*
 * Each hand's fingers and wrist: hand tracking (XR_EXT_hand_tracking, when the runtime
 * offers it and the system tracks hands), the controller, or nothing.
 *
 * Fingers, per hand and frame: from hand tracking while the runtime tracks the hand and
 * src/hand's conversion accepts at least one finger (each joint is checked there: not
 * tracked, not finite, too far from the wrist, a bad radius or orientation, on top of its
 * neighbour; a refused finger keeps its last good pose); else from the controller's
 * inputs (hd_curls_from_controller for its interaction profile) while they are bound and
 * active; else the relaxed hand. A change of source blends over HD_HANDOVER_S
 * (hd_pose_blend), so the fingers never jump.
 *
 * Wrist: the controller's grip pose while the controller is there and not idle; else the
 * grip pose hand tracking gives (the palm joint's position, the wrist joint's orientation
 * turned to the grip's axes) while the wrist and palm joints are accepted; else lost: no
 * flags and the last pose kept, as for a controller that loses tracking, so the body
 * coasts and returns as it does for controllers. A controller is idle when it was put
 * down: it has lain still (within OXR_IDLE_MOVE_M) for OXR_IDLE_S while the tracked hand
 * was more than OXR_IDLE_APART_M from it; it stays idle until it moves. A change between
 * the controller and hand tracking fades the difference of the two poses out over
 * HD_HANDOVER_S, so the wrist moves at most that difference over the frames of the
 * handover, not in one step.
 */
#include <math.h>
#include <string.h>

#include "embody/m_math.h"
#include "util/u_log.h"
#include "util/u_time.h"
#include "xr/oxr_internal.h"

#define OXR_IDLE_MOVE_M 0.01f
#define OXR_IDLE_S 1.0
#define OXR_IDLE_APART_M 0.10f

static const char *const k_side[OXR_HAND_COUNT] = {"left", "right"};

void
oxr_hands_init(struct oxr_source *ox)
{
    for (int h = 0; h < OXR_HAND_COUNT; ++h) {
        struct oxr_hand *hand = &ox->hand[h];
        const struct hd_model_desc desc = {.hand = h == 0 ? HD_LEFT : HD_RIGHT};
        const enum em_result r = hd_model_init(&desc, &hand->model, NULL);
        (void)r;
        hd_tracking_state_init(&hand->tracking);
        hd_pose_relaxed(&hand->model, &hand->pose);
        m_quat_identity(hand->given.pose.orientation);
        st_fingers_set_pose(&ox->fingers, (enum hd_hand)h, &hand->pose);
        ox->fingers.valid[h] = false;
    }
}

enum em_result
oxr_hands_load(struct oxr_source *ox, struct em_error *err)
{
    ox->hand_tracking = false;
    ox->create_hand_tracker = NULL;
    ox->destroy_hand_tracker = NULL;
    ox->locate_hand_joints = NULL;
    if (!ox->ext.hand_tracking)
        return EM_OK;
    XrSystemHandTrackingPropertiesEXT hand_props = {
        .type = XR_TYPE_SYSTEM_HAND_TRACKING_PROPERTIES_EXT};
    XrSystemProperties props = {.type = XR_TYPE_SYSTEM_PROPERTIES, .next = &hand_props};
    if (XR_FAILED(OXR_CHECK(ox, xrGetSystemProperties(ox->instance, ox->system, &props))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    if (!hand_props.supportsHandTracking) {
        U_LOG_I("openxr: the runtime offers hand tracking, but this headset does not track "
                "hands");
        return EM_OK;
    }
    PFN_xrVoidFunction fn[3] = {NULL, NULL, NULL};
    static const char *const names[3] = {"xrCreateHandTrackerEXT", "xrDestroyHandTrackerEXT",
                                         "xrLocateHandJointsEXT"};
    for (int i = 0; i < 3; ++i)
        if (XR_FAILED(OXR_CHECK(ox, xrGetInstanceProcAddr(ox->instance, names[i], &fn[i]))) ||
            !fn[i])
            return em_fail(err, EM_ERROR_RUNTIME, "%s (%s)", ox->last_failure, names[i]);
    ox->create_hand_tracker = (PFN_xrCreateHandTrackerEXT)fn[0];
    ox->destroy_hand_tracker = (PFN_xrDestroyHandTrackerEXT)fn[1];
    ox->locate_hand_joints = (PFN_xrLocateHandJointsEXT)fn[2];
    ox->hand_tracking = true;
    U_LOG_I("openxr: hand tracking offered (XR_EXT_hand_tracking)");
    return EM_OK;
}

enum em_result
oxr_hands_create_trackers(struct oxr_source *ox, struct em_error *err)
{
    for (int h = 0; h < OXR_HAND_COUNT; ++h) {
        ox->hand[h].tracker = XR_NULL_HANDLE;
        ox->hand[h].active = false;
    }
    if (!ox->hand_tracking)
        return EM_OK;
    for (int h = 0; h < OXR_HAND_COUNT; ++h) {
        const XrHandTrackerCreateInfoEXT info = {.type = XR_TYPE_HAND_TRACKER_CREATE_INFO_EXT,
                                                 .hand = h == 0 ? XR_HAND_LEFT_EXT
                                                                : XR_HAND_RIGHT_EXT,
                                                 .handJointSet = XR_HAND_JOINT_SET_DEFAULT_EXT};
        if (XR_FAILED(OXR_CHECK(ox, ox->create_hand_tracker(ox->session, &info,
                                                            &ox->hand[h].tracker)))) {
            ox->hand[h].tracker = XR_NULL_HANDLE;
            return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
        }
    }
    return EM_OK;
}

void
oxr_hands_destroy_trackers(struct oxr_source *ox)
{
    for (int h = 0; h < OXR_HAND_COUNT; ++h) {
        if (ox->hand[h].tracker != XR_NULL_HANDLE && ox->destroy_hand_tracker)
            OXR_CHECK(ox, ox->destroy_hand_tracker(ox->hand[h].tracker));
        ox->hand[h].tracker = XR_NULL_HANDLE;
        ox->hand[h].active = false;
    }
}

/* The 26 joints of the frame into `out`, field by field; false when the call failed. */
static bool
locate_joints(struct oxr_source *ox, struct oxr_hand *hand, struct hd_xr_hand *out)
{
    XrHandJointLocationEXT joints[XR_HAND_JOINT_COUNT_EXT];
    memset(joints, 0, sizeof joints);
    const XrHandJointsLocateInfoEXT info = {.type = XR_TYPE_HAND_JOINTS_LOCATE_INFO_EXT,
                                            .baseSpace = ox->base_space,
                                            .time = ox->frame_time};
    XrHandJointLocationsEXT locations = {.type = XR_TYPE_HAND_JOINT_LOCATIONS_EXT,
                                         .jointCount = XR_HAND_JOINT_COUNT_EXT,
                                         .jointLocations = joints};
    if (XR_FAILED(OXR_CHECK(ox, ox->locate_hand_joints(hand->tracker, &info, &locations))))
        return false;
    oxr_hand_joints_from_locations(&locations, out);
    return true;
}

/* The grip pose a tracked hand gives: the palm joint's position, the wrist joint's
 * orientation turned to the grip's axes (+X the palm's normal, away from the left palm
 * and into the right one; -Z through the fist from the little finger to the thumb; +Y
 * back along the hand). False when the wrist or palm was refused or the wrist's
 * orientation is not valid. */
static bool
grip_from_tracking(int h, const struct hd_xr_hand *joints, const struct hd_tracking_report *rep,
                   struct em_device_pose *out)
{
    const struct hd_xr_joint_location *wrist = &joints->joint[HD_XR_WRIST];
    const struct hd_xr_joint_location *palm = &joints->joint[HD_XR_PALM];
    if (!joints->active || rep->fault[HD_XR_WRIST] != HD_JOINT_OK ||
        rep->fault[HD_XR_PALM] != HD_JOINT_OK || !(wrist->flags & EM_POSE_ORIENTATION_VALID))
        return false;
    /* The grip's axes in the wrist frame (columns). */
    static const float cols[OXR_HAND_COUNT][3][3] = {
        {{0.0f, -1.0f, 0.0f}, {0.0f, 0.0f, 1.0f}, {-1.0f, 0.0f, 0.0f}},
        {{0.0f, 1.0f, 0.0f}, {0.0f, 0.0f, 1.0f}, {1.0f, 0.0f, 0.0f}},
    };
    float grip_in_wrist[4];
    m_quat_from_columns(cols[h][0], cols[h][1], cols[h][2], grip_in_wrist);
    m_quat_mul(wrist->orientation, grip_in_wrist, out->pose.orientation);
    m_quat_normalize(out->pose.orientation);
    m_vec3_copy(palm->position_m, out->pose.position_m);
    out->flags = (wrist->flags & (EM_POSE_ORIENTATION_VALID | EM_POSE_ORIENTATION_TRACKED)) |
                 (palm->flags & (EM_POSE_POSITION_VALID | EM_POSE_POSITION_TRACKED));
    return true;
}

static const char *
source_name(enum oxr_hand_source s)
{
    return s == OXR_HAND_TRACKING ? "hand tracking" : s == OXR_HAND_CONTROLLER ? "controller"
                                                                               : "none";
}

/* Whether the controller was put down (see the top of the file). */
static void
update_idle(struct oxr_hand *hand, double time_s, bool controller_usable,
            const struct em_device_pose *grip, bool tracked, const struct em_device_pose *tracked_grip)
{
    if (!controller_usable) {
        hand->still_known = false;
        hand->idle = false;
        return;
    }
    if (!hand->still_known ||
        m_vec3_distance(grip->pose.position_m, hand->still_at_m) > OXR_IDLE_MOVE_M) {
        m_vec3_copy(grip->pose.position_m, hand->still_at_m);
        hand->still_since_s = time_s;
        hand->still_known = true;
        hand->idle = false;
        return;
    }
    if (!hand->idle && tracked && time_s - hand->still_since_s > OXR_IDLE_S &&
        m_vec3_distance(grip->pose.position_m, tracked_grip->pose.position_m) > OXR_IDLE_APART_M)
        hand->idle = true;
}

/* Starts fading out the difference `from` less `to`. */
static void
set_handover(struct oxr_hand *hand, const struct em_device_pose *from,
             const struct em_device_pose *to, double time_s)
{
    m_vec3_sub(from->pose.position_m, to->pose.position_m, hand->handover_offset_m);
    float inv[4];
    m_quat_conjugate(to->pose.orientation, inv);
    m_quat_mul(from->pose.orientation, inv, hand->handover_rotation);
    m_quat_normalize(hand->handover_rotation);
    hand->handover_start_s = time_s;
}

/* The wrist: chooses its source and gives its pose, handing over smoothly. */
static void
update_wrist(struct oxr_hand *hand, int h, double time_s, bool controller_active,
             bool controller_usable, bool tracked,
             const struct em_device_pose *tracked_grip, struct em_device_pose *inout_grip)
{
    /* A controller that is there but not fully tracked still gives what it has (its
     * flags say what) unless hand tracking has the wrist. */
    const bool controller = controller_active && !hand->idle && (controller_usable || !tracked);
    const enum oxr_hand_source source = controller ? OXR_HAND_CONTROLLER
                                        : tracked  ? OXR_HAND_TRACKING
                                                   : OXR_HAND_NONE;
    if (source != hand->wrist_source) {
        U_LOG_I("openxr: %s wrist: %s -> %s", k_side[h], source_name(hand->wrist_source),
                source_name(source));
        const struct em_device_pose *target =
            source == OXR_HAND_TRACKING ? tracked_grip : inout_grip;
        /* Between two live sources: fade out their difference, measured at one instant
         * (the last frame's, or this one's when the new source was not there then), so
         * the hand's own motion is not mistaken for it. After a loss the body returns
         * the hand as it does for a controller. */
        hand->handing_over = source != OXR_HAND_NONE && hand->wrist_source != OXR_HAND_NONE &&
                             hand->given_valid && em_device_pose_usable(target);
        if (hand->handing_over) {
            const struct em_device_pose *last_new =
                source == OXR_HAND_TRACKING ? &hand->last_tracked : &hand->last_controller;
            if (em_device_pose_usable(last_new))
                set_handover(hand, &hand->given, last_new, time_s);
            else if (source == OXR_HAND_CONTROLLER && tracked)
                set_handover(hand, tracked_grip, target, time_s);
            else
                set_handover(hand, &hand->given, target, time_s);
        }
        hand->wrist_source = source;
    }
    struct em_device_pose out;
    if (source == OXR_HAND_NONE) {
        /* Lost: no flags, the last pose given kept. */
        out = hand->given_valid ? hand->given : *inout_grip;
        out.flags = 0;
    } else {
        out = source == OXR_HAND_TRACKING ? *tracked_grip : *inout_grip;
        if (hand->handing_over) {
            const float w = (float)((time_s - hand->handover_start_s) / (double)HD_HANDOVER_S);
            if (w >= 1.0f || !(w >= 0.0f)) {
                hand->handing_over = false;
            } else {
                const float keep = 1.0f - w;
                m_vec3_muladd(out.pose.position_m, hand->handover_offset_m, keep,
                              out.pose.position_m);
                float identity[4], part[4], q[4];
                m_quat_identity(identity);
                m_quat_slerp(identity, hand->handover_rotation, keep, part);
                m_quat_mul(part, out.pose.orientation, q);
                m_quat_normalize(q);
                m_quat_copy(q, out.pose.orientation);
            }
        }
    }
    hand->given = out;
    hand->given_valid = hand->given_valid || em_device_pose_usable(&out);
    hand->last_tracked = *tracked_grip;
    if (!tracked)
        hand->last_tracked.flags = 0;
    hand->last_controller = *inout_grip;
    if (!controller_usable)
        hand->last_controller.flags = 0;
    *inout_grip = out;
}

/* The fingers: chooses their source and gives their pose, blending a change. */
static void
update_fingers(struct oxr_source *ox, struct oxr_hand *hand, int h, double time_s,
               const struct oxr_hand_controller *controller, bool tracked,
               const struct hd_pose *tracked_pose)
{
    const bool from_controller =
        controller->grip_active && controller->fingers_active && !hand->idle;
    const enum oxr_hand_source source = tracked           ? OXR_HAND_TRACKING
                                        : from_controller ? OXR_HAND_CONTROLLER
                                                          : OXR_HAND_NONE;
    struct hd_pose target;
    if (source == OXR_HAND_TRACKING) {
        target = *tracked_pose;
    } else if (source == OXR_HAND_CONTROLLER) {
        struct hd_curls curls;
        hd_curls_from_controller(hd_profile_find(ox->hand_profile[h]), &controller->input,
                                 &curls);
        hd_pose_from_curls(&hand->model, &curls, &target);
    } else {
        hd_pose_relaxed(&hand->model, &target);
    }
    if (source != hand->finger_source) {
        U_LOG_I("openxr: %s fingers: %s -> %s", k_side[h], source_name(hand->finger_source),
                source_name(source));
        hand->blend_from = hand->pose;
        hand->finger_blend_start_s = time_s;
        hand->finger_blending = true;
        hand->finger_source = source;
    }
    if (hand->finger_blending) {
        const float w = (float)((time_s - hand->finger_blend_start_s) / (double)HD_HANDOVER_S);
        hand->finger_blending = w >= 0.0f && w < 1.0f;
        hd_pose_blend(&hand->blend_from, &target, hand->finger_blending ? w : 1.0f, &hand->pose);
    } else {
        hand->pose = target;
    }
    st_fingers_set_pose(&ox->fingers, (enum hd_hand)h, &hand->pose);
    /* The relaxed hand nobody drives is not a known hand (the stream's valid 0). */
    ox->fingers.valid[h] = source != OXR_HAND_NONE || hand->finger_blending;
}

bool
oxr_hands_update(struct oxr_source *ox, int h, double time_s,
                 const struct oxr_hand_controller *controller, struct em_device_pose *inout_grip)
{
    struct oxr_hand *hand = &ox->hand[h];
    struct hd_xr_hand joints;
    memset(&joints, 0, sizeof joints);
    if (hand->tracker != XR_NULL_HANDLE && !locate_joints(ox, hand, &joints))
        return false;
    const int64_t start_ns = u_time_now_ns();
    struct hd_pose tracked_pose = hand->pose;
    if (joints.active)
        hd_pose_from_tracking(&hand->model, &joints, &hand->tracking, &tracked_pose,
                              &hand->report);
    else
        memset(&hand->report, 0, sizeof hand->report); /* nothing located, nothing refused */
    const uint32_t all = (1u << HD_FINGER_COUNT) - 1u;
    const bool fingers_tracked = joints.active && hand->report.fallback_mask != all;
    struct em_device_pose tracked_grip = {.flags = 0};
    const bool wrist_tracked = grip_from_tracking(h, &joints, &hand->report, &tracked_grip);
    if (joints.active != hand->active)
        U_LOG_I("openxr: %s hand %s", k_side[h],
                joints.active ? "tracked" : "no longer tracked");
    hand->active = joints.active;

    const bool controller_usable = controller->grip_active && em_device_pose_usable(inout_grip);
    update_idle(hand, time_s, controller_usable, inout_grip, wrist_tracked, &tracked_grip);
    update_wrist(hand, h, time_s, controller->grip_active, controller_usable, wrist_tracked,
                 &tracked_grip, inout_grip);
    update_fingers(ox, hand, h, time_s, controller, fingers_tracked, &tracked_pose);
    hand->update_ns = u_time_now_ns() - start_ns;
    return true;
}
