/*
 * Skeleton tests: the default humanoid, scaling, forward kinematics, and the rejection
 * of bad skeleton files with messages that name what is wrong.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "embody/m_math.h"
#include "embody/skeleton.h"

static void
load_humanoid(struct sk_skeleton *sk)
{
    struct em_error err = {{0}};
    const enum em_result r =
        sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", sk, &err);
    if (r != EM_OK)
        fail_msg("%s", err.message);
}

static void
default_humanoid_loads_and_is_valid(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    load_humanoid(&sk);
    struct em_error err = {{0}};
    assert_int_equal(sk_humanoid_validate(&sk, "humanoid", &err), EM_OK);
    assert_float_equal(sk_humanoid_height(&sk), 1.75, 1e-4);
    const float span = sk_humanoid_arm_span(&sk);
    assert_true(span > 1.65f && span < 1.85f);
    for (int i = 1; i < sk.joint_count; ++i)
        assert_true(sk.parent[i] >= 0 && sk.parent[i] < i);
    assert_int_equal(sk.bone_joint[SK_HIPS], 0);
    sk_skeleton_fini(&sk);
}

static void
fitting_to_a_height_scales_every_bone_alike(void **state)
{
    (void)state;
    struct sk_skeleton sk, ref;
    load_humanoid(&sk);
    load_humanoid(&ref);
    struct em_error err = {{0}};
    assert_int_equal(sk_humanoid_fit(&sk, 1.60f, 0.0f, &err), EM_OK);
    assert_float_equal(sk_humanoid_height(&sk), 1.60, 1e-4);
    const float k = 1.60f / 1.75f;
    for (int i = 1; i < sk.joint_count; ++i)
        assert_float_equal(sk.length_m[i], ref.length_m[i] * k, 1e-5);
    sk_skeleton_fini(&sk);
    sk_skeleton_fini(&ref);
}

static void
fitting_an_arm_span_changes_only_the_arms(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    load_humanoid(&sk);
    struct em_error err = {{0}};
    assert_int_equal(sk_humanoid_fit(&sk, 1.75f, 1.85f, &err), EM_OK);
    assert_float_equal(sk_humanoid_arm_span(&sk), 1.85, 1e-4);
    assert_float_equal(sk_humanoid_height(&sk), 1.75, 1e-4);
    /* An absurd span is refused with a reason. */
    assert_int_equal(sk_humanoid_fit(&sk, 1.75f, 4.0f, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "arm span"));
    assert_int_equal(sk_humanoid_fit(&sk, NAN, 0.0f, &err), EM_ERROR_INVALID_ARGUMENT);
    sk_skeleton_fini(&sk);
}

static void
joints_given_out_of_order_are_sorted_parents_first(void **state)
{
    (void)state;
    const struct sk_joint_desc d[] = {
        {.name = "c", .parent = "b", .offset_m = {0, 1, 0}},
        {.name = "a", .parent = NULL, .offset_m = {0, 0, 0}},
        {.name = "b", .parent = "a", .offset_m = {1, 0, 0}},
    };
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    assert_int_equal(sk_skeleton_create(d, 3, "test", &sk, &err), EM_OK);
    assert_string_equal(sk.name[0], "a");
    assert_string_equal(sk.name[1], "b");
    assert_string_equal(sk.name[2], "c");
    assert_int_equal(sk.parent[2], 1);
    assert_float_equal(sk.rest_position_m[2][0], 1.0, 1e-6);
    assert_float_equal(sk.rest_position_m[2][1], 1.0, 1e-6);
    sk_skeleton_fini(&sk);
}

