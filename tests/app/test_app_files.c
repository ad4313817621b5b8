/*
 * The program's files, run as the real binary: --record writes the frames exactly as
 * read (record, replay, record again: identical files, identical floats), `embody solve`
 * writes a BVH that reads back with one frame per stream row, the VRM names and a head
 * where the headset was, `embody mocap2stream` reproduces the reference streams, and
 * `embody eval` runs the protocol.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "app_run.h"
#include "embody/hand.h"
#include "embody/m_math.h"
#include "embody/stream.h"
#include "../hand/hand_poses.h"

/* A hang guard: a sanitizer build runs eval's probes of every clip in 80 s alone, and
 * twice that beside another test on two cores. */
#define TIMEOUT_MS 300000

static char g_stream[1024]; /* tests/data/streams/cmu_14_04.csv */
static char g_clip[1024];   /* tests/data/mocap/cmu_14_04.bvh */

static void
run_ok(const char *const *args, struct app_run_result *r)
{
    app_run(args, (const char *const[]){"XR_RUNTIME_JSON=/nonexistent/runtime.json", NULL},
            TIMEOUT_MS, r);
    app_run_expect_exit(r, 0);
}

static void
load_stream(const char *path, struct st_stream *out)
{
    struct em_error err = {{0}};
    if (st_stream_load(path, out, &err) != EM_OK)
        fail_msg("%s", err.message);
}

static void
load_bvh(const char *path, struct st_bvh *out)
{
    struct em_error err = {{0}};
    if (st_bvh_load(path, out, &err) != EM_OK)
        fail_msg("%s", err.message);
}

static void
expect_same_poses(const struct em_tracking_frame *a, const struct em_tracking_frame *b, int row)
{
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        const struct em_device_pose *x = &a->device[d], *y = &b->device[d];
        if (memcmp(x->pose.position_m, y->pose.position_m, sizeof(vec3)) != 0 ||
            memcmp(x->pose.orientation, y->pose.orientation, sizeof(versor)) != 0 ||
            x->flags != y->flags)
            fail_msg("row %d, %s: the recorded pose differs from the file's", row,
                     em_device_name((enum em_device)d));
    }
}

static void
record_then_replay_gives_the_same_frames(void **state)
{
    (void)state;
    char b[1024], c[1024];
    app_run_scratch_path("record-b", "csv", b, sizeof b);
    app_run_scratch_path("record-c", "csv", c, sizeof c);
    struct app_run_result r;
    run_ok((const char *[]){"--replay", g_stream, "--fast", "--no-window", "--record", b, NULL},
           &r);
    app_run_expect_text(r.out, "recorded ");
    app_run_result_fini(&r);
    run_ok((const char *[]){"--replay", b, "--fast", "--no-window", "--record", c, NULL}, &r);
    app_run_result_fini(&r);

    size_t b_size, c_size;
    char *b_text = app_run_read_file(b, &b_size);
    char *c_text = app_run_read_file(c, &c_size);
    assert_true(b_size > 1000);
    if (b_size != c_size || memcmp(b_text, c_text, b_size) != 0)
        fail_msg("%s and %s differ", b, c);
    free(b_text);
    free(c_text);

    /* B holds A's frames: every float identical, every time the same. */
    struct st_stream sa, sb;
    load_stream(g_stream, &sa);
    load_stream(b, &sb);
    assert_int_equal(sa.frame_count, sb.frame_count);
    for (int i = 0; i < sa.frame_count; ++i) {
        expect_same_poses(&sa.frames[i], &sb.frames[i], i + 2);
        if (fabs((sa.frames[i].time_s - sa.frames[0].time_s) - sb.frames[i].time_s) > 1e-12)
            fail_msg("row %d: t %.17g, expected %.17g", i + 2, sb.frames[i].time_s,
                     sa.frames[i].time_s);
    }
    st_stream_fini(&sa);
    st_stream_fini(&sb);
    remove(b);
    remove(c);
}

