/*
 * The joint frames the layer hands out, through the real Khronos loader and the test
 * runtime, checked the way the applications written for them read them:
 *
 *   - XR_FB_body_tracking / XR_META_body_tracking_full_body as Godot's OpenXR vendors
 *     plug-in reads Meta's runtime: each joint's rotation times a fixed rotation per
 *     joint (its table, below) must give Godot's humanoid frames, every bone's +Y along
 *     the bone to its child and the hips' +X to the body's left;
 *   - XR_BD_body_tracking as its specification states: at the T-pose every joint with
 *     +X to the body's right, +Y up, +Z to its back, and a joint's rotation its turn from
 *     there, so a bone's T-pose direction turned by its joint's rotation runs along it.
 *
 * On every frame of a real clip (not only at rest), in xrGetBodySkeletonFB's T-pose, and
 * for a body that stands in the T-pose (a stream made from that skeleton).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cglm/cglm.h>

#include "embody/stream.h"
#include "layer_app.h"
#include "xr_test_util.h"

#define CLIP EMBODY_SOURCE_DIR "/tests/data/streams/cmu_05_04.csv"
#define HEIGHT "1.70"
#define FB XR_BODY_JOINT_COUNT_FB
#define FULL XR_FULL_BODY_JOINT_COUNT_META
#define BD XR_BODY_JOINT_COUNT_BD
#define LIMIT_DEG 10.0

static struct la_app *g_app;

static int
teardown(void **state)
{
    (void)state;
    if (g_app)
        la_destroy(g_app);
    g_app = NULL;
    return 0;
}

/* ---- Godot's reading of Meta's joints --------------------------------------------------- */

/* The fixed rotation (x, y, z, w) Godot's vendors plug-in applies to a joint of Meta's
 * runtime (openxr_fb_body_tracking_extension.cpp's table, as published): Godot's frame =
 * joint rotation * this. */
#define H 0.70710678f
static const float k_spine[4] = {-0.5f, 0.5f, 0.5f, 0.5f};
static const float k_left_shoulder[4] = {0, 0, H, H};
static const float k_left_upper_arm[4] = {-H, H, 0, 0};
static const float k_left_hand[4] = {0.5f, -0.5f, -0.5f, -0.5f}; /* lower arm, hand, fingers */
static const float k_right_shoulder[4] = {H, H, 0, 0};
static const float k_right_upper_arm[4] = {0, 0, -H, H};
static const float k_right_hand[4] = {0.5f, 0.5f, -0.5f, 0.5f};
static const float k_left_upper_leg[4] = {0.5f, -0.5f, 0.5f, 0.5f};
static const float k_left_lower_leg[4] = {-0.5f, 0.5f, 0.5f, 0.5f};
static const float k_left_foot[4] = {-0.5f, -0.5f, -0.5f, 0.5f};
static const float k_left_toes[4] = {0.5f, 0.5f, -0.5f, 0.5f};
static const float k_right_upper_leg[4] = {-0.5f, -0.5f, -0.5f, 0.5f};
static const float k_right_lower_leg[4] = {0.5f, 0.5f, -0.5f, 0.5f};
static const float k_right_foot[4] = {0.5f, -0.5f, 0.5f, 0.5f};
static const float k_right_toes[4] = {-0.5f, 0.5f, 0.5f, 0.5f};

/* Godot's table rotation of an FB / META joint, or NULL where the plug-in maps none. */
static const float *
godot_rotation(int j)
{
    if (j >= XR_BODY_JOINT_HIPS_FB && j <= XR_BODY_JOINT_HEAD_FB &&
        j != XR_BODY_JOINT_SPINE_MIDDLE_FB)
        return k_spine;
    switch (j) {
    case XR_BODY_JOINT_LEFT_SHOULDER_FB: return k_left_shoulder;
    case XR_BODY_JOINT_LEFT_ARM_UPPER_FB: return k_left_upper_arm;
    case XR_BODY_JOINT_LEFT_ARM_LOWER_FB: return k_left_hand;
    case XR_BODY_JOINT_RIGHT_SHOULDER_FB: return k_right_shoulder;
    case XR_BODY_JOINT_RIGHT_ARM_UPPER_FB: return k_right_upper_arm;
    case XR_BODY_JOINT_RIGHT_ARM_LOWER_FB: return k_right_hand;
    case XR_FULL_BODY_JOINT_LEFT_UPPER_LEG_META: return k_left_upper_leg;
    case XR_FULL_BODY_JOINT_LEFT_LOWER_LEG_META: return k_left_lower_leg;
    case XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META: return k_left_foot;
    case XR_FULL_BODY_JOINT_LEFT_FOOT_BALL_META: return k_left_toes;
    case XR_FULL_BODY_JOINT_RIGHT_UPPER_LEG_META: return k_right_upper_leg;
    case XR_FULL_BODY_JOINT_RIGHT_LOWER_LEG_META: return k_right_lower_leg;
    case XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META: return k_right_foot;
    case XR_FULL_BODY_JOINT_RIGHT_FOOT_BALL_META: return k_right_toes;
    default: break;
    }
    if (j >= XR_BODY_JOINT_LEFT_HAND_PALM_FB && j < XR_BODY_JOINT_RIGHT_HAND_PALM_FB)
        return k_left_hand;
    if (j >= XR_BODY_JOINT_RIGHT_HAND_PALM_FB && j < FB)
        return k_right_hand;
    return NULL;
}