static void
forward_kinematics_turns_the_subtree(void **state)
{
    (void)state;
    const struct sk_joint_desc d[] = {
        {.name = "a", .offset_m = {0, 0, 0}},
        {.name = "b", .parent = "a", .offset_m = {1, 0, 0}},
        {.name = "c", .parent = "b", .offset_m = {1, 0, 0}},
    };
    struct sk_skeleton sk;
    struct sk_pose pose;
    assert_int_equal(sk_skeleton_create(d, 3, "test", &sk, NULL), EM_OK);
    assert_int_equal(sk_pose_init(&pose, &sk), EM_OK);
    const float z[3] = {0, 0, 1};
    m_quat_from_axis_angle(z, M_PI_F / 2, pose.local_rotation[1]); /* b turns c up */
    sk_pose_forward_kinematics(&pose, &sk);
    assert_float_equal(pose.position_m[1][0], 1.0, 1e-6);
    assert_float_equal(pose.position_m[2][0], 1.0, 1e-6);
    assert_float_equal(pose.position_m[2][1], 1.0, 1e-6);
    /* Local rotations are recovered from global ones. */
    versor saved;
    m_quat_copy(pose.local_rotation[1], saved);
    sk_pose_update_local(&pose, &sk);
    assert_float_equal(m_quat_dot(saved, pose.local_rotation[1]), 1.0, 1e-6);
    sk_pose_fini(&pose);
    sk_skeleton_fini(&sk);
}

/* Parses `json` and expects a failure whose message contains `expect`. */
static void
expect_rejected(const char *json, const char *expect)
{
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    const enum em_result r = sk_skeleton_parse_json(json, "bad.json", &sk, &err);
    if (r == EM_OK) {
        sk_skeleton_fini(&sk);
        fail_msg("accepted: %s", json);
    }
    if (!strstr(err.message, expect))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, expect);
    assert_non_null(strstr(err.message, "bad.json"));
}

static void
bad_skeleton_files_are_rejected_with_a_reason(void **state)
{
    (void)state;
    expect_rejected("{\"joints\": [{\"name\": \"a\", \"offset_m\": [0,0,0]},"
                    "{\"name\": \"b\", \"parent\": \"zz\", \"offset_m\": [1,0,0]}]}",
                    "unknown parent \"zz\"");
    expect_rejected("{\"joints\": [{\"name\": \"a\", \"offset_m\": [0,0,0]},"
                    "{\"name\": \"b\", \"parent\": \"a\", \"offset_m\": [0,0,0]}]}",
                    "zero-length bone");
    expect_rejected("{\"joints\": [{\"name\": \"a\", \"parent\": \"b\", \"offset_m\": [0,1,0]},"
                    "{\"name\": \"b\", \"parent\": \"a\", \"offset_m\": [1,0,0]}]}",
                    "cycle");
    expect_rejected("{\"joints\": [{\"name\": \"r\", \"offset_m\": [0,0,0]},"
                    "{\"name\": \"a\", \"parent\": \"b\", \"offset_m\": [0,1,0]},"
                    "{\"name\": \"b\", \"parent\": \"a\", \"offset_m\": [1,0,0]}]}",
                    "cycle");
    expect_rejected("{\"joints\": [{\"name\": \"a\", \"offset_m\": [0,\"x\",0]}]}",
                    "joints[0].offset_m[1]");
    expect_rejected("{\"joints\": [{\"name\": \"a\", \"offset_m\": [0,0]}]}",
                    "joints[0].offset_m");
    expect_rejected("{\"joints\": [{\"name\": \"a\", \"offset_m\": [0,0,0]},"
                    "{\"name\": \"a\", \"parent\": \"a\", \"offset_m\": [1,0,0]}]}",
                    "defined twice");
    expect_rejected("{\"joints\": [{\"name\": \"a\", \"offset_m\": [0,0,0]},"
                    "{\"name\": \"b\", \"offset_m\": [1,0,0]}]}",
                    "exactly one root");
    expect_rejected("{\"joints\": [{\"name\": \"a\", \"offset_m\": [0,0,0]},"
                    "{\"name\": \"b\", \"parent\": \"a\", \"offset_m\": [1,0,0],"
                    " \"limit\": {\"type\": \"hinge\", \"axis\": [0,0,1], "
                    "\"range_deg\": [90, 10]}}]}",
                    "joints[1].limit.range_deg");
    expect_rejected("{\"joints\": [{\"name\": \"a\", \"offset_m\": [0,0,0]},"
                    "{\"name\": \"b\", \"parent\": \"a\", \"offset_m\": [1,0,0],"
                    " \"limit\": {\"type\": \"socket\", \"axis\": [0,0,1]}}]}",
                    "\"socket\"");
    expect_rejected("{\"joints\": []}", "joints");
    expect_rejected("{\"joints\": [\n{\"name\": \"a\",\n \"offset_m\": [0,0,0]\n", "bad.json:4");
    /* Numbers beyond float range are not finite once read. */
    expect_rejected("{\"joints\": [{\"name\": \"a\", \"offset_m\": [0,0,1e999]}]}",
                    "offset_m[2]");
}