/* The VRM names the protocol scores (PROTOCOL section 3). */
static const char *const k_scored[] = {
    "hips",          "neck",          "head",          "leftUpperArm", "leftLowerArm", "leftHand",
    "rightUpperArm", "rightLowerArm", "rightHand",     "leftUpperLeg", "leftLowerLeg", "leftFoot",
    "leftToes",      "rightUpperLeg", "rightLowerLeg", "rightFoot",    "rightToes"};
#define SCORED_COUNT ((int)(sizeof k_scored / sizeof k_scored[0]))

/* Checks the BVH against the stream: a frame per row, the stream's period, the scored
 * names, metres in the stream's frame (the head joint stays near the headset). */
static void
check_solved_bvh(const char *bvh_path, const struct st_stream *stream)
{
    struct st_bvh bvh;
    load_bvh(bvh_path, &bvh);
    assert_int_equal(bvh.frame_count, stream->frame_count);
    const double period =
        (stream->frames[stream->frame_count - 1].time_s - stream->frames[0].time_s) /
        (double)(stream->frame_count - 1);
    assert_true(fabs(bvh.frame_time_s - period) < 1e-6);
    for (int i = 0; i < SCORED_COUNT; ++i)
        if (st_bvh_find(&bvh, k_scored[i]) < 0)
            fail_msg("%s: no joint \"%s\"", bvh_path, k_scored[i]);

    double(*position)[3] = calloc((size_t)bvh.joint_count, sizeof *position);
    double(*rotation)[4] = calloc((size_t)bvh.joint_count, sizeof *rotation);
    assert_non_null(position);
    assert_non_null(rotation);
    const int head = st_bvh_find(&bvh, "head");
    double worst_m = 0.0;
    for (int f = 0; f < bvh.frame_count; ++f) {
        st_bvh_frame_pose(&bvh, f, position, rotation);
        const float *eye = stream->frames[f].device[EM_DEVICE_HEAD].pose.position_m;
        double d2 = 0.0;
        for (int k = 0; k < 3; ++k)
            d2 += pow(position[head][k] - (double)eye[k], 2);
        const double d = sqrt(d2);
        worst_m = fmax(worst_m, d);
    }
    /* The headset sits 8 cm up and 9 cm forward of the head joint: about 12 cm. */
    if (!(worst_m < 0.2))
        fail_msg("%s: the head joint is up to %.3f m from the headset", bvh_path, worst_m);
    free(position);
    free(rotation);
    st_bvh_fini(&bvh);
}

static void
solve_writes_a_bvh_frame_per_row_with_vrm_names(void **state)
{
    (void)state;
    char out[1024];
    app_run_scratch_path("solve-height", "bvh", out, sizeof out);
    struct app_run_result r;
    run_ok((const char *[]){"solve", g_stream, "-o", out, "--height", "1.75", NULL}, &r);
    app_run_expect_text(r.err, "embody solve: ");
    app_run_result_fini(&r);
    struct st_stream stream;
    load_stream(g_stream, &stream);
    check_solved_bvh(out, &stream);
    st_stream_fini(&stream);
    /* No finger columns: no finger joints (the BVH is the body's alone). */
    struct st_bvh bvh;
    load_bvh(out, &bvh);
    assert_int_equal(st_bvh_find(&bvh, "leftIndexProximal"), -1);
    st_bvh_fini(&bvh);
    remove(out);
}

static void quat_relative(const double *a, const double *b, double *out);

/* The angle (degrees) between two rotations, quaternions x, y, z, w (not quite unit: the
 * expected ones are floats): from the relative rotation's vector and scalar parts, which
 * keeps its precision near 0 where acos of the dot product does not. */
static double
rotation_angle_deg(const double *a, const double *b)
{
    double rel[4];
    quat_relative(a, b, rel);
    const double v = sqrt(rel[0] * rel[0] + rel[1] * rel[1] + rel[2] * rel[2]);
    return 2.0 * atan2(v, fabs(rel[3])) * 180.0 / 3.14159265358979323846;
}