/* A bone of Godot's humanoid as FB / META joints: the joint and the joint its +Y points
 * at (the next of Godot's bones; joints Godot skips lie on the line between). */
struct bone {
    int joint, child;
};

static int
godot_bones(bool legs, struct bone *out)
{
    int n = 0;
    static const struct bone k_body[] = {
        {XR_BODY_JOINT_HIPS_FB, XR_BODY_JOINT_SPINE_LOWER_FB},
        {XR_BODY_JOINT_SPINE_LOWER_FB, XR_BODY_JOINT_SPINE_UPPER_FB},
        {XR_BODY_JOINT_SPINE_UPPER_FB, XR_BODY_JOINT_CHEST_FB},
        {XR_BODY_JOINT_CHEST_FB, XR_BODY_JOINT_NECK_FB},
        {XR_BODY_JOINT_NECK_FB, XR_BODY_JOINT_HEAD_FB},
        {XR_BODY_JOINT_LEFT_SHOULDER_FB, XR_BODY_JOINT_LEFT_ARM_UPPER_FB},
        {XR_BODY_JOINT_LEFT_ARM_UPPER_FB, XR_BODY_JOINT_LEFT_ARM_LOWER_FB},
        {XR_BODY_JOINT_LEFT_ARM_LOWER_FB, XR_BODY_JOINT_LEFT_HAND_WRIST_FB},
        {XR_BODY_JOINT_LEFT_HAND_WRIST_FB, XR_BODY_JOINT_LEFT_HAND_MIDDLE_PROXIMAL_FB},
        {XR_BODY_JOINT_RIGHT_SHOULDER_FB, XR_BODY_JOINT_RIGHT_ARM_UPPER_FB},
        {XR_BODY_JOINT_RIGHT_ARM_UPPER_FB, XR_BODY_JOINT_RIGHT_ARM_LOWER_FB},
        {XR_BODY_JOINT_RIGHT_ARM_LOWER_FB, XR_BODY_JOINT_RIGHT_HAND_WRIST_FB},
        {XR_BODY_JOINT_RIGHT_HAND_WRIST_FB, XR_BODY_JOINT_RIGHT_HAND_MIDDLE_PROXIMAL_FB},
    };
    for (size_t i = 0; i < sizeof k_body / sizeof k_body[0]; ++i)
        out[n++] = k_body[i];
    /* Fingers: thumb metacarpal .. distal, the others metacarpal .. distal, each at the
     * next joint of its finger. */
    for (int side = 0; side < 2; ++side) {
        const int first =
            side == 0 ? XR_BODY_JOINT_LEFT_HAND_PALM_FB : XR_BODY_JOINT_RIGHT_HAND_PALM_FB;
        for (int k = 2; k < 5; ++k)
            out[n++] = (struct bone){first + k, first + k + 1};
        for (int f = 0; f < 4; ++f)
            for (int k = 0; k < 4; ++k)
                out[n++] = (struct bone){first + 6 + 5 * f + k, first + 7 + 5 * f + k};
    }
    if (legs) {
        static const struct bone k_legs[] = {
            {XR_FULL_BODY_JOINT_LEFT_UPPER_LEG_META, XR_FULL_BODY_JOINT_LEFT_LOWER_LEG_META},
            {XR_FULL_BODY_JOINT_LEFT_LOWER_LEG_META, XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META},
            {XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META, XR_FULL_BODY_JOINT_LEFT_FOOT_BALL_META},
            {XR_FULL_BODY_JOINT_RIGHT_UPPER_LEG_META, XR_FULL_BODY_JOINT_RIGHT_LOWER_LEG_META},
            {XR_FULL_BODY_JOINT_RIGHT_LOWER_LEG_META, XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META},
            {XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META, XR_FULL_BODY_JOINT_RIGHT_FOOT_BALL_META},
        };
        for (size_t i = 0; i < sizeof k_legs / sizeof k_legs[0]; ++i)
            out[n++] = k_legs[i];
    }
    return n;
}
#define MAX_BONES 80

