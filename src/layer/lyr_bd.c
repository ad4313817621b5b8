/*
 * XR_BD_body_tracking through the layer (lyr_bd.h).
 *
 * A BD tracker owns one of the layer's full-body trackers (84 joints in Meta's frames)
 * and that tracker's T-pose (xrGetBodySkeletonFB, fetched again whenever its
 * skeletonChangedCount moves). Each BD joint stands on the FB / META joint at the same
 * place whose bone runs the same way; its rotation is that joint's turn from the T-pose
 * applied to the specification's T-pose frame (lyr_frames_meta_to_bd). Flags, positions
 * and times are the full-body tracker's.
 *
 * The BD trackers sit in one table behind one lock, which finds them; each has its own
 * lock, held for its whole use (two threads may locate one tracker at once). No lock of
 * this file is held while the full-body tracker's functions run, except the tracker's own
 * (taken after the table's, never before it), so whatever locks those take, the order is
 * one way. A tracker whose session ended (lyr_bd_session_end) stays in the table, dead:
 * its handle is refused, and a later creation frees it (its full-body tracker went with
 * the session).
 */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "layer/lyr_bd.h"
#include "layer/lyr_joint_frames.h"

#define MAX_BD_TRACKERS 16
#define FULL XR_FULL_BODY_JOINT_COUNT_META

struct bd_tracker {
    pthread_mutex_t lock;
    bool dead; /* its session ended */
    const struct lyr_session *session;
    XrBodyTrackerFB body; /* the full-body tracker it stands on */
    uint32_t joint_count; /* 16 or 24 */
    bool have_tpose;
    uint32_t tpose_changed; /* the skeletonChangedCount the T-pose was fetched at */
    XrQuaternionf tpose[FULL];
    XrBodyJointLocationFB located[FULL];
    XrBodySkeletonJointFB skeleton[FULL];
};

static pthread_mutex_t g_bd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bd_tracker *g_bd[MAX_BD_TRACKERS];

uint32_t
lyr_bd_source_joint(uint32_t bd_joint)
{
    static const uint32_t k_source[XR_BODY_JOINT_COUNT_BD] = {
        [XR_BODY_JOINT_PELVIS_BD] = XR_BODY_JOINT_HIPS_FB,
        [XR_BODY_JOINT_LEFT_HIP_BD] = XR_FULL_BODY_JOINT_LEFT_UPPER_LEG_META,
        [XR_BODY_JOINT_RIGHT_HIP_BD] = XR_FULL_BODY_JOINT_RIGHT_UPPER_LEG_META,
        [XR_BODY_JOINT_SPINE1_BD] = XR_BODY_JOINT_SPINE_LOWER_FB,
        [XR_BODY_JOINT_LEFT_KNEE_BD] = XR_FULL_BODY_JOINT_LEFT_LOWER_LEG_META,
        [XR_BODY_JOINT_RIGHT_KNEE_BD] = XR_FULL_BODY_JOINT_RIGHT_LOWER_LEG_META,
        [XR_BODY_JOINT_SPINE2_BD] = XR_BODY_JOINT_SPINE_UPPER_FB,
        [XR_BODY_JOINT_LEFT_ANKLE_BD] = XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META,
        [XR_BODY_JOINT_RIGHT_ANKLE_BD] = XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META,
        [XR_BODY_JOINT_SPINE3_BD] = XR_BODY_JOINT_CHEST_FB,
        [XR_BODY_JOINT_LEFT_FOOT_BD] = XR_FULL_BODY_JOINT_LEFT_FOOT_BALL_META,
        [XR_BODY_JOINT_RIGHT_FOOT_BD] = XR_FULL_BODY_JOINT_RIGHT_FOOT_BALL_META,
        [XR_BODY_JOINT_NECK_BD] = XR_BODY_JOINT_NECK_FB,
        [XR_BODY_JOINT_LEFT_COLLAR_BD] = XR_BODY_JOINT_LEFT_SHOULDER_FB,
        [XR_BODY_JOINT_RIGHT_COLLAR_BD] = XR_BODY_JOINT_RIGHT_SHOULDER_FB,
        [XR_BODY_JOINT_HEAD_BD] = XR_BODY_JOINT_HEAD_FB,
        [XR_BODY_JOINT_LEFT_SHOULDER_BD] = XR_BODY_JOINT_LEFT_ARM_UPPER_FB,
        [XR_BODY_JOINT_RIGHT_SHOULDER_BD] = XR_BODY_JOINT_RIGHT_ARM_UPPER_FB,
        [XR_BODY_JOINT_LEFT_ELBOW_BD] = XR_BODY_JOINT_LEFT_ARM_LOWER_FB,
        [XR_BODY_JOINT_RIGHT_ELBOW_BD] = XR_BODY_JOINT_RIGHT_ARM_LOWER_FB,
        [XR_BODY_JOINT_LEFT_WRIST_BD] = XR_BODY_JOINT_LEFT_HAND_WRIST_FB,
        [XR_BODY_JOINT_RIGHT_WRIST_BD] = XR_BODY_JOINT_RIGHT_HAND_WRIST_FB,
        /* SMPL's hand joint is at the knuckles: the middle finger's. */
        [XR_BODY_JOINT_LEFT_HAND_BD] = XR_BODY_JOINT_LEFT_HAND_MIDDLE_PROXIMAL_FB,
        [XR_BODY_JOINT_RIGHT_HAND_BD] = XR_BODY_JOINT_RIGHT_HAND_MIDDLE_PROXIMAL_FB,
    };
    assert(bd_joint < XR_BODY_JOINT_COUNT_BD);
    return k_source[bd_joint];
}