/* conj(a) * b, doubles. */
static void
quat_relative(const double *a, const double *b, double *out)
{
    const double ax = -a[0], ay = -a[1], az = -a[2], aw = a[3];
    out[0] = aw * b[0] + ax * b[3] + ay * b[2] - az * b[1];
    out[1] = aw * b[1] - ax * b[2] + ay * b[3] + az * b[0];
    out[2] = aw * b[2] + ax * b[1] - ay * b[0] + az * b[3];
    out[3] = aw * b[3] - ax * b[0] - ay * b[1] - az * b[2];
}

/* A stream with finger columns (PROTOCOL section 1b) solved to BVH: fifteen finger
 * joints a hand under its hand joint, whose local rotations are the hand model's for the
 * stream's angles (the left hand cycling through the test poses, the right hand's fingers
 * given every other row and relaxed in between); a stream without them has no finger
 * joints (the other solve tests). */
static void
solve_writes_finger_joints_with_the_streams_angles(void **state)
{
    (void)state;
    struct st_stream body, with = {0};
    load_stream(g_stream, &body);
    struct hd_model model[HD_HAND_COUNT];
    struct em_error err = {{0}};
    for (int h = 0; h < HD_HAND_COUNT; ++h)
        assert_int_equal(
            hd_model_init(&(struct hd_model_desc){.hand = (enum hd_hand)h}, &model[h], &err),
            EM_OK);
    static const int poses[] = {POSE_POINT, POSE_FIST, POSE_OPEN, POSE_THUMBS_UP, POSE_PINCH};
    const int rows = body.frame_count < 120 ? body.frame_count : 120;
    for (int i = 0; i < rows; ++i) {
        struct st_fingers fingers;
        memset(&fingers, 0, sizeof fingers);
        struct hd_pose pose;
        test_pose_make(&model[HD_LEFT], poses[(i / 10) % 5], &pose);
        st_fingers_set_pose(&fingers, HD_LEFT, &pose);
        if (i % 2 == 0) {
            test_pose_make(&model[HD_RIGHT], poses[(i / 7) % 5], &pose);
            st_fingers_set_pose(&fingers, HD_RIGHT, &pose);
        }
        assert_int_equal(st_stream_append_fingers(&with, &body.frames[i], &fingers), EM_OK);
    }
    st_stream_fini(&body);
    char csv[1024], out[1024];
    app_run_scratch_path("solve-fingers", "csv", csv, sizeof csv);
    app_run_scratch_path("solve-fingers", "bvh", out, sizeof out);
    if (st_stream_save(csv, &with, &err) != EM_OK)
        fail_msg("%s", err.message);
    st_stream_fini(&with);
    struct st_stream stream; /* as the file has the angles */
    load_stream(csv, &stream);
    assert_true(stream.fingers != NULL);
    struct app_run_result r;
    run_ok((const char *[]){"solve", csv, "-o", out, "--height", "1.75", "-q", NULL}, &r);
    app_run_result_fini(&r);
    check_solved_bvh(out, &stream);

    struct st_bvh bvh;
    load_bvh(out, &bvh);
    int joint[HD_HAND_COUNT][HD_JOINT_COUNT], parent[HD_HAND_COUNT][HD_JOINT_COUNT];
    for (int h = 0; h < HD_HAND_COUNT; ++h)
        for (int j = 0; j < HD_JOINT_COUNT; ++j) {
            joint[h][j] = st_bvh_find(&bvh, hd_vrm_bone_name((enum hd_hand)h, j));
            if (joint[h][j] < 0)
                fail_msg("%s: no joint %s", out, hd_vrm_bone_name((enum hd_hand)h, j));
            parent[h][j] = bvh.joints[joint[h][j]].parent;
            const char *want = j % 3 == 0 ? (h ? "rightHand" : "leftHand")
                                          : hd_vrm_bone_name((enum hd_hand)h, j - 1);
            assert_string_equal(bvh.joints[parent[h][j]].name, want);
        }
    /* The hand model solve sized: the default hand scaled so its middle knuckle is where
     * the file has it. */
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        const double *o = bvh.joints[joint[h][HD_MIDDLE * HD_FINGER_JOINTS]].offset;
        const double knuckle_m = sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
        const float length_m =
            HD_DEFAULT_HAND_LENGTH_M * (float)knuckle_m / m_vec3_length(model[h].base_m[HD_MIDDLE]);
        assert_int_equal(hd_model_init(&(struct hd_model_desc){.hand = (enum hd_hand)h,
                                                               .hand_length_m = length_m},
                                       &model[h], &err),
                         EM_OK);
    }
    double(*position)[3] = calloc((size_t)bvh.joint_count, sizeof *position);
    double(*rotation)[4] = calloc((size_t)bvh.joint_count, sizeof *rotation);
    assert_non_null(position);
    assert_non_null(rotation);
    double worst_deg = 0.0;
    for (int f = 0; f < bvh.frame_count; ++f) {
        st_bvh_frame_pose(&bvh, f, position, rotation);
        for (int h = 0; h < HD_HAND_COUNT; ++h) {
            struct hd_pose pose;
            if (stream.fingers[f].valid[h])
                st_fingers_get_pose(&stream.fingers[f], (enum hd_hand)h, &pose);
            else
                hd_pose_relaxed(&model[h], &pose);
            float want[HD_JOINT_COUNT][4], offset[HD_JOINT_COUNT][3];
            hd_pose_humanoid_locals(&model[h], &pose, want, offset);
            for (int j = 0; j < HD_JOINT_COUNT; ++j) {
                double local[4], w[4];
                quat_relative(rotation[parent[h][j]], rotation[joint[h][j]], local);
                for (int k = 0; k < 4; ++k)
                    w[k] = (double)want[j][k];
                worst_deg = fmax(worst_deg, rotation_angle_deg(local, w));
            }
        }
    }
    printf("# solve's finger joints against the stream's angles: worst %.5f degrees over %d "
           "frames\n",
           worst_deg, bvh.frame_count);
    if (!(worst_deg < 0.01))
        fail_msg("%s: a finger joint is %.4f degrees from the stream's pose", out, worst_deg);
    free(position);
    free(rotation);
    st_bvh_fini(&bvh);
    st_stream_fini(&stream);
    /* The BVH with fingers is a known body for the next solve (its fingers left out). */
    char again[1024];
    app_run_scratch_path("solve-fingers-again", "bvh", again, sizeof again);
    run_ok((const char *[]){"solve", g_stream, "-o", again, "--avatar", out, "-q", NULL}, &r);
    app_run_result_fini(&r);
    remove(again);
    remove(csv);
    remove(out);
}