static void
to_versor(const XrQuaternionf *q, versor out)
{
    glm_quat_init(out, q->x, q->y, q->z, q->w);
}

static void
to_vec3(const XrVector3f *p, vec3 out)
{
    out[0] = p->x;
    out[1] = p->y;
    out[2] = p->z;
}

/* Degrees between two vectors (0 for a zero vector: nothing to compare). */
static double
angle_deg(const vec3 a, const vec3 b)
{
    const float na = glm_vec3_norm((float *)a), nb = glm_vec3_norm((float *)b);
    if (na < 1e-6f || nb < 1e-6f)
        return 0.0;
    double c = (double)glm_vec3_dot((float *)a, (float *)b) / ((double)na * (double)nb);
    c = fmax(-1.0, fmin(1.0, c));
    return acos(c) * 180.0 / GLM_PI;
}

/* An axis (0 x, 1 y, 2 z) of a joint's frame as Godot reads it. */
static void
godot_axis(const XrPosef *pose, int joint, int axis, vec3 out)
{
    versor q, t, g;
    to_versor(&pose->orientation, q);
    const float *r = godot_rotation(joint);
    glm_quat_init(t, r[0], r[1], r[2], r[3]);
    glm_quat_mul(q, t, g);
    vec3 e = {0.0f, 0.0f, 0.0f};
    e[axis] = 1.0f;
    glm_quat_rotatev(g, e, out);
}

/* The worst angles of one set of poses: bones' +Y off the line to their child, the hips'
 * +X off the body's left (`left`: from the right hip joint to the left one). */
struct godot_check {
    double bone_deg, hips_deg;
    int worst_joint;
};

static void
check_godot(const XrPosef *poses, bool legs, const vec3 left, struct godot_check *io)
{
    struct bone bones[MAX_BONES];
    const int n = godot_bones(legs, bones);
    for (int b = 0; b < n; ++b) {
        vec3 y, a, c, d;
        godot_axis(&poses[bones[b].joint], bones[b].joint, 1, y);
        to_vec3(&poses[bones[b].joint].position, a);
        to_vec3(&poses[bones[b].child].position, c);
        glm_vec3_sub(c, a, d);
        const double deg = angle_deg(y, d);
        if (deg > io->bone_deg) {
            io->bone_deg = deg;
            io->worst_joint = bones[b].joint;
        }
    }
    vec3 x;
    godot_axis(&poses[XR_BODY_JOINT_HIPS_FB], XR_BODY_JOINT_HIPS_FB, 0, x);
    io->hips_deg = fmax(io->hips_deg, angle_deg(x, left));
}

/* ---- The application ------------------------------------------------------------------ */

static void
start(struct la_app *app, const char *script_name, const char *stream, bool bd)
{
    char script[1024];
    xt_temp_path(script_name, script, sizeof script);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f, "poses %s\n", stream);
    fclose(f);
    la_use_layer(script);
    setenv("EMBODY_LAYER_HEIGHT_M", HEIGHT, 1);
    la_create(app, true, true);
    if (bd) { /* the same application, asking for PICO's extension as well */
        la_destroy(app);
        const char *ext[] = {XR_MND_HEADLESS_EXTENSION_NAME, XR_FB_BODY_TRACKING_EXTENSION_NAME,
                             XR_META_BODY_TRACKING_FULL_BODY_EXTENSION_NAME,
                             XR_BD_BODY_TRACKING_EXTENSION_NAME};
        XrInstanceCreateInfo info = {.type = XR_TYPE_INSTANCE_CREATE_INFO,
                                     .enabledExtensionCount = 4,
                                     .enabledExtensionNames = ext};
        strcpy(info.applicationInfo.applicationName, "embody frames test");
        info.applicationInfo.apiVersion = XR_MAKE_VERSION(1, 0, 0);
        assert_int_equal(xrCreateInstance(&info, &app->instance), XR_SUCCESS);
        const XrSystemGetInfo sys = {.type = XR_TYPE_SYSTEM_GET_INFO,
                                     .formFactor = XR_FORM_FACTOR_HEAD_MOUNTED_DISPLAY};
        assert_int_equal(xrGetSystem(app->instance, &sys, &app->system), XR_SUCCESS);
        xrGetInstanceProcAddr(app->instance, "xrCreateBodyTrackerFB",
                              (PFN_xrVoidFunction *)&app->create_body_tracker);
        xrGetInstanceProcAddr(app->instance, "xrDestroyBodyTrackerFB",
                              (PFN_xrVoidFunction *)&app->destroy_body_tracker);
        xrGetInstanceProcAddr(app->instance, "xrLocateBodyJointsFB",
                              (PFN_xrVoidFunction *)&app->locate_body_joints);
        xrGetInstanceProcAddr(app->instance, "xrGetBodySkeletonFB",
                              (PFN_xrVoidFunction *)&app->get_body_skeleton);
    }
    la_start_session(app);
    la_pump(app);
    assert_true(app->running);
}