/* The humanoid's tree (sk_humanoid_tree.h): a bone hangs from its parent, or from the
 * chest past a missing or skipped upperChest. */
static void
a_humanoid_nesting_otherwise_is_rejected_naming_the_parent(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    load_humanoid(&sk);
    struct em_error err = {{0}};
    const int neck = sk.bone_joint[SK_NECK];
    sk.parent[neck] = sk.bone_joint[SK_CHEST];
    assert_int_equal(sk_humanoid_validate(&sk, "humanoid", &err), EM_OK);
    sk.parent[neck] = sk.bone_joint[SK_SPINE];
    assert_int_equal(sk_humanoid_validate(&sk, "humanoid", &err), EM_ERROR_PARSE);
    assert_non_null(strstr(err.message, "joint \"neck\" must be below \"chest\""));
    sk_skeleton_fini(&sk);
}

static void
a_humanoid_missing_a_joint_is_rejected(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    assert_int_equal(sk_skeleton_parse_json(
                         "{\"joints\": [{\"name\": \"hips\", \"offset_m\": [0,1,0]},"
                         "{\"name\": \"spine\", \"parent\": \"hips\", \"offset_m\": [0,0.1,0]}]}",
                         "tiny.json", &sk, &err),
                     EM_OK);
    assert_int_equal(sk_humanoid_validate(&sk, "tiny.json", &err), EM_ERROR_PARSE);
    assert_non_null(strstr(err.message, "missing the humanoid joint \"chest\""));
    sk_skeleton_fini(&sk);
}

static void
name_maps_know_cmu_and_mixamo(void **state)
{
    (void)state;
    assert_int_equal(sk_bone_from_mapped_name(SK_NAMES_CMU, "LeftArm"), SK_LEFT_UPPER_ARM);
    assert_int_equal(sk_bone_from_mapped_name(SK_NAMES_CMU, "LowerBack"), SK_BONE_NONE);
    assert_int_equal(sk_bone_from_mapped_name(SK_NAMES_MIXAMO, "mixamorig:RightUpLeg"),
                     SK_RIGHT_UPPER_LEG);
    assert_int_equal(sk_bone_from_mapped_name(SK_NAMES_VRM, "rightToes"), SK_RIGHT_TOES);
    assert_int_equal(sk_bone_mirror(SK_LEFT_LOWER_ARM), SK_RIGHT_LOWER_ARM);
    const char *cmu[] = {"Hips", "LHipJoint", "LeftUpLeg", "LeftFingerBase", "Spine1"};
    assert_int_equal(sk_name_map_guess(cmu, 5), SK_NAMES_CMU);
    const char *mix[] = {"mixamorig:Hips", "mixamorig:Spine2", "mixamorig:LeftArm"};
    assert_int_equal(sk_name_map_guess(mix, 3), SK_NAMES_MIXAMO);
    const char *vrm[] = {"hips", "spine", "leftUpperArm"};
    assert_int_equal(sk_name_map_guess(vrm, 3), SK_NAMES_VRM);
}

/* The conventions that disagree are told apart by the other names of the set: "Left leg"
 * is CATS's thigh and "LeftLeg" Mixamo's shin. */