/* Length of the bone from `joint`'s parent to `joint` in a BVH (file units). */
static double
bvh_bone_length(const struct st_bvh *bvh, const char *joint)
{
    const int j = st_bvh_find(bvh, joint);
    assert_true(j >= 0);
    const double *o = bvh->joints[j].offset;
    return sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
}

static void
solve_with_a_known_body_uses_the_clip_skeleton(void **state)
{
    (void)state;
    char out[1024];
    app_run_scratch_path("solve-known", "bvh", out, sizeof out);
    struct app_run_result r;
    run_ok((const char *[]){"solve", g_stream, "-o", out, "--avatar", g_clip, "-q", NULL}, &r);
    assert_string_equal(r.err, "");
    app_run_result_fini(&r);
    struct st_stream stream;
    load_stream(g_stream, &stream);
    check_solved_bvh(out, &stream);

    /* The bones are the clip's (its HIERARCHY in metres), not the default humanoid's. */
    struct st_bvh clip, solved;
    load_bvh(g_clip, &clip);
    load_bvh(out, &solved);
    struct sk_skeleton known;
    struct em_error err = {{0}};
    if (st_bvh_to_humanoid(&clip, SK_NAMES_CMU, st_bvh_guess_unit_scale(&clip), g_clip, &known,
                           &err) != EM_OK)
        fail_msg("%s", err.message);
    static const char *const bones[] = {"leftLowerArm", "leftHand", "rightLowerLeg", "rightFoot",
                                        "leftLowerLeg"};
    for (int i = 0; i < 5; ++i) {
        const int j = sk_skeleton_find(&known, bones[i]);
        assert_true(j >= 0);
        const double expected = (double)known.length_m[j];
        const double got = bvh_bone_length(&solved, bones[i]);
        if (fabs(got - expected) > 1e-4)
            fail_msg("%s: bone %.5f m, the clip's is %.5f m", bones[i], got, expected);
    }
    sk_skeleton_fini(&known);
    st_bvh_fini(&clip);
    st_bvh_fini(&solved);
    st_stream_fini(&stream);
    remove(out);
}