static XrBodyTrackerFB
make_tracker(struct la_app *app, XrBodyJointSetFB set)
{
    const XrBodyTrackerCreateInfoFB info = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB,
                                            .bodyJointSet = set};
    XrBodyTrackerFB tracker = XR_NULL_HANDLE;
    assert_int_equal(app->create_body_tracker(app->session, &info, &tracker), XR_SUCCESS);
    return tracker;
}

static void
locate(struct la_app *app, XrBodyTrackerFB tracker, XrTime time, XrBodyJointLocationFB *joints,
       uint32_t count, XrPosef *out_poses)
{
    const XrBodyJointsLocateInfoFB info = {
        .type = XR_TYPE_BODY_JOINTS_LOCATE_INFO_FB, .baseSpace = app->stage, .time = time};
    XrBodyJointLocationsFB out = {
        .type = XR_TYPE_BODY_JOINT_LOCATIONS_FB, .jointCount = count, .jointLocations = joints};
    assert_int_equal(app->locate_body_joints(tracker, &info, &out), XR_SUCCESS);
    assert_int_equal(out.isActive, XR_TRUE);
    for (uint32_t j = 0; j < count; ++j) {
        const XrSpaceLocationFlags valid =
            XR_SPACE_LOCATION_ORIENTATION_VALID_BIT | XR_SPACE_LOCATION_POSITION_VALID_BIT;
        assert_true((joints[j].locationFlags & valid) == valid);
        out_poses[j] = joints[j].pose;
    }
}

static void
skeleton(struct la_app *app, XrBodyTrackerFB tracker, uint32_t count, XrPosef *out_poses)
{
    XrBodySkeletonJointFB joints[FULL];
    XrBodySkeletonFB sk = {.type = XR_TYPE_BODY_SKELETON_FB, .jointCount = count, .joints = joints};
    assert_int_equal(app->get_body_skeleton(tracker, &sk), XR_SUCCESS);
    for (uint32_t j = 0; j < count; ++j)
        out_poses[j] = joints[j].pose;
}

static void
hip_line(const XrPosef *full, vec3 out_left)
{
    vec3 l, r;
    to_vec3(&full[XR_FULL_BODY_JOINT_LEFT_UPPER_LEG_META].position, l);
    to_vec3(&full[XR_FULL_BODY_JOINT_RIGHT_UPPER_LEG_META].position, r);
    glm_vec3_sub(l, r, out_left);
}

/* ---- XR_BD_body_tracking ---------------------------------------------------------------- */

struct bd_api {
    PFN_xrCreateBodyTrackerBD create;
    PFN_xrDestroyBodyTrackerBD destroy;
    PFN_xrLocateBodyJointsBD locate;
};

static void
bd_lookup(struct la_app *app, struct bd_api *out)
{
    assert_int_equal(xrGetInstanceProcAddr(app->instance, "xrCreateBodyTrackerBD",
                                           (PFN_xrVoidFunction *)&out->create),
                     XR_SUCCESS);
    assert_int_equal(xrGetInstanceProcAddr(app->instance, "xrDestroyBodyTrackerBD",
                                           (PFN_xrVoidFunction *)&out->destroy),
                     XR_SUCCESS);
    assert_int_equal(xrGetInstanceProcAddr(app->instance, "xrLocateBodyJointsBD",
                                           (PFN_xrVoidFunction *)&out->locate),
                     XR_SUCCESS);
}

static XrResult
bd_locate(struct la_app *app, const struct bd_api *api, XrBodyTrackerBD tracker, XrTime time,
          uint32_t count, XrBodyJointLocationBD *joints)
{
    const XrBodyJointsLocateInfoBD info = {
        .type = XR_TYPE_BODY_JOINTS_LOCATE_INFO_BD, .baseSpace = app->stage, .time = time};
    XrBodyJointLocationsBD out = {.type = XR_TYPE_BODY_JOINT_LOCATIONS_BD,
                                  .jointLocationCount = count,
                                  .jointLocations = joints};
    return api->locate(tracker, &info, &out);
}

/* SMPL's parents, as XrBodyJointBD orders the joints. */
static const int k_bd_parent[BD] = {-1, 0, 0, 0,  1,  2,  3,  4,  5,  6,  7,  8,
                                    9,  9, 9, 12, 13, 14, 16, 17, 18, 19, 20, 21};

/* The bone of a BD joint: to its child (SMPL's one child; the pelvis' is spine1, spine3's
 * the neck), or -1 for the ends (feet, head, hands). */