/* The slot of a live tracker, under g_bd_lock; -1 when there is none. */
static int
bd_slot(XrBodyTrackerBD handle)
{
    for (int i = 0; i < MAX_BD_TRACKERS; ++i)
        if (g_bd[i] && !g_bd[i]->dead && (XrBodyTrackerBD)g_bd[i] == handle)
            return i;
    return -1;
}

/* The live tracker of a handle, locked; NULL when there is none. */
static struct bd_tracker *
bd_find_locked(XrBodyTrackerBD handle)
{
    pthread_mutex_lock(&g_bd_lock);
    const int slot = bd_slot(handle);
    struct bd_tracker *t = slot >= 0 ? g_bd[slot] : NULL;
    if (t)
        pthread_mutex_lock(&t->lock);
    pthread_mutex_unlock(&g_bd_lock);
    return t;
}

/* Frees a tracker out of the table, once no call uses it. */
static void
bd_free(struct bd_tracker *t)
{
    pthread_mutex_lock(&t->lock);
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

XrResult XRAPI_CALL
lyr_create_body_tracker_bd(XrSession session, const XrBodyTrackerCreateInfoBD *info,
                           XrBodyTrackerBD *out_tracker)
{
    /* The session's address only names it (lyr_bd_session_end); the FB tracker below
     * takes the session's lock itself. */
    struct lyr_session *s = lyr_session_lock(session);
    if (!s)
        return XR_ERROR_HANDLE_INVALID;
    pthread_mutex_unlock(&s->lock);
    if (!info || info->type != XR_TYPE_BODY_TRACKER_CREATE_INFO_BD || !out_tracker ||
        (info->jointSet != XR_BODY_JOINT_SET_BODY_WITHOUT_ARM_BD &&
         info->jointSet != XR_BODY_JOINT_SET_FULL_BODY_JOINTS_BD))
        return XR_ERROR_VALIDATION_FAILURE;
    struct bd_tracker *t = calloc(1, sizeof *t);
    if (!t)
        return XR_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&t->lock, NULL);
    t->session = s;
    t->joint_count = info->jointSet == XR_BODY_JOINT_SET_FULL_BODY_JOINTS_BD
                         ? XR_BODY_JOINT_COUNT_BD
                         : XR_BODY_JOINT_WITHOUT_ARM_COUNT_BD;
    const XrBodyTrackerCreateInfoFB body_info = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB,
                                                 .bodyJointSet = XR_BODY_JOINT_SET_FULL_BODY_META};
    const XrResult r = lyr_create_body_tracker(session, &body_info, &t->body);
    if (XR_FAILED(r)) {
        bd_free(t);
        return r;
    }
    /* A free slot, or one of a dead tracker (freed here). */
    struct bd_tracker *dead = NULL;
    pthread_mutex_lock(&g_bd_lock);
    int slot = -1;
    for (int i = 0; i < MAX_BD_TRACKERS && slot < 0; ++i)
        if (!g_bd[i] || g_bd[i]->dead)
            slot = i;
    if (slot >= 0) {
        dead = g_bd[slot];
        g_bd[slot] = t;
    }
    pthread_mutex_unlock(&g_bd_lock);
    if (dead)
        bd_free(dead);
    if (slot < 0) {
        lyr_destroy_body_tracker(t->body);
        bd_free(t);
        return XR_ERROR_LIMIT_REACHED;
    }
    *out_tracker = (XrBodyTrackerBD)t;
    return XR_SUCCESS;
}