static void
expect_streams_within(const struct st_stream *got, const struct st_stream *want, double tol,
                      const char *what)
{
    assert_int_equal(got->frame_count, want->frame_count);
    for (int i = 0; i < got->frame_count; ++i) {
        const struct em_tracking_frame *g = &got->frames[i], *w = &want->frames[i];
        double worst = fabs(g->time_s - w->time_s);
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            for (int k = 0; k < 3; ++k)
                worst = fmax(worst, fabs((double)g->device[d].pose.position_m[k] -
                                         (double)w->device[d].pose.position_m[k]));
            for (int k = 0; k < 4; ++k)
                worst = fmax(worst, fabs((double)g->device[d].pose.orientation[k] -
                                         (double)w->device[d].pose.orientation[k]));
            assert_int_equal(g->device[d].flags, w->device[d].flags);
        }
        if (!(worst <= tol))
            fail_msg("%s, row %d: off by %g (more than %g)", what, i + 2, worst, tol);
    }
}

static void
mocap2stream_reproduces_the_reference_streams(void **state)
{
    (void)state;
    static const char *const clips[] = {"cmu_14_04", "cmu_05_04", "cmu_91_17"};
    for (int i = 0; i < 3; ++i) {
        char clip[1024], reference[1024], rel[128], out[1024];
        snprintf(rel, sizeof rel, "tests/data/mocap/%s.bvh", clips[i]);
        app_run_source_path(rel, clip, sizeof clip);
        snprintf(rel, sizeof rel, "tests/data/streams/%s.csv", clips[i]);
        app_run_source_path(rel, reference, sizeof reference);
        app_run_scratch_path(clips[i], "csv", out, sizeof out);
        struct app_run_result r;
        run_ok((const char *[]){"mocap2stream", clip, "-o", out, NULL}, &r);
        app_run_result_fini(&r);
        struct st_stream got, want;
        load_stream(out, &got);
        load_stream(reference, &want);
        expect_streams_within(&got, &want, 1e-5, clips[i]);
        st_stream_fini(&got);
        st_stream_fini(&want);
        remove(out);
    }
}

static void
mocap2stream_writes_to_stdout_without_o(void **state)
{
    (void)state;
    struct app_run_result r;
    run_ok((const char *[]){"mocap2stream", g_clip, "-q", NULL}, &r);
    struct st_stream got, want;
    struct em_error err = {{0}};
    if (st_stream_parse(r.out, "stdout", &got, &err) != EM_OK)
        fail_msg("%s", err.message);
    load_stream(g_stream, &want);
    expect_streams_within(&got, &want, 1e-5, "stdout");
    st_stream_fini(&got);
    st_stream_fini(&want);
    app_run_result_fini(&r);
}

static void
mocap2stream_names_the_joints_a_clip_lacks(void **state)
{
    (void)state;
    /* A BVH that embody wrote has VRM names: it makes a stream again (its hands end in
     * End Sites, the knuckles); without a joint named as a left hand it is refused,
     * naming the joint. */
    char solved[1024], renamed[1024];
    app_run_scratch_path("no-cmu", "bvh", solved, sizeof solved);
    app_run_scratch_path("no-hand", "bvh", renamed, sizeof renamed);
    struct app_run_result r;
    run_ok((const char *[]){"solve", g_stream, "-o", solved, "--height", "1.7", "-q", NULL}, &r);
    app_run_result_fini(&r);
    run_ok((const char *[]){"mocap2stream", solved, "-o", "-", "-q", NULL}, &r);
    app_run_result_fini(&r);
    FILE *in = fopen(solved, "rb");
    assert_non_null(in);
    fseek(in, 0, SEEK_END);
    const long n = ftell(in);
    fseek(in, 0, SEEK_SET);
    char *text = calloc(1, (size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, in), (size_t)n);
    fclose(in);
    char *hand = strstr(text, "JOINT leftHand");
    assert_non_null(hand);
    memcpy(hand + 6, "leftPaws", 8);
    FILE *out = fopen(renamed, "wb");
    assert_non_null(out);
    fputs(text, out);
    fclose(out);
    free(text);
    app_run((const char *[]){"mocap2stream", renamed, NULL}, NULL, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "leftHand");
    app_run_result_fini(&r);
    remove(solved);
    remove(renamed);
}