static int
bd_child(int j)
{
    if (j == XR_BODY_JOINT_PELVIS_BD)
        return XR_BODY_JOINT_SPINE1_BD;
    if (j == XR_BODY_JOINT_SPINE3_BD)
        return XR_BODY_JOINT_NECK_BD;
    for (int c = j + 1; c < BD; ++c)
        if (k_bd_parent[c] == j)
            return c;
    return -1;
}

/* ---- Tests ---------------------------------------------------------------------------- */

static void
godot_reads_meta_frames_along_every_bone_on_every_frame_of_a_clip(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    start(&app, "frames-clip.script", CLIP, false);
    const XrBodyTrackerFB full = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    const XrBodyTrackerFB upper = make_tracker(&app, XR_BODY_JOINT_SET_DEFAULT_FB);
    struct st_stream stream = {0};
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(CLIP, &stream, &err), EM_OK);

    XrBodyJointLocationFB joints[FULL];
    XrPosef full_poses[FULL], upper_poses[FB];
    struct godot_check full_check = {0}, upper_check = {0};
    for (int k = 0; k < stream.frame_count; ++k) {
        la_pump(&app);
        assert_int_equal(la_sync(&app), XR_SUCCESS);
        const XrTime time = la_time_of(stream.frames[k].time_s);
        locate(&app, full, time, joints, FULL, full_poses);
        locate(&app, upper, time, joints, FB, upper_poses);
        vec3 left;
        hip_line(full_poses, left); /* the upper-body set has no legs: the same body's */
        check_godot(full_poses, true, left, &full_check);
        check_godot(upper_poses, false, left, &upper_check);
    }
    print_message("Godot's reading, %d frames: META bones' +Y worst %.2f deg (joint %d), hips' "
                  "+X %.2f deg from the left; FB %.2f deg (joint %d), hips %.2f deg\n",
                  stream.frame_count, full_check.bone_deg, full_check.worst_joint,
                  full_check.hips_deg, upper_check.bone_deg, upper_check.worst_joint,
                  upper_check.hips_deg);
    assert_true(full_check.bone_deg <= LIMIT_DEG);
    assert_true(full_check.hips_deg <= LIMIT_DEG);
    assert_true(upper_check.bone_deg <= LIMIT_DEG);
    assert_true(upper_check.hips_deg <= LIMIT_DEG);
    st_stream_fini(&stream);
    la_destroy(&app);
    g_app = NULL;
}

/* Godot's humanoid profile at rest (SkeletonProfileHumanoid, its frames composed down the
 * tree), for a body facing +Z with its left at +X: the Y and Z axes of some bones. */
static const struct {
    int joint;
    float y[3], z[3];
} k_profile[] = {
    {XR_BODY_JOINT_HIPS_FB, {0, 1, 0}, {0, 0, 1}},
    {XR_BODY_JOINT_SPINE_UPPER_FB, {0, 1, 0}, {0, 0, 1}},
    {XR_BODY_JOINT_LEFT_SHOULDER_FB, {1, 0, 0}, {0, 1, 0}},
    {XR_BODY_JOINT_LEFT_ARM_UPPER_FB, {1, 0, 0}, {0, -1, 0}},
    {XR_BODY_JOINT_LEFT_ARM_LOWER_FB, {1, 0, 0}, {0, 0, 1}},
    {XR_BODY_JOINT_LEFT_HAND_WRIST_FB, {1, 0, 0}, {0, -1, 0}},
    {XR_BODY_JOINT_RIGHT_SHOULDER_FB, {-1, 0, 0}, {0, 1, 0}},
    {XR_BODY_JOINT_RIGHT_ARM_UPPER_FB, {-1, 0, 0}, {0, -1, 0}},
    {XR_BODY_JOINT_RIGHT_ARM_LOWER_FB, {-1, 0, 0}, {0, 0, 1}},
    {XR_BODY_JOINT_RIGHT_HAND_WRIST_FB, {-1, 0, 0}, {0, -1, 0}},
    {XR_FULL_BODY_JOINT_LEFT_UPPER_LEG_META, {0, -1, 0}, {0, 0, 1}},
    {XR_FULL_BODY_JOINT_LEFT_LOWER_LEG_META, {0, -1, 0}, {0, 0, -1}},
    {XR_FULL_BODY_JOINT_RIGHT_UPPER_LEG_META, {0, -1, 0}, {0, 0, 1}},
    {XR_FULL_BODY_JOINT_RIGHT_LOWER_LEG_META, {0, -1, 0}, {0, 0, -1}},
};