static void
name_map_reads_a_set_of_names_in_its_convention(void **state)
{
    (void)state;
    const char *cats[] = {"Hips", "Left leg", "Left knee", "Left ankle", "Left elbow"};
    const enum sk_name_map c = sk_name_map_guess(cats, 5);
    assert_int_equal(c, SK_NAMES_CATS);
    assert_int_equal(sk_bone_from_node_name_in(c, "Left leg"), SK_LEFT_UPPER_LEG);
    const char *mix[] = {"mixamorig:Hips", "mixamorig:LeftUpLeg", "mixamorig:LeftLeg"};
    const enum sk_name_map m = sk_name_map_guess(mix, 3);
    assert_int_equal(sk_bone_from_node_name_in(m, "mixamorig:LeftLeg"), SK_LEFT_LOWER_LEG);
    const char *max[] = {"Hips", "Chest", "Chest2", "LeftCollar", "LeftShoulder", "LeftElbow"};
    const enum sk_name_map x = sk_name_map_guess(max, 6);
    assert_int_equal(x, SK_NAMES_MAX);
    assert_int_equal(sk_bone_from_node_name_in(x, "LeftShoulder"), SK_LEFT_UPPER_ARM);
    /* Folding: case, separators, prefixes. */
    char folded[64];
    sk_name_fold("Armature|J_Bip_L_Upper-Arm.001", folded, sizeof folded);
    assert_string_equal(folded, "jbiplupperarm001");
    assert_int_equal(sk_bone_from_mapped_name(SK_NAMES_RIGIFY, "def_upper_arm_l"),
                     SK_LEFT_UPPER_ARM);
}

/* A humanoid's node tree, the left arm's names none a convention knows and hung where no
 * arm hangs (from the hips), so neither names nor shape find it. */