static void
eval_runs_the_protocol(void **state)
{
    (void)state;
    char clips[1024], json[1024];
    app_run_source_path("tests/data/mocap", clips, sizeof clips);
    app_run_scratch_path("eval", "json", json, sizeof json);
    remove(json);
    struct app_run_result r;
    run_ok((const char *[]){"eval", clips, "--frames", "30", "--json", json, "--quiet", NULL}, &r);
    app_run_expect_text(r.out, "known body: MPJPE");
    app_run_expect_text(r.out, "height only: MPJPE");
    app_run_result_fini(&r);
    size_t size = 0;
    char *text = app_run_read_file(json, &size);
    assert_true(size > 100 && text[0] == '{');
    free(text);
    remove(json);

    app_run((const char *[]){"eval", "--frames", "x", NULL}, NULL, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--frames");
    app_run_result_fini(&r);
}

/* Copies a file byte for byte (a scratch copy of a clip the test may lose). */
static void
expect_file_holds(const char *path, const char *text)
{
    size_t size = 0;
    char *got = app_run_read_file(path, &size);
    if (size != strlen(text) || memcmp(got, text, size) != 0)
        fail_msg("%s was changed: it holds \"%.60s\"", path, got);
    free(got);
}

/* The number of entries in the folder of `path`. */
static int
entries_beside(const char *path)
{
    char dir[2048]; /* the callers' paths are up to 1100 bytes */
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n++;
    closedir(d);
    return n;
}

static void
a_failed_write_to_a_device_leaves_the_device(void **state)
{
    (void)state;
    struct stat before, after;
    assert_int_equal(stat("/dev/full", &before), 0);
    const int entries = entries_beside("/dev/full");
    struct app_run_result r;
    app_run((const char *[]){"mocap2stream", g_clip, "-o", "/dev/full", NULL}, NULL, TIMEOUT_MS,
            &r);
    app_run_expect_exit(&r, 1);
    app_run_expect_text(r.err, "/dev/full: write error");
    app_run_result_fini(&r);
    assert_int_equal(stat("/dev/full", &after), 0);
    assert_true(S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev);
    assert_int_equal(entries_beside("/dev/full"), entries);
}

static void
a_full_disk_leaves_existing_outputs_untouched_and_creates_nothing(void **state)
{
    (void)state;
    /* A folder of its own, so that other tests' files do not change the count. */
    char dir[1024], csv[1100], bvh[1100], fresh[1100];
    app_run_scratch_path("full-disk", "d", dir, sizeof dir);
    mkdir(dir, 0777);
    snprintf(csv, sizeof csv, "%s/kept.csv", dir);
    snprintf(bvh, sizeof bvh, "%s/kept.bvh", dir);
    snprintf(fresh, sizeof fresh, "%s/new.csv", dir);
    FILE *f = fopen(csv, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    app_run_copy_file(csv, bvh);
    remove(fresh);
    const int entries = entries_beside(csv);
    app_run_set_file_size_limit(8192);
    struct app_run_result r;
    app_run((const char *[]){"mocap2stream", g_clip, "-o", csv, NULL}, NULL, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 1);
    app_run_expect_text(r.err, "File too large");
    app_run_result_fini(&r);
    app_run((const char *[]){"mocap2stream", g_clip, "-o", fresh, NULL}, NULL, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 1);
    app_run_result_fini(&r);
    app_run((const char *[]){"solve", g_stream, "-o", bvh, "--height", "1.7", "-q", NULL}, NULL,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 1);
    app_run_result_fini(&r);
    app_run((const char *[]){"--replay", g_stream, "--fast", "--no-window", "--record", csv, NULL},
            (const char *const[]){"XR_RUNTIME_JSON=/nonexistent/runtime.json", NULL}, TIMEOUT_MS,
            &r);
    app_run_expect_text(r.err, "File too large");
    /* A recording keeps the whole rows that reached the disk beside the target, under a
     * name the summary gives (issue 20), and leaves the target as it was: kept.csv is
     * there, so the recording goes to kept.1.csv (issue 41). */
    char partial[1200];
    snprintf(partial, sizeof partial, "%s/kept.1.csv.partial", dir);
    if (access(partial, F_OK) == 0) {
        app_run_expect_text(r.out, partial);
        remove(partial);
    }
    app_run_result_fini(&r);
    app_run_set_file_size_limit(0);
    expect_file_holds(csv, "precious\n");
    expect_file_holds(bvh, "precious\n");
    assert_int_equal(access(fresh, F_OK), -1);
    assert_int_equal(entries_beside(csv), entries);
    remove(csv);
    remove(bvh);
    rmdir(dir);
}

static void
an_output_that_is_an_input_is_refused(void **state)
{
    (void)state;
    char clip[1024], alias[1024], stream[1024];
    app_run_scratch_path("own-clip", "bvh", clip, sizeof clip);
    app_run_scratch_path("own-clip-link", "csv", alias, sizeof alias);
    app_run_scratch_path("own-stream", "csv", stream, sizeof stream);
    app_run_copy_file(g_clip, clip);
    app_run_copy_file(g_stream, stream);
    remove(alias);
    assert_int_equal(link(clip, alias), 0); /* another name, the same file */
    size_t clip_size = 0, stream_size = 0;
    char *clip_text = app_run_read_file(clip, &clip_size);
    char *stream_text = app_run_read_file(stream, &stream_size);
    struct app_run_result r;
    app_run((const char *[]){"mocap2stream", clip, "-o", alias, NULL}, NULL, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "is the same file as the clip");
    app_run_result_fini(&r);
    app_run((const char *[]){"solve", stream, "-o", clip, "--avatar", clip, NULL}, NULL, TIMEOUT_MS,
            &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "is the same file as the avatar");
    app_run_result_fini(&r);
    app_run((const char *[]){"--replay", stream, "--no-window", "--avatar", clip, "--record", alias,
                             NULL},
            NULL, TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--record: ");
    app_run_expect_text(r.err, "is the same file as --avatar's clip");
    app_run_result_fini(&r);
    char *clip_after = app_run_read_file(clip, NULL);
    char *stream_after = app_run_read_file(stream, NULL);
    assert_memory_equal(clip_after, clip_text, clip_size);
    assert_memory_equal(stream_after, stream_text, stream_size);
    free(clip_after);
    free(stream_after);
    free(clip_text);
    free(stream_text);
    remove(clip);
    remove(alias);
    remove(stream);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    app_run_source_path("tests/data/streams/cmu_14_04.csv", g_stream, sizeof g_stream);
    app_run_source_path("tests/data/mocap/cmu_14_04.bvh", g_clip, sizeof g_clip);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(record_then_replay_gives_the_same_frames),
        cmocka_unit_test(solve_writes_a_bvh_frame_per_row_with_vrm_names),
        cmocka_unit_test(solve_with_a_known_body_uses_the_clip_skeleton),
        cmocka_unit_test(solve_writes_finger_joints_with_the_streams_angles),
        cmocka_unit_test(mocap2stream_reproduces_the_reference_streams),
        cmocka_unit_test(mocap2stream_writes_to_stdout_without_o),
        cmocka_unit_test(mocap2stream_names_the_joints_a_clip_lacks),
        cmocka_unit_test(eval_runs_the_protocol),
        cmocka_unit_test(a_failed_write_to_a_device_leaves_the_device),
        cmocka_unit_test(a_full_disk_leaves_existing_outputs_untouched_and_creates_nothing),
        cmocka_unit_test(an_output_that_is_an_input_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