static void
the_skeleton_is_a_t_pose_in_the_same_frames(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    start(&app, "frames-skeleton.script", CLIP, false);
    const XrBodyTrackerFB full = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    XrPosef rest[FULL];
    skeleton(&app, full, FULL, rest);
    vec3 left;
    hip_line(rest, left);
    struct godot_check check = {0};
    check_godot(rest, true, left, &check);
    /* Each profile bone's whole frame: the skeleton faces +Z with its left at +X. */
    double profile_deg = 0.0;
    for (size_t i = 0; i < sizeof k_profile / sizeof k_profile[0]; ++i) {
        vec3 y, z;
        godot_axis(&rest[k_profile[i].joint], k_profile[i].joint, 1, y);
        godot_axis(&rest[k_profile[i].joint], k_profile[i].joint, 2, z);
        profile_deg = fmax(profile_deg, angle_deg(y, (float *)k_profile[i].y));
        profile_deg = fmax(profile_deg, angle_deg(z, (float *)k_profile[i].z));
    }
    print_message("xrGetBodySkeletonFB: bones' +Y worst %.2f deg (joint %d), hips' +X %.2f deg "
                  "from the left, Godot's profile frames worst %.2f deg\n",
                  check.bone_deg, check.worst_joint, check.hips_deg, profile_deg);
    assert_true(check.bone_deg <= LIMIT_DEG);
    assert_true(check.hips_deg <= LIMIT_DEG);
    assert_true(profile_deg <= LIMIT_DEG);
    la_destroy(&app);
    g_app = NULL;
}

/* A stream of a body standing still in `rest`'s T-pose (xrGetBodySkeletonFB: the root on
 * the floor at the origin, facing +Z): the headset and the grips where the default
 * device offsets (config/body.json) put them on that skeleton. */
static void
write_t_pose_stream(const XrPosef *rest, const char *path)
{
    enum { FRAMES = 240 };
    static struct em_tracking_frame frames[FRAMES];
    struct em_tracking_frame f = {0};
    /* The view: 8 cm above and 9 cm before the skull base, looking along +Z. */
    vec3 head;
    to_vec3(&rest[XR_BODY_JOINT_HEAD_FB].position, head);
    glm_vec3_add(head, (vec3){0.0f, 0.08f, 0.09f}, f.device[EM_DEVICE_HEAD].pose.position_m);
    glm_quat_init(f.device[EM_DEVICE_HEAD].pose.orientation, 0.0f, 1.0f, 0.0f, 0.0f);
    /* The grips: halfway from the wrist to the knuckles, with OpenXR's grip axes on the
     * hand's (left: x -Y, y -X, z -Z; right: x +Y, y +X, z -Z). */
    for (int side = 0; side < 2; ++side) {
        const int first =
            side == 0 ? XR_BODY_JOINT_LEFT_HAND_PALM_FB : XR_BODY_JOINT_RIGHT_HAND_PALM_FB;
        vec3 wrist, knuckle;
        to_vec3(&rest[first + 1].position, wrist);
        to_vec3(&rest[first + 12].position, knuckle);
        struct em_pose *grip =
            &f.device[side == 0 ? EM_DEVICE_LEFT_HAND : EM_DEVICE_RIGHT_HAND].pose;
        glm_vec3_lerp(wrist, knuckle, 0.5f, grip->position_m);
        const float s = side == 0 ? -1.0f : 1.0f;
        mat3 m = {{0.0f, s, 0.0f}, {s, 0.0f, 0.0f}, {0.0f, 0.0f, -1.0f}};
        glm_mat3_quat(m, grip->orientation);
    }
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        f.device[d].flags = EM_POSE_ALL_VALID;
    for (int k = 0; k < FRAMES; ++k) {
        frames[k] = f;
        frames[k].time_s = k / 60.0;
    }
    xt_write_stream(path, frames, FRAMES);
}

/* Degrees between two rotations. */
static double
turn_deg(const XrQuaternionf *a, const versor b)
{
    versor qa;
    to_versor(a, qa);
    const double d = fabs((double)glm_quat_dot(qa, (float *)b));
    return 2.0 * acos(fmin(1.0, d)) * 180.0 / GLM_PI;
}