XrResult XRAPI_CALL
lyr_destroy_body_tracker_bd(XrBodyTrackerBD handle)
{
    pthread_mutex_lock(&g_bd_lock);
    const int slot = bd_slot(handle);
    struct bd_tracker *t = slot >= 0 ? g_bd[slot] : NULL;
    if (t)
        g_bd[slot] = NULL;
    pthread_mutex_unlock(&g_bd_lock);
    if (!t)
        return XR_ERROR_HANDLE_INVALID;
    lyr_destroy_body_tracker(t->body);
    bd_free(t);
    return XR_SUCCESS;
}

void
lyr_bd_session_end(const struct lyr_session *s)
{
    pthread_mutex_lock(&g_bd_lock);
    for (int i = 0; i < MAX_BD_TRACKERS; ++i)
        if (g_bd[i] && g_bd[i]->session == s)
            g_bd[i]->dead = true; /* its full-body tracker goes with the session */
    pthread_mutex_unlock(&g_bd_lock);
}

/* Fetches the T-pose again when the body tracker's skeleton changed (or never was). */
static XrResult
refresh_tpose(struct bd_tracker *t, uint32_t changed)
{
    if (t->have_tpose && t->tpose_changed == changed)
        return XR_SUCCESS;
    XrBodySkeletonFB skeleton = {
        .type = XR_TYPE_BODY_SKELETON_FB, .jointCount = FULL, .joints = t->skeleton};
    const XrResult r = lyr_get_body_skeleton(t->body, &skeleton);
    if (XR_FAILED(r))
        return r;
    for (uint32_t j = 0; j < FULL; ++j)
        t->tpose[j] = t->skeleton[j].pose.orientation;
    t->have_tpose = true;
    t->tpose_changed = changed;
    return XR_SUCCESS;
}

static void
to_bd(const struct bd_tracker *t, uint32_t source, XrBodyJointLocationBD *out)
{
    const XrBodyJointLocationFB *from = &t->located[source];
    out->locationFlags = from->locationFlags;
    out->pose = from->pose;
    if (!(from->locationFlags & XR_SPACE_LOCATION_ORIENTATION_VALID_BIT))
        return;
    const XrQuaternionf *a = &from->pose.orientation, *b = &t->tpose[source];
    versor located = {a->x, a->y, a->z, a->w}, tpose = {b->x, b->y, b->z, b->w}, q;
    lyr_frames_meta_to_bd(located, tpose, q);
    out->pose.orientation = (XrQuaternionf){q[0], q[1], q[2], q[3]};
}

XrResult XRAPI_CALL
lyr_locate_body_joints_bd(XrBodyTrackerBD handle, const XrBodyJointsLocateInfoBD *info,
                          XrBodyJointLocationsBD *locations)
{
    struct bd_tracker *t = bd_find_locked(handle);
    XrResult r = XR_SUCCESS;
    if (!t)
        r = XR_ERROR_HANDLE_INVALID;
    else if (!info || info->type != XR_TYPE_BODY_JOINTS_LOCATE_INFO_BD || !locations ||
             locations->type != XR_TYPE_BODY_JOINT_LOCATIONS_BD ||
             locations->jointLocationCount != t->joint_count || !locations->jointLocations)
        r = XR_ERROR_VALIDATION_FAILURE;
    XrBodyJointLocationsFB body = {.type = XR_TYPE_BODY_JOINT_LOCATIONS_FB,
                                   .jointCount = FULL,
                                   .jointLocations = t ? t->located : NULL};
    if (XR_SUCCEEDED(r)) {
        const XrBodyJointsLocateInfoFB body_info = {.type = XR_TYPE_BODY_JOINTS_LOCATE_INFO_FB,
                                                    .baseSpace = info->baseSpace,
                                                    .time = info->time};
        r = lyr_locate_body_joints(t->body, &body_info, &body);
    }
    if (XR_SUCCEEDED(r)) {
        const XrResult rs = refresh_tpose(t, body.skeletonChangedCount);
        r = XR_FAILED(rs) ? rs : r;
    }
    if (XR_SUCCEEDED(r)) {
        const XrSpaceLocationFlags all_tracked =
            XR_SPACE_LOCATION_ORIENTATION_TRACKED_BIT | XR_SPACE_LOCATION_POSITION_TRACKED_BIT;
        bool tracked = body.isActive == XR_TRUE;
        for (uint32_t j = 0; j < t->joint_count; ++j) {
            to_bd(t, lyr_bd_source_joint(j), &locations->jointLocations[j]);
            tracked = tracked &&
                      (locations->jointLocations[j].locationFlags & all_tracked) == all_tracked;
        }
        locations->allJointPosesTracked = tracked ? XR_TRUE : XR_FALSE;
    }
    if (t)
        pthread_mutex_unlock(&t->lock);
    return r;
}