static void
a_rig_missing_bones_is_refused_naming_found_missing_and_closest(void **state)
{
    (void)state;
    const struct sk_rig_node nodes[] = {
        {"Hips", -1, {0, 1, 0}},          {"Spine", 0, {0, 1.1f, 0}},
        {"Chest", 1, {0, 1.3f, 0}},       {"Neck", 2, {0, 1.5f, 0}},
        {"Head", 3, {0, 1.6f, 0}},        {"HeadTop", 4, {0, 1.75f, 0}},
        {"RightArm", 2, {-0.2f, 1.45f, 0}}, {"RightForeArm", 6, {-0.5f, 1.45f, 0}},
        {"RightHand", 7, {-0.75f, 1.45f, 0}}, {"RightHandEnd", 8, {-0.85f, 1.45f, 0}},
        {"L_Upr", 0, {0.2f, 1.0f, 0}},     {"L_Elbo", 10, {0.5f, 1.0f, 0}},
        {"L_Pawm", 11, {0.75f, 1.0f, 0}},  {"LeftUpLeg", 0, {0.1f, 0.9f, 0}},
        {"LeftLeg", 13, {0.1f, 0.5f, 0}},  {"LeftFoot", 14, {0.1f, 0.08f, 0}},
        {"RightUpLeg", 0, {-0.1f, 0.9f, 0}}, {"RightLeg", 16, {-0.1f, 0.5f, 0}},
        {"RightFoot", 17, {-0.1f, 0.08f, 0}},
    };
    const struct sk_rig_desc desc = {
        .nodes = nodes, .node_count = (int)(sizeof nodes / sizeof nodes[0]), .source = "a.glb"};
    struct sk_rig_map map;
    struct em_error err = {{0}};
    assert_int_equal(sk_rig_find_bones(&desc, &map, &err), EM_ERROR_PARSE);
    assert_non_null(strstr(err.message, "a.glb: no humanoid skeleton"));
    assert_non_null(strstr(err.message, "missing leftUpperArm, leftLowerArm, leftHand;"));
    assert_non_null(strstr(err.message, "\"L_Elbo\""));
    assert_non_null(strstr(err.message, "--bone-map FILE.json"));
    assert_non_null(strstr(err.message, "Found (names read as"));
    assert_non_null(strstr(err.message, "rightLowerArm"));
    /* A bone map naming the three makes it a humanoid. */
    struct sk_bone_map bm;
    const char *text = "{\"leftUpperArm\": \"L_Upr\", \"leftLowerArm\": \"L_Elbo\", "
                       "\"leftHand\": \"L_Pawm\"}";
    assert_int_equal(sk_bone_map_parse(text, strlen(text), "map.json", &bm, &err), EM_OK);
    const struct sk_rig_desc with_map = {.nodes = nodes,
                                         .node_count = desc.node_count,
                                         .bone_map = &bm,
                                         .source = "a.glb"};
    if (sk_rig_find_bones(&with_map, &map, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(map.node[SK_LEFT_LOWER_ARM], 11);
    assert_int_equal(map.found[SK_LEFT_LOWER_ARM], SK_RIG_BY_BONE_MAP);
    assert_int_equal(map.found[SK_RIGHT_LOWER_ARM], SK_RIG_BY_NAME);
}

static void
bone_map_files_are_checked_field_by_field(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *reason;
    } bad[] = {
        {"{\"hips\": \"a\",\n \"spine\": ", "map.json:2:9: malformed JSON"},
        {"[\"hips\"]", "map.json: expected a JSON object of humanoid bone -> node name"},
        {"{\"leftElbow\": \"a\"}", "map.json: \"leftElbow\": not a humanoid bone"},
        {"{\"headTop\": \"a\"}", "map.json: \"headTop\": not a humanoid bone"},
        {"{\"hips\": 3}", "map.json: \"hips\": expected a node name"},
        {"{\"hips\": \"\"}", "map.json: \"hips\": expected a node name"},
        {"{\"hips\": \"a\", \"hips\": \"b\"}", "map.json: \"hips\": given twice"},
        {"{\"hips\": \"a\", \"spine\": \"a\"}", "\"spine\": node \"a\" is already \"hips\"'s"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        struct sk_bone_map m;
        struct em_error err = {{0}};
        const enum em_result r = sk_bone_map_parse(bad[i].text, strlen(bad[i].text), "map.json",
                                                   &m, &err);
        if (r != EM_ERROR_PARSE || !strstr(err.message, bad[i].reason))
            fail_msg("%s: got %d \"%s\", expected \"%s\"", bad[i].text, r, err.message,
                     bad[i].reason);
    }
    char longname[400];
    memset(longname, 'x', sizeof longname);
    memcpy(longname, "{\"hips\": \"", 10);
    memcpy(longname + sizeof longname - 3, "\"}", 3);
    struct sk_bone_map m;
    struct em_error err = {{0}};
    assert_int_equal(sk_bone_map_parse(longname, strlen(longname), "map.json", &m, &err),
                     EM_ERROR_PARSE);
    assert_non_null(strstr(err.message, "at most 127"));
}

static double
seconds_now(void)
{
    /* This process's CPU time, not the wall clock: other work on a shared machine does
     * not count against the bound (the quadratic creation took 7 s for 20,000 joints). */
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A skeleton file of `count` joints: a root, then joints each hanging from joint
 * (i - 1) / 2 (a binary tree), given from the last to the first so the loader must sort
 * them. */
static char *
big_skeleton_json(int count)
{
    const size_t size = (size_t)count * 80 + 100;
    char *text = malloc(size);
    assert_non_null(text);
    size_t n = (size_t)snprintf(text, size, "{\"format\": \"embody-skeleton\", \"joints\": [\n");
    for (int i = count - 1; i >= 0; --i) {
        if (i == 0)
            n +=
                (size_t)snprintf(text + n, size - n, "{\"name\": \"j0\", \"offset_m\": [0, 1, 0]}");
        else
            n += (size_t)snprintf(text + n, size - n,
                                  "{\"name\": \"j%d\", \"parent\": \"j%d\", \"offset_m\": [0.01, "
                                  "0, 0]},\n",
                                  i, (i - 1) / 2);
    }
    snprintf(text + n, size - n, "]}\n");
    return text;
}

static void
a_skeleton_of_20000_joints_is_refused_in_well_under_a_second(void **state)
{
    (void)state;
    char *text = big_skeleton_json(20000);
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    const double t0 = seconds_now();
    assert_int_equal(sk_skeleton_parse_json(text, "big.json", &sk, &err), EM_ERROR_LIMIT);
    const double elapsed_s = seconds_now() - t0;
    if (!strstr(err.message, "big.json") || !strstr(err.message, "20000 joints") ||
        !strstr(err.message, "at most 1024"))
        fail_msg("unexpected message: %s", err.message);
    if (!(elapsed_s < 0.5)) /* well under a second, even in a sanitizer build under load */
        fail_msg("refusing took %.3f s", elapsed_s);
    assert_int_equal(sk.joint_count, 0);
    free(text);
}

static void
a_skeleton_at_the_joint_limit_is_built_in_well_under_a_second(void **state)
{
    (void)state;
    char *text = big_skeleton_json(SK_MAX_JOINTS);
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    const double t0 = seconds_now();
    if (sk_skeleton_parse_json(text, "limit.json", &sk, &err) != EM_OK)
        fail_msg("%s", err.message);
    const double elapsed_s = seconds_now() - t0;
    if (!(elapsed_s < 0.5))
        fail_msg("building took %.3f s", elapsed_s);
    assert_int_equal(sk.joint_count, SK_MAX_JOINTS);
    /* Depth first, parents first, children in the file's order: j0, j2 (given before j1),
     * j6, j14, ... every parent before its child, every joint's parent the right one. */
    assert_string_equal(sk.name[0], "j0");
    assert_string_equal(sk.name[1], "j2");
    assert_string_equal(sk.name[2], "j6");
    for (int i = 1; i < sk.joint_count; ++i) {
        assert_true(sk.parent[i] >= 0 && sk.parent[i] < i);
        int id = 0, parent_id = 0;
        assert_int_equal(sscanf(sk.name[i], "j%d", &id), 1);
        assert_int_equal(sscanf(sk.name[sk.parent[i]], "j%d", &parent_id), 1);
        assert_int_equal(parent_id, (id - 1) / 2);
    }
    sk_skeleton_fini(&sk);
    free(text);

    /* One more is refused, by sk_skeleton_create too. */
    struct sk_joint_desc *d = calloc(SK_MAX_JOINTS + 1, sizeof *d);
    assert_non_null(d);
    assert_int_equal(sk_skeleton_create(d, SK_MAX_JOINTS + 1, "descs", &sk, &err), EM_ERROR_LIMIT);
    free(d);
}

/* ---- Proportions ---- */

/* A person built by hand, every length known: head joint 1.6 m above the floor (the toes),
 * thighs 0.4 m, the right forearm 2 cm longer than the left. `scale` multiplies every
 * offset; `toes` 0 leaves the right toes out, 2 points both feet down. */
static enum em_result
build_person(float scale, int toes, struct sk_skeleton *out, struct em_error *err)
{
    const float toes_offset[3] = {0, toes == 2 ? -0.12f : -0.08f, toes == 2 ? 0.02f : 0.12f};
    struct sk_joint_desc d[] = {
        {.name = "hips", .offset_m = {0, 0.96f, 0}},
        {.name = "spine", .parent = "hips", .offset_m = {0, 0.1f, 0}},
        {.name = "chest", .parent = "spine", .offset_m = {0, 0.14f, 0}},
        {.name = "neck", .parent = "chest", .offset_m = {0, 0.24f, 0}},
        {.name = "head", .parent = "neck", .offset_m = {0, 0.16f, 0.02f}},
        {.name = "leftShoulder", .parent = "chest", .offset_m = {0.04f, 0.18f, 0}},
        {.name = "leftUpperArm", .parent = "leftShoulder", .offset_m = {0.14f, 0.02f, -0.02f}},
        {.name = "leftLowerArm", .parent = "leftUpperArm", .offset_m = {0.28f, 0, 0}},
        {.name = "leftHand", .parent = "leftLowerArm", .offset_m = {0.24f, 0, 0}},
        {.name = "rightShoulder", .parent = "chest", .offset_m = {-0.04f, 0.18f, 0}},
        {.name = "rightUpperArm", .parent = "rightShoulder", .offset_m = {-0.14f, 0.02f, -0.02f}},
        {.name = "rightLowerArm", .parent = "rightUpperArm", .offset_m = {-0.28f, 0, 0}},
        {.name = "rightHand", .parent = "rightLowerArm", .offset_m = {-0.26f, 0, 0}},
        {.name = "leftUpperLeg", .parent = "hips", .offset_m = {0.1f, -0.06f, 0}},
        {.name = "leftLowerLeg", .parent = "leftUpperLeg", .offset_m = {0, -0.4f, 0}},
        {.name = "leftFoot", .parent = "leftLowerLeg", .offset_m = {0, -0.42f, 0}},
        {.name = "rightUpperLeg", .parent = "hips", .offset_m = {-0.1f, -0.06f, 0}},
        {.name = "rightLowerLeg", .parent = "rightUpperLeg", .offset_m = {0, -0.4f, 0}},
        {.name = "rightFoot", .parent = "rightLowerLeg", .offset_m = {0, -0.42f, 0}},
        {.name = "leftToes", .parent = "leftFoot"},
        {.name = "rightToes", .parent = "rightFoot"},
    };
    int count = (int)(sizeof d / sizeof d[0]);
    for (int k = 0; k < 3; ++k)
        d[count - 2].offset_m[k] = d[count - 1].offset_m[k] = toes_offset[k];
    if (toes == 0)
        count--;
    for (int i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k)
            d[i].offset_m[k] *= scale;
    return sk_skeleton_create(d, count, "person", out, err);
}

static void
proportions_are_the_lengths_built_over_the_head_joints_height(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    assert_int_equal(build_person(1.0f, 1, &sk, &err), EM_OK);
    struct sk_proportions p;
    if (sk_humanoid_proportions(&sk, "person", &p, &err) != EM_OK)
        fail_msg("%s", err.message);
    const double h = 1.6;
    assert_float_equal(p.head_height_m, h, 1e-5);
    double expected[SK_MEASURE_COUNT];
    expected[SK_MEASURE_HIPS_HEIGHT] = 0.96 / h;
    expected[SK_MEASURE_UPPER_LEG_HEIGHT] = 0.90 / h;
    expected[SK_MEASURE_KNEE_HEIGHT] = 0.50 / h;
    expected[SK_MEASURE_ANKLE_HEIGHT] = 0.08 / h;
    expected[SK_MEASURE_CHEST_HEIGHT] = 1.20 / h;
    expected[SK_MEASURE_NECK_HEIGHT] = 1.44 / h;
    expected[SK_MEASURE_UPPER_ARM_HEIGHT] = 1.40 / h;
    expected[SK_MEASURE_HIP_WIDTH] = 0.2 / h;
    expected[SK_MEASURE_THIGH] = 0.4 / h; /* 0.25 */
    expected[SK_MEASURE_SHIN] = 0.42 / h;
    expected[SK_MEASURE_FOOT] = hypot(0.08, 0.12) / h;
    expected[SK_MEASURE_SPINE] = 0.48 / h;
    expected[SK_MEASURE_NECK] = hypot(0.16, 0.02) / h;
    expected[SK_MEASURE_SHOULDER_WIDTH] = 0.36 / h;
    expected[SK_MEASURE_UPPER_ARM] = 0.28 / h;
    expected[SK_MEASURE_FOREARM] = 0.25 / h; /* the mean of 0.24 and 0.26 */
    expected[SK_MEASURE_NECK_FRONT] = -0.02 / h;
    expected[SK_MEASURE_UPPER_ARM_FRONT] = -0.04 / h;
    assert_float_equal(p.fraction[SK_MEASURE_THIGH], 0.25, 1e-6);
    for (int m = 0; m < SK_MEASURE_COUNT; ++m)
        if (fabs((double)p.fraction[m] - expected[m]) > 1e-5)
            fail_msg("%s: %.6f, built %.6f", sk_measure_name((enum sk_measure)m),
                     (double)p.fraction[m], expected[m]);
    sk_skeleton_fini(&sk);
}

static void
scaling_a_skeleton_leaves_its_proportions_unchanged(void **state)
{
    (void)state;
    struct sk_skeleton one, two, humanoid;
    struct em_error err = {{0}};
    assert_int_equal(build_person(1.0f, 1, &one, &err), EM_OK);
    assert_int_equal(build_person(2.0f, 1, &two, &err), EM_OK);
    struct sk_proportions a, b;
    assert_int_equal(sk_humanoid_proportions(&one, "one", &a, &err), EM_OK);
    assert_int_equal(sk_humanoid_proportions(&two, "two", &b, &err), EM_OK);
    assert_float_equal(b.head_height_m, 2.0f * a.head_height_m, 1e-5);
    for (int m = 0; m < SK_MEASURE_COUNT; ++m)
        assert_float_equal(a.fraction[m], b.fraction[m], 1e-5);
    /* The default humanoid fitted to another height: the same proportions. */
    load_humanoid(&humanoid);
    assert_int_equal(sk_humanoid_proportions(&humanoid, "humanoid", &a, &err), EM_OK);
    assert_int_equal(sk_humanoid_fit(&humanoid, 1.5f, 0.0f, &err), EM_OK);
    assert_int_equal(sk_humanoid_proportions(&humanoid, "humanoid", &b, &err), EM_OK);
    assert_float_equal(b.head_height_m, a.head_height_m * 1.5f / 1.75f, 1e-4);
    for (int m = 0; m < SK_MEASURE_COUNT; ++m)
        assert_float_equal(a.fraction[m], b.fraction[m], 1e-5);
    sk_skeleton_fini(&one);
    sk_skeleton_fini(&two);
    sk_skeleton_fini(&humanoid);
}

static void
proportions_need_toes_and_feet_standing_on_the_floor(void **state)
{
    (void)state;
    struct sk_skeleton sk;
    struct sk_proportions p;
    struct em_error err = {{0}};
    /* No toes: the floor is unknown (a foot joint is the ankle). */
    assert_int_equal(build_person(1.0f, 0, &sk, &err), EM_OK);
    assert_int_equal(sk_humanoid_proportions(&sk, "toeless.bvh", &p, &err), EM_ERROR_PARSE);
    assert_non_null(strstr(err.message, "toeless.bvh"));
    assert_non_null(strstr(err.message, "no rightToes joint"));
    sk_skeleton_fini(&sk);
    /* Feet pointing down: a rest pose that is no standing pose (as CC3's). */
    assert_int_equal(build_person(1.0f, 2, &sk, &err), EM_OK);
    assert_int_equal(sk_humanoid_proportions(&sk, "cc3.bvh", &p, &err), EM_ERROR_PARSE);
    assert_non_null(strstr(err.message, "cc3.bvh"));
    assert_non_null(strstr(err.message, "does not stand on its feet"));
    sk_skeleton_fini(&sk);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_humanoid_loads_and_is_valid),
        cmocka_unit_test(fitting_to_a_height_scales_every_bone_alike),
        cmocka_unit_test(fitting_an_arm_span_changes_only_the_arms),
        cmocka_unit_test(joints_given_out_of_order_are_sorted_parents_first),
        cmocka_unit_test(forward_kinematics_turns_the_subtree),
        cmocka_unit_test(bad_skeleton_files_are_rejected_with_a_reason),
        cmocka_unit_test(a_humanoid_missing_a_joint_is_rejected),
        cmocka_unit_test(a_humanoid_nesting_otherwise_is_rejected_naming_the_parent),
        cmocka_unit_test(name_maps_know_cmu_and_mixamo),
        cmocka_unit_test(name_map_reads_a_set_of_names_in_its_convention),
        cmocka_unit_test(a_rig_missing_bones_is_refused_naming_found_missing_and_closest),
        cmocka_unit_test(bone_map_files_are_checked_field_by_field),
        cmocka_unit_test(a_skeleton_of_20000_joints_is_refused_in_well_under_a_second),
        cmocka_unit_test(a_skeleton_at_the_joint_limit_is_built_in_well_under_a_second),
        cmocka_unit_test(proportions_are_the_lengths_built_over_the_head_joints_height),
        cmocka_unit_test(scaling_a_skeleton_leaves_its_proportions_unchanged),
        cmocka_unit_test(proportions_need_toes_and_feet_standing_on_the_floor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