static void
a_body_in_the_t_pose_has_the_skeletons_frames_and_the_bd_specifications(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    /* The skeleton of this height first, then a stream of a body standing in it. */
    start(&app, "frames-rest.script", CLIP, false);
    const XrBodyTrackerFB first = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    XrPosef rest[FULL];
    skeleton(&app, first, FULL, rest);
    la_destroy(&app);
    char path[1024];
    xt_temp_path("t-pose.csv", path, sizeof path);
    write_t_pose_stream(rest, path);

    start(&app, "frames-t-pose.script", path, true);
    struct bd_api bd;
    bd_lookup(&app, &bd);
    const XrBodyTrackerFB full = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    const XrBodyTrackerCreateInfoBD info = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_BD,
                                            .jointSet = XR_BODY_JOINT_SET_FULL_BODY_JOINTS_BD};
    XrBodyTrackerBD pico = XR_NULL_HANDLE;
    assert_int_equal(bd.create(app.session, &info, &pico), XR_SUCCESS);
    XrBodyJointLocationFB joints[FULL];
    XrBodyJointLocationBD bd_joints[BD];
    XrPosef located[FULL];
    /* The joint the headset holds stands exactly as in the T-pose; the solver places the
     * others near it (its stance, its arms' twist), shown for reference. The hands are
     * neither: their fingers follow the controllers' inputs (test_layer_hands), and the
     * wrist's and BD's hand frames aim along them (the bones' directions are measured on
     * every frame of the clip above). */
    double held_deg = 0.0, inferred_deg = 0.0, bd_deg = 0.0;
    int held_worst = -1, bd_worst = -1;
    /* The specification's T-pose frame for a body facing +Z: +X right (-X), +Z back (-Z). */
    const versor bd_tpose = {0.0f, 1.0f, 0.0f, 0.0f};
    static const int k_bd_held[] = {XR_BODY_JOINT_HEAD_BD};
    for (int k = 0; k < 200; ++k) {
        la_pump(&app);
        assert_int_equal(la_sync(&app), XR_SUCCESS);
        const XrTime time = la_time_of(k / 60.0);
        locate(&app, full, time, joints, FULL, located);
        assert_int_equal(bd_locate(&app, &bd, pico, time, BD, bd_joints), XR_SUCCESS);
        if (k < 120) /* settled after the first two seconds */
            continue;
        for (int j = 1; j < FULL; ++j) {
            versor r;
            to_versor(&rest[j].orientation, r);
            const double d = turn_deg(&located[j].orientation, r);
            const bool held = j == XR_BODY_JOINT_HEAD_FB;
            const bool hand = (j >= XR_BODY_JOINT_LEFT_HAND_PALM_FB &&
                               j <= XR_BODY_JOINT_LEFT_HAND_LITTLE_TIP_FB) ||
                              (j >= XR_BODY_JOINT_RIGHT_HAND_PALM_FB &&
                               j <= XR_BODY_JOINT_RIGHT_HAND_LITTLE_TIP_FB);
            if (hand)
                continue;
            if (!held)
                inferred_deg = fmax(inferred_deg, d);
            else if (d > held_deg) {
                held_deg = d;
                held_worst = j;
            }
        }
        for (size_t i = 0; i < sizeof k_bd_held / sizeof k_bd_held[0]; ++i) {
            const double d = turn_deg(&bd_joints[k_bd_held[i]].pose.orientation, bd_tpose);
            if (d >= bd_deg) {
                bd_deg = d;
                bd_worst = k_bd_held[i];
            }
        }
    }
    print_message("standing in the T-pose: META head %.2f deg from "
                  "xrGetBodySkeletonFB's (worst joint %d), inferred ones up to %.1f deg; BD "
                  "head %.2f deg from the specification's frame (worst %d)\n",
                  held_deg, held_worst, inferred_deg, bd_deg, bd_worst);
    assert_true(held_deg <= 1.0);
    assert_true(bd_deg <= 1.0);
    assert_int_equal(bd.destroy(pico), XR_SUCCESS);
    la_destroy(&app);
    g_app = NULL;
}

static void
bd_bones_turn_with_their_joints_on_every_frame_of_a_clip(void **state)
{
    (void)state;
    struct la_app app;
    g_app = &app;
    assert_true(la_extension_offered(XR_BD_BODY_TRACKING_EXTENSION_NAME));
    start(&app, "frames-bd.script", CLIP, true);
    struct bd_api bd;
    bd_lookup(&app, &bd);

    XrSystemBodyTrackingPropertiesBD props_bd = {.type =
                                                     XR_TYPE_SYSTEM_BODY_TRACKING_PROPERTIES_BD};
    XrSystemProperties props = {.type = XR_TYPE_SYSTEM_PROPERTIES, .next = &props_bd};
    assert_int_equal(xrGetSystemProperties(app.instance, app.system, &props), XR_SUCCESS);
    assert_int_equal(props_bd.supportsBodyTracking, XR_TRUE);

    /* The T-pose directions of the bones, in the specification's frame (the skeleton
     * faces +Z: its +X right is -X, its +Z back is -Z). */
    const XrBodyTrackerFB full = make_tracker(&app, XR_BODY_JOINT_SET_FULL_BODY_META);
    XrPosef rest[FULL];
    skeleton(&app, full, FULL, rest);
    vec3 bone_tpose[BD];
    for (int j = 0; j < BD; ++j) {
        glm_vec3_zero(bone_tpose[j]);
        const int c = bd_child(j);
        if (c < 0)
            continue;
        static const int k_source[BD] = {1, 70, 77, 2, 71, 78, 4,  73, 80, 5,  76, 83,
                                         6, 8,  13, 7, 10, 15, 11, 16, 19, 45, 30, 56};
        vec3 a, b;
        to_vec3(&rest[k_source[j]].position, a);
        to_vec3(&rest[k_source[c]].position, b);
        glm_vec3_sub(b, a, bone_tpose[j]);
        bone_tpose[j][0] = -bone_tpose[j][0];
        bone_tpose[j][2] = -bone_tpose[j][2];
    }

    const XrBodyTrackerCreateInfoBD info = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_BD,
                                            .jointSet = XR_BODY_JOINT_SET_FULL_BODY_JOINTS_BD};
    const XrBodyTrackerCreateInfoBD torso_info = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_BD,
                                                  .jointSet =
                                                      XR_BODY_JOINT_SET_BODY_WITHOUT_ARM_BD};
    XrBodyTrackerBD pico = XR_NULL_HANDLE, torso = XR_NULL_HANDLE;
    assert_int_equal(bd.create(app.session, &info, &pico), XR_SUCCESS);
    assert_int_equal(bd.create(app.session, &torso_info, &torso), XR_SUCCESS);
    struct st_stream stream = {0};
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load(CLIP, &stream, &err), EM_OK);
    XrBodyJointLocationBD joints[BD], torso_joints[BD];
    double worst_deg = 0.0, torso_diff_deg = 0.0;
    int worst = -1;
    for (int k = 0; k < stream.frame_count; ++k) {
        la_pump(&app);
        assert_int_equal(la_sync(&app), XR_SUCCESS);
        const XrTime time = la_time_of(stream.frames[k].time_s);
        assert_int_equal(bd_locate(&app, &bd, pico, time, BD, joints), XR_SUCCESS);
        assert_int_equal(
            bd_locate(&app, &bd, torso, time, XR_BODY_JOINT_WITHOUT_ARM_COUNT_BD, torso_joints),
            XR_SUCCESS);
        for (int j = 0; j < BD; ++j) {
            const int c = bd_child(j);
            if (c < 0)
                continue;
            versor q;
            vec3 along, a, b, d;
            to_versor(&joints[j].pose.orientation, q);
            glm_quat_rotatev(q, bone_tpose[j], along);
            to_vec3(&joints[j].pose.position, a);
            to_vec3(&joints[c].pose.position, b);
            glm_vec3_sub(b, a, d);
            const double deg = angle_deg(along, d);
            if (deg > worst_deg) {
                worst_deg = deg;
                worst = j;
            }
        }
        for (int j = 0; j < XR_BODY_JOINT_WITHOUT_ARM_COUNT_BD; ++j) {
            versor q;
            to_versor(&joints[j].pose.orientation, q);
            torso_diff_deg = fmax(torso_diff_deg, turn_deg(&torso_joints[j].pose.orientation, q));
        }
    }
    print_message("BD, %d frames: bones' T-pose direction turned by their joint, worst %.2f deg "
                  "(joint %d); the set without arms %.4f deg from the full set's\n",
                  stream.frame_count, worst_deg, worst, torso_diff_deg);
    assert_true(worst_deg <= LIMIT_DEG);
    assert_true(torso_diff_deg <= 0.5);
    /* A count that is not the set's, a forged handle: refused as the specification says. */
    assert_int_equal(bd_locate(&app, &bd, torso, la_time_of(1.0), BD, joints),
                     XR_ERROR_VALIDATION_FAILURE);
    assert_int_equal(bd.destroy(torso), XR_SUCCESS);
    assert_int_equal(bd.destroy(torso), XR_ERROR_HANDLE_INVALID);
    assert_int_equal(
        bd_locate(&app, &bd, torso, la_time_of(1.0), XR_BODY_JOINT_WITHOUT_ARM_COUNT_BD, joints),
        XR_ERROR_HANDLE_INVALID);
    st_stream_fini(&stream);
    /* pico goes with the session. */
    la_destroy(&app);
    g_app = NULL;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(godot_reads_meta_frames_along_every_bone_on_every_frame_of_a_clip,
                                  teardown),
        cmocka_unit_test_teardown(the_skeleton_is_a_t_pose_in_the_same_frames, teardown),
        cmocka_unit_test_teardown(
            a_body_in_the_t_pose_has_the_skeletons_frames_and_the_bd_specifications, teardown),
        cmocka_unit_test_teardown(bd_bones_turn_with_their_joints_on_every_frame_of_a_clip,
                                  teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
