/*
 * Evaluation tests: the metrics on synthetic motions with hand-worked answers, the
 * do-nothing baseline on a clip moved rigidly under the head, the alignment of the true
 * joints with the stream's rows, the options, and runs over folders with a malformed
 * clip or manifest (reported with the file and line while the other clips still run).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/stream.h"

#define CMU_SCALE 0.056444
#define TEST_PI 3.14159265358979323846
#define CLIP_DIR EMBODY_SOURCE_DIR "/tests/data/mocap"
/* The smallest of the public clips. */
#define SMALL_CLIP CLIP_DIR "/cmu_127_17.bvh"

#define assert_near(a, b, tol)                                                                 \
    do {                                                                                       \
        const double near_a = (a), near_b = (b);                                               \
        if (!(fabs(near_a - near_b) <= (tol)))                                                 \
            fail_msg("%s = %.12g, expected %.12g within %g", #a, near_a, near_b, (double)(tol)); \
    } while (0)

static void
expect_message(const char *message, const char *want)
{
    if (!strstr(message, want))
        fail_msg("message \"%s\" lacks \"%s\"", message, want);
}

/* ---- Synthetic motions ---- */

/* A motion whose joints stand at distinct, arbitrary places that drift slowly. */
static void
make_motion(struct ev_motion *m, int frames)
{
    assert_int_equal(ev_motion_init(m, frames, 60.0), EM_OK);
    for (int f = 0; f < frames; ++f)
        for (int j = 0; j < EV_JOINT_COUNT; ++j) {
            m->position_m[f][j][0] = 0.1 * j + 0.001 * f;
            m->position_m[f][j][1] = 1.7 - 0.1 * j;
            m->position_m[f][j][2] = 0.05 * (j % 3) - 0.002 * f;
        }
}

static void
copy_motion(const struct ev_motion *src, struct ev_motion *dst)
{
    assert_int_equal(ev_motion_init(dst, src->frame_count, src->fps), EM_OK);
    memcpy(dst->position_m, src->position_m, (size_t)src->frame_count * sizeof *src->position_m);
}

static void
mpjpe_of_an_offset_on_one_hand_is_shared_out_by_group(void **state)
{
    (void)state;
    struct ev_motion truth, ours;
    make_motion(&truth, 30);
    copy_motion(&truth, &ours);
    /* 10 cm (a 6-8-10 triangle) off on the left hand only, at every frame. */
    for (int f = 0; f < ours.frame_count; ++f) {
        ours.position_m[f][EV_LEFT_HAND][0] += 0.06;
        ours.position_m[f][EV_LEFT_HAND][1] -= 0.08;
    }
    double cm[EV_GROUP_COUNT], joint_cm[EV_JOINT_COUNT];
    ev_mpjpe_cm(&ours, &truth, cm, joint_cm);
    assert_near(cm[EV_GROUP_ALL], 10.0 / 17.0, 1e-9);
    assert_near(cm[EV_GROUP_UPPER], 10.0 / 8.0, 1e-9);
    assert_near(cm[EV_GROUP_LOWER], 0.0, 1e-12);
    assert_near(cm[EV_GROUP_HANDS], 10.0 / 2.0, 1e-9);
    assert_near(cm[EV_GROUP_FEET], 0.0, 1e-12);
    assert_near(joint_cm[EV_LEFT_HAND], 10.0, 1e-9);
    assert_near(joint_cm[EV_RIGHT_HAND], 0.0, 1e-12);
    ev_motion_fini(&ours);
    ev_motion_fini(&truth);
}

static void
mpjpe_of_a_whole_body_offset_is_the_offset_in_every_group(void **state)
{
    (void)state;
    struct ev_motion truth, ours;
    make_motion(&truth, 12);
    copy_motion(&truth, &ours);
    for (int f = 0; f < ours.frame_count; ++f)
        for (int j = 0; j < EV_JOINT_COUNT; ++j) {
            ours.position_m[f][j][0] += 0.03; /* 3-4-5: 5 cm */
            ours.position_m[f][j][2] -= 0.04;
        }
    double cm[EV_GROUP_COUNT];
    ev_mpjpe_cm(&ours, &truth, cm, NULL);
    for (int g = 0; g < EV_GROUP_COUNT; ++g)
        assert_near(cm[g], 5.0, 1e-9);
    ev_motion_fini(&ours);
    ev_motion_fini(&truth);
}

static void
groups_have_the_protocols_joints(void **state)
{
    (void)state;
    const int expected[EV_GROUP_COUNT] = {17, 8, 9, 2, 4};
    for (int g = 0; g < EV_GROUP_COUNT; ++g) {
        int n = 0;
        for (int j = 0; j < EV_JOINT_COUNT; ++j)
            n += ev_joint_in_group((enum ev_joint)j, (enum ev_group)g);
        assert_int_equal(n, expected[g]);
    }
    /* The table of PROTOCOL section 3, spot-checked at both ends of each limb. */
    assert_string_equal(ev_joint_cmu_name(EV_LEFT_UPPER_ARM), "LeftArm");
    assert_int_equal(ev_joint_bone(EV_LEFT_UPPER_ARM), SK_LEFT_UPPER_ARM);
    assert_string_equal(ev_joint_cmu_name(EV_RIGHT_TOES), "RightToeBase");
    assert_int_equal(ev_joint_bone(EV_RIGHT_TOES), SK_RIGHT_TOES);
    assert_string_equal(ev_joint_cmu_name(EV_LEFT_UPPER_LEG), "LeftUpLeg");
    assert_int_equal(ev_joint_bone(EV_NECK), SK_NECK);
    assert_true(ev_joint_in_group(EV_HIPS, EV_GROUP_LOWER));
    assert_false(ev_joint_in_group(EV_HIPS, EV_GROUP_UPPER));
    assert_true(ev_joint_in_group(EV_LEFT_TOES, EV_GROUP_FEET));
    assert_false(ev_joint_in_group(EV_LEFT_LOWER_LEG, EV_GROUP_FEET));
}

/* Feet that step to and fro (a 0.8 s period, 30 cm) from row `delay` on: the truth's
 * steps `delay` rows later. */
static void
make_stepping_feet(struct ev_motion *m, int frames, int delay, double standing_offset_m)
{
    make_motion(m, frames);
    const int feet[] = {EV_LEFT_FOOT, EV_LEFT_TOES, EV_RIGHT_FOOT, EV_RIGHT_TOES};
    for (int f = 0; f < frames; ++f)
        for (int i = 0; i < 4; ++i) {
            const double phase = 2.0 * TEST_PI * (f - delay) / 48.0 + (i < 2 ? 0.0 : TEST_PI);
            m->position_m[f][feet[i]][2] = 0.15 * sin(phase) + standing_offset_m;
        }
}

static void
feet_lag_is_the_delay_of_their_motion_whatever_their_standing_offset(void **state)
{
    (void)state;
    struct ev_motion truth, ours;
    struct ev_scores s;
    make_stepping_feet(&truth, 300, 0, 0.0);
    /* 6 rows (100 ms) late and 20 cm forward all the way: the offset must not count. */
    make_stepping_feet(&ours, 300, 6, 0.2);
    ev_score(&ours, &truth, &s);
    assert_near(s.lag_ms, 100.0, 2.0);
    ev_motion_fini(&ours);
    make_stepping_feet(&ours, 300, -3, -0.1); /* ahead by 50 ms */
    ev_score(&ours, &truth, &s);
    assert_near(s.lag_ms, -50.0, 2.0);
    ev_motion_fini(&ours);
    ev_motion_fini(&truth);
    /* Feet that stand still have no timing to measure. */
    make_motion(&truth, 300);
    copy_motion(&truth, &ours);
    ev_score(&ours, &truth, &s);
    assert_true(isnan(s.lag_ms));
    ev_motion_fini(&ours);
    ev_motion_fini(&truth);
}

static void
jitter_of_a_cubic_trajectory_is_its_third_derivative(void **state)
{
    (void)state;
    /* p(t) = a t^3 + b t^2 + c t + d has p''' = 6 a everywhere, and the third finite
     * difference of a cubic is exactly 6 a h^3, so jitter = mean over joints |6 a_j|. */
    struct ev_motion m;
    const double fps = 60.0;
    assert_int_equal(ev_motion_init(&m, 120, fps), EM_OK);
    double expected = 0.0;
    for (int j = 0; j < EV_JOINT_COUNT; ++j) {
        const double a[3] = {0.5 + 0.1 * j, -0.25, 0.2 * (j % 4)};
        expected += 6.0 * sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        for (int f = 0; f < m.frame_count; ++f) {
            const double t = f / fps;
            for (int k = 0; k < 3; ++k)
                m.position_m[f][j][k] = a[k] * t * t * t - 0.7 * t * t + 0.3 * t + 0.1 * k;
        }
    }
    expected /= EV_JOINT_COUNT;
    assert_near(ev_jitter_m_s3(&m), expected, 1e-5 * expected);
    ev_motion_fini(&m);
}

static void
jitter_of_linear_or_still_motion_is_zero(void **state)
{
    (void)state;
    struct ev_motion m;
    make_motion(&m, 50); /* every joint moves at a constant velocity */
    assert_near(ev_jitter_m_s3(&m), 0.0, 1e-6);
    for (int f = 0; f < m.frame_count; ++f)
        memcpy(m.position_m[f], m.position_m[0], sizeof m.position_m[0]);
    assert_near(ev_jitter_m_s3(&m), 0.0, 1e-9);
    ev_motion_fini(&m);
    /* A third difference needs four frames. */
    make_motion(&m, 3);
    assert_true(isnan(ev_jitter_m_s3(&m)));
    ev_motion_fini(&m);
}

static void
foot_skate_counts_only_frames_where_the_true_foot_is_planted(void **state)
{
    (void)state;
    struct ev_motion truth, ours;
    const int frames = 10;
    assert_int_equal(ev_motion_init(&truth, frames, 60.0), EM_OK);
    assert_int_equal(ev_motion_init(&ours, frames, 60.0), EM_OK);
    for (int f = 0; f < frames; ++f)
        for (int j = 0; j < EV_JOINT_COUNT; ++j) {
            /* Every true joint moves 5 cm a frame and ours 3 cm a frame... */
            truth.position_m[f][j][0] = 0.05 * f;
            ours.position_m[f][j][2] = 0.03 * f;
        }
    /* ...except the true left foot: still for frames 0-4, then 1 cm (exactly the limit,
     * still planted) to frame 5, 1.5 cm to frame 6 (not planted), still again after.
     * Our left foot slides 2 mm a frame throughout. */
    const double left_x[10] = {0, 0, 0, 0, 0, 0.01, 0.025, 0.025, 0.025, 0.025};
    for (int f = 0; f < frames; ++f) {
        truth.position_m[f][EV_LEFT_FOOT][0] = left_x[f];
        ours.position_m[f][EV_LEFT_FOOT][2] = 0.0;
        ours.position_m[f][EV_LEFT_FOOT][0] = 0.002 * f;
    }
    long planted = 0;
    const double skate = ev_foot_skate_cm(&ours, &truth, &planted);
    /* Planted: frames 1-5 and 7-9 of the left foot; nothing of the other three feet. */
    assert_int_equal(planted, 8);
    assert_near(skate, 0.2, 1e-9);
    /* No planted frame: no value. */
    for (int f = 0; f < frames; ++f)
        truth.position_m[f][EV_LEFT_FOOT][0] = 0.05 * f;
    assert_true(isnan(ev_foot_skate_cm(&ours, &truth, &planted)));
    assert_int_equal(planted, 0);
    ev_motion_fini(&ours);
    ev_motion_fini(&truth);
}

static void
timing_median_mean_and_percentile(void **state)
{
    (void)state;
    struct ev_timing t = {0};
    const double samples[] = {5, 1, 3, 4, 2};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; ++i)
        assert_int_equal(ev_timing_add(&t, samples[i]), EM_OK);
    assert_near(ev_timing_median_us(&t, 0, 3), 3.0, 0.0); /* 5 1 3 */
    assert_near(ev_timing_median_us(&t, 0, 4), 3.5, 0.0); /* 5 1 3 4 */
    assert_near(ev_timing_mean_us(&t, 1, 4), 2.5, 1e-12); /* 1 3 4 2 */
    assert_true(isnan(ev_timing_median_us(&t, 3, 5)));
    ev_timing_fini(&t);
    for (int i = 100; i >= 1; --i)
        assert_int_equal(ev_timing_add(&t, i), EM_OK);
    assert_near(ev_timing_percentile_us(&t, 0, t.count, 0.99), 99.0, 0.0);
    assert_near(ev_timing_percentile_us(&t, 0, t.count, 1.0), 100.0, 0.0);
    ev_timing_fini(&t);
}

/* ---- The do-nothing baseline ---- */

/* A view pose turned `heading` about +Y and pitched `pitch` (nodding). */
static void
set_head(struct em_tracking_frame *frame, double heading, double pitch, const double *p)
{
    memset(frame, 0, sizeof *frame);
    /* q = Ry(heading) * Rx(pitch). */
    const double ch = cos(heading / 2), sh = sin(heading / 2);
    const double cp = cos(pitch / 2), sp = sin(pitch / 2);
    struct em_device_pose *head = &frame->device[EM_DEVICE_HEAD];
    head->pose.orientation[0] = (float)(ch * sp);
    head->pose.orientation[1] = (float)(sh * cp);
    head->pose.orientation[2] = (float)(-sh * sp);
    head->pose.orientation[3] = (float)(ch * cp);
    for (int k = 0; k < 3; ++k)
        head->pose.position_m[k] = (float)p[k];
    head->flags = EM_POSE_ALL_VALID;
}

static void
do_nothing_turns_with_the_heading_and_ignores_nods(void **state)
{
    (void)state;
    struct ev_motion truth, out;
    make_motion(&truth, 3);
    assert_int_equal(ev_motion_init(&out, 3, 60.0), EM_OK);
    struct em_tracking_frame frames[3];
    const double h0[3] = {0.2, 1.6, -0.3}, h1[3] = {1.2, 1.5, 0.7};
    set_head(&frames[0], 0.0, 0.0, h0);
    set_head(&frames[1], TEST_PI / 2, 0.0, h1);  /* turned a quarter to the left */
    set_head(&frames[2], 0.0, -0.6, h0);      /* looking down where it started */
    ev_do_nothing(&truth, frames, &out);
    for (int j = 0; j < EV_JOINT_COUNT; ++j) {
        const double *p = truth.position_m[0][j];
        const double rel[3] = {p[0] - h0[0], p[1] - h0[1], p[2] - h0[2]};
        /* A quarter turn about +Y takes +Z to +X and +X to -Z. */
        assert_near(out.position_m[1][j][0], h1[0] + rel[2], 1e-6);
        assert_near(out.position_m[1][j][1], h1[1] + rel[1], 1e-6);
        assert_near(out.position_m[1][j][2], h1[2] - rel[0], 1e-6);
        for (int k = 0; k < 3; ++k) {
            assert_near(out.position_m[0][j][k], p[k], 1e-6);
            assert_near(out.position_m[2][j][k], p[k], 1e-6); /* a nod moves nothing */
        }
    }
    ev_motion_fini(&out);
    ev_motion_fini(&truth);
}

/* ---- Clips written for the tests ---- */

struct clip_text {
    char *header;     /* HIERARCHY ... "MOTION\n" */
    int header_lines; /* lines in `header` */
    int channels;
    double *first_row;
};

static char *
read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    return text;
}

/* The hierarchy and first frame of a real clip. */
static void
clip_text_load(const char *path, struct clip_text *out)
{
    char *text = read_file(path);
    char *motion = strstr(text, "MOTION\n");
    assert_non_null(motion);
    const size_t header_len = (size_t)(motion - text) + strlen("MOTION\n");
    out->header = malloc(header_len + 1);
    assert_non_null(out->header);
    memcpy(out->header, text, header_len);
    out->header[header_len] = '\0';
    out->header_lines = 0;
    for (const char *c = out->header; *c; ++c)
        out->header_lines += *c == '\n';
    const char *row = strstr(motion, "Frame Time:");
    assert_non_null(row);
    row = strchr(row, '\n') + 1;
    out->channels = 0;
    out->first_row = NULL;
    for (char *end = NULL;; row = end) {
        const double v = strtod(row, &end);
        if (end == row || *row == '\n')
            break;
        out->first_row = realloc(out->first_row, (size_t)(out->channels + 1) * sizeof(double));
        assert_non_null(out->first_row);
        out->first_row[out->channels++] = v;
        if (*end == '\n')
            break;
    }
    free(text);
}

static void
clip_text_fini(struct clip_text *c)
{
    free(c->header);
    free(c->first_row);
}

/* ZYX Euler angles (degrees, the order of CMU's root channels) <-> rotation matrices. */
static void
euler_zyx_to_matrix(const double *zyx_deg, double m[3][3])
{
    const double a = zyx_deg[0] * TEST_PI / 180, b = zyx_deg[1] * TEST_PI / 180,
                 c = zyx_deg[2] * TEST_PI / 180;
    const double ca = cos(a), sa = sin(a), cb = cos(b), sb = sin(b), cc = cos(c), sc = sin(c);
    const double rz[3][3] = {{ca, -sa, 0}, {sa, ca, 0}, {0, 0, 1}};
    const double ry[3][3] = {{cb, 0, sb}, {0, 1, 0}, {-sb, 0, cb}};
    const double rx[3][3] = {{1, 0, 0}, {0, cc, -sc}, {0, sc, cc}};
    double t[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            t[i][j] = 0;
            for (int k = 0; k < 3; ++k)
                t[i][j] += rz[i][k] * ry[k][j];
        }
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            m[i][j] = 0;
            for (int k = 0; k < 3; ++k)
                m[i][j] += t[i][k] * rx[k][j];
        }
}

static void
matrix_to_euler_zyx(const double m[3][3], double *zyx_deg)
{
    zyx_deg[0] = atan2(m[1][0], m[0][0]) * 180 / TEST_PI;
    zyx_deg[1] = asin(-m[2][0]) * 180 / TEST_PI;
    zyx_deg[2] = atan2(m[2][1], m[2][2]) * 180 / TEST_PI;
}

/* Writes a clip of `frames` frames: every joint keeps the first frame's angles, and the
 * whole body is turned about +Y by `turn_deg_per_frame` and moved by `move_per_frame`
 * (file units) each frame: motion that is rigid under the head. */
static void
write_rigid_clip(const char *path, const struct clip_text *c, int frames,
                 double turn_deg_per_frame, const double *move_per_frame)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fprintf(f, "%sFrames: %d\nFrame Time: 0.0083333\n", c->header, frames);
    double r0[3][3];
    euler_zyx_to_matrix(c->first_row + 3, r0);
    for (int i = 0; i < frames; ++i) {
        const double turn = turn_deg_per_frame * i * TEST_PI / 180;
        const double ry[3][3] = {{cos(turn), 0, sin(turn)}, {0, 1, 0}, {-sin(turn), 0, cos(turn)}};
        double r[3][3], zyx[3], p[3];
        for (int a = 0; a < 3; ++a) {
            p[a] = move_per_frame[a] * i;
            for (int b = 0; b < 3; ++b) {
                p[a] += ry[a][b] * c->first_row[b];
                r[a][b] = 0;
                for (int k = 0; k < 3; ++k)
                    r[a][b] += ry[a][k] * r0[k][b];
            }
        }
        matrix_to_euler_zyx(r, zyx);
        fprintf(f, "%.10g %.10g %.10g %.10g %.10g %.10g", p[0], p[1], p[2], zyx[0], zyx[1],
                zyx[2]);
        for (int ch = 6; ch < c->channels; ++ch)
            fprintf(f, " %.10g", c->first_row[ch]);
        fputc('\n', f);
    }
    assert_int_equal(fclose(f), 0);
}

/* A scratch folder in the build tree, emptied first. */
static void
scratch_dir(const char *tag, char *out, size_t size)
{
    snprintf(out, size, "%s/tests/eval-%s-%ld", EMBODY_BINARY_DIR, tag, (long)getpid());
    mkdir(out, 0755);
}

static void
remove_in(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

static void
do_nothing_of_a_clip_moving_rigidly_under_the_head_is_exact(void **state)
{
    (void)state;
    struct clip_text c;
    clip_text_load(SMALL_CLIP, &c);
    char dir[512], path[1024];
    scratch_dir("rigid", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/rigid.bvh", dir);
    const double move[3] = {0.3, 0.02, -0.5};
    write_rigid_clip(path, &c, 120, 1.5, move);

    /* The root's rotation channels are Z, Y, X (as the Euler conversion above assumes). */
    struct st_bvh bvh;
    struct em_error err = {{0}};
    if (st_bvh_load(path, &bvh, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(bvh.joints[0].channel[3], ST_BVH_ZROT);
    assert_int_equal(bvh.joints[0].channel[4], ST_BVH_YROT);
    assert_int_equal(bvh.joints[0].channel[5], ST_BVH_XROT);
    st_bvh_fini(&bvh);

    struct ev_clip clip;
    if (ev_clip_load(path, 0, &clip, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(clip.stream.frame_count, 60);
    struct ev_motion ours;
    assert_int_equal(ev_clip_reconstruct(&clip, EV_DO_NOTHING, &ours, NULL, &err), EM_OK);
    struct ev_scores s;
    ev_score(&ours, &clip.truth, &s);
    for (int g = 0; g < EV_GROUP_COUNT; ++g)
        assert_near(s.mpjpe_cm[g], 0.0, 1e-3); /* the stream's floats: micrometres */
    /* The body really moved: 60 rows of 2 frames of 0.58 units. */
    const double *h0 = clip.truth.position_m[0][EV_HIPS], *h1 = clip.truth.position_m[59][EV_HIPS];
    assert_true(hypot(h1[0] - h0[0], h1[2] - h0[2]) > 3.0);
    ev_motion_fini(&ours);
    ev_clip_fini(&clip);

    /* The same check fails for real motion. */
    if (ev_clip_load(SMALL_CLIP, 0, &clip, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(ev_clip_reconstruct(&clip, EV_DO_NOTHING, &ours, NULL, &err), EM_OK);
    ev_score(&ours, &clip.truth, &s);
    assert_true(s.mpjpe_cm[EV_GROUP_ALL] > 5.0);
    ev_motion_fini(&ours);
    ev_clip_fini(&clip);

    remove_in(dir, "rigid.bvh");
    rmdir(dir);
    clip_text_fini(&c);
}

static double
distance_to(const float *a, const double *b)
{
    return sqrt(pow((double)a[0] - b[0], 2) + pow((double)a[1] - b[1], 2) +
                pow((double)a[2] - b[2], 2));
}

static void
true_joints_are_taken_at_the_streams_rows(void **state)
{
    (void)state;
    struct ev_clip clip;
    struct em_error err = {{0}};
    if (ev_clip_load(SMALL_CLIP, 50, &clip, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(clip.source_frame_count, 381);
    assert_int_equal(clip.step, 2);
    assert_int_equal(clip.stream.frame_count, 50);
    assert_int_equal(clip.truth.frame_count, 50);
    assert_near(clip.unit_scale, CMU_SCALE, 1e-9);
    assert_near(clip.truth.fps, 1.0 / (2 * 0.0083333), 1e-9);
    /* At the same instant the headset is 12.04 cm from the skull base (8 cm up, 9 cm
     * forward), and each controller half a palm from its wrist; a row taken at another
     * frame would not keep these distances while the person moves. */
    const double eye = hypot(0.08, 0.09);
    const double palm_left =
        distance_to(clip.stream.frames[0].device[EM_DEVICE_LEFT_HAND].pose.position_m,
                    clip.truth.position_m[0][EV_LEFT_HAND]);
    assert_true(palm_left > 0.03 && palm_left < 0.08);
    for (int row = 0; row < clip.stream.frame_count; ++row) {
        const struct em_tracking_frame *fr = &clip.stream.frames[row];
        assert_near(distance_to(fr->device[EM_DEVICE_HEAD].pose.position_m,
                                clip.truth.position_m[row][EV_HEAD]),
                    eye, 1e-5);
        assert_near(distance_to(fr->device[EM_DEVICE_LEFT_HAND].pose.position_m,
                                clip.truth.position_m[row][EV_LEFT_HAND]),
                    palm_left, 1e-5);
    }
    /* The height-only mode's height is the clip's humanoid's. */
    assert_true(clip.height_m > 1.4f && clip.height_m < 2.0f);
    ev_clip_fini(&clip);
}

/* ---- Options ---- */

static enum em_result
parse(struct ev_options *out, bool *help, struct em_error *err, ...)
{
    char *argv[16] = {"eval"};
    int argc = 1;
    va_list args;
    va_start(args, err);
    for (char *a = va_arg(args, char *); a && argc < 16; a = va_arg(args, char *))
        argv[argc++] = a;
    va_end(args);
    return ev_parse_options(argc, argv, out, help, err);
}

static void
options_take_values_after_a_space_or_an_equals_sign(void **state)
{
    (void)state;
    struct ev_options o;
    bool help = true;
    struct em_error err = {{0}};
    assert_int_equal(parse(&o, &help, &err, NULL), EM_OK);
    assert_false(help);
    struct ev_options r;
    ev_options_resolve(&o, &r);
    assert_string_equal(r.json_path, "eval.json");
    assert_int_equal(r.modes, EV_MODE_BOTH);
    assert_int_equal(r.frame_limit, 0);
    assert_non_null(strstr(r.clip_dir, "mocap"));
    assert_int_equal(access(r.clip_dir, R_OK), 0);

    assert_int_equal(parse(&o, &help, &err, "clips", "--json=-", "--mode", "height", "--frames",
                           "40", "-q", NULL),
                     EM_OK);
    assert_string_equal(o.clip_dir, "clips");
    assert_string_equal(o.json_path, "-");
    assert_int_equal(o.modes, EV_MODE_HEIGHT_ONLY);
    assert_int_equal(o.frame_limit, 40);
    assert_true(o.quiet);
    assert_int_equal(parse(&o, &help, &err, "--max-mpjpe=12.5", "--mode=known", "--", "-odd",
                           NULL),
                     EM_OK);
    assert_near(o.max_mean_mpjpe_cm, 12.5, 0.0);
    assert_int_equal(o.modes, EV_MODE_KNOWN_BODY);
    assert_string_equal(o.clip_dir, "-odd");
    assert_int_equal(o.stages_off, 0u); /* the body as players get it */
    assert_int_equal(parse(&o, &help, &err, "--without", "planting,floor", NULL), EM_OK);
    assert_int_equal(o.stages_off, BODY_STAGE_PLANTING | BODY_STAGE_FLOOR);
    assert_int_equal(parse(&o, &help, &err, "--without=all", NULL), EM_OK);
    assert_int_equal(o.stages_off, BODY_STAGE_ALL);
    assert_int_equal(parse(&o, &help, &err, "--help", NULL), EM_OK);
    assert_true(help);
}

static void
expect_rejected(const char *want1, const char *want2, ...)
{
    char *argv[16] = {"eval"};
    int argc = 1;
    va_list args;
    va_start(args, want2);
    for (char *a = va_arg(args, char *); a && argc < 16; a = va_arg(args, char *))
        argv[argc++] = a;
    va_end(args);
    struct ev_options o;
    bool help = false;
    struct em_error err = {{0}};
    assert_int_equal(ev_parse_options(argc, argv, &o, &help, &err), EM_ERROR_INVALID_ARGUMENT);
    expect_message(err.message, want1);
    expect_message(err.message, want2);
}

static void
bad_options_are_rejected_naming_the_option_and_what_was_expected(void **state)
{
    (void)state;
    expect_rejected("unknown option \"--fast\"", "--help", "--fast", NULL);
    expect_rejected("--frames", "\"abc\"", "--frames", "abc", NULL);
    expect_rejected("--frames", "from 4", "--frames", "2", NULL);
    expect_rejected("--frames", "whole number", "--frames=1.5", NULL);
    expect_rejected("--mode", "known, height or both", "--mode", "all", NULL);
    expect_rejected("--json", "file path", "--json", NULL);
    expect_rejected("--json", "empty", "--json=", NULL);
    expect_rejected("--max-mpjpe", "centimetres", "--max-mpjpe", "-3", NULL);
    expect_rejected("--max-mpjpe", "\"nan\"", "--max-mpjpe", "nan", NULL);
    expect_rejected("--max-mpjpe", "--mode height", "--max-mpjpe", "9", "--mode", "height",
                    NULL);
    expect_rejected("--mode", "more than once", "--mode", "known", "--mode", "both", NULL);
    expect_rejected("--quiet", "no value", "--quiet=yes", NULL);
    expect_rejected("--without", "\"plant\"", "--without", "smoothing,plant", NULL);
    expect_rejected("--without", "\"\"", "--without", "floor,", NULL);
    expect_rejected("unexpected argument \"b\"", "\"a\"", "a", "b", NULL);
}

/* ---- Runs over folders ---- */

/* Copies the first `frames` frames of `src` as DIR/NAME, putting `bad_token` in place of
 * the first value of row `bad_row` (1-based) when given; returns that row's line. */
static int
write_clip(const char *src, const char *dir, const char *name, int frames, int bad_row,
           const char *bad_token)
{
    char *text = read_file(src);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    char *rows = strstr(text, "Frame Time:");
    assert_non_null(rows);
    rows = strchr(rows, '\n') + 1;
    char *frames_line = strstr(text, "Frames:");
    assert_non_null(frames_line);
    fwrite(text, 1, (size_t)(frames_line - text), f);
    fprintf(f, "Frames: %d\n", frames);
    const char *frame_time = strstr(frames_line, "Frame Time:");
    fwrite(frame_time, 1, (size_t)(rows - frame_time), f);
    int line = 1;
    for (const char *c = text; c < rows; ++c)
        line += *c == '\n';
    const int first_row_line = line;
    const char *row = rows;
    for (int i = 1; i <= frames; ++i) {
        const char *end = strchr(row, '\n');
        assert_non_null(end);
        if (i == bad_row) {
            fprintf(f, "%s", bad_token);
            row += strcspn(row, " \t");
        }
        fwrite(row, 1, (size_t)(end + 1 - row), f);
        row = end + 1;
    }
    assert_int_equal(fclose(f), 0);
    free(text);
    return first_row_line + bad_row - 1;
}

static void
write_text(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* ev_main with stdout and stderr sent to /dev/null. */
static int
main_quietly(int argc, char **argv)
{
    fflush(stdout);
    fflush(stderr);
    const int saved_out = dup(1), saved_err = dup(2);
    const int null = open("/dev/null", O_WRONLY);
    assert_true(saved_out >= 0 && saved_err >= 0 && null >= 0);
    dup2(null, 1);
    dup2(null, 2);
    const int status = ev_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(null);
    close(saved_out);
    close(saved_err);
    return status;
}

static void
a_malformed_clip_is_reported_with_its_line_and_the_others_still_run(void **state)
{
    (void)state;
    char dir[512];
    scratch_dir("malformed", dir, sizeof dir);
    write_clip(SMALL_CLIP, dir, "a_good.bvh", 60, 0, NULL);
    const int bad_line = write_clip(SMALL_CLIP, dir, "b_bad.bvh", 60, 7, "0.5x");
    write_clip(SMALL_CLIP, dir, "c_good.bvh", 40, 0, NULL);
    write_text(dir, "MANIFEST.tsv", "set\tfile\tcategory\n"
                                    "public\ta_good.bvh\trun\n"
                                    "public\tb_bad.bvh\trun\n");

    struct ev_options o = {.clip_dir = dir, .json_path = "-"};
    struct ev_report r;
    struct em_error err = {{0}};
    if (ev_run(&o, &r, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(r.clip_count, 3);
    assert_int_equal(r.failed_count, 1);
    assert_string_equal(r.manifest_error, "");
    assert_false(r.clips[1].ok);
    char where[64];
    snprintf(where, sizeof where, "b_bad.bvh:%d:", bad_line);
    expect_message(r.clips[1].error, where);
    expect_message(r.clips[1].error, "0.5x");
    for (int c = 0; c < 3; c += 2) {
        assert_true(r.clips[c].ok);
        for (int m = 0; m < EV_METHOD_COUNT; ++m) {
            assert_true(r.clips[c].has[m]);
            assert_true(isfinite(r.clips[c].scores[m].mpjpe_cm[EV_GROUP_ALL]));
        }
        assert_true(r.clips[c].update_median_us[EV_KNOWN_BODY] > 0.0);
    }
    assert_int_equal(r.clips[2].frames, 20);
    assert_string_equal(r.clips[0].category, "run");
    assert_string_equal(r.clips[2].category, "other");
    /* The means count the two clips that ran, once each. */
    assert_int_equal(r.means.clip_count, 2);
    const double mean = 0.5 * (r.clips[0].scores[EV_KNOWN_BODY].mpjpe_cm[0] +
                               r.clips[2].scores[EV_KNOWN_BODY].mpjpe_cm[0]);
    assert_near(r.means.scores[EV_KNOWN_BODY].mpjpe_cm[0], mean, 1e-12);
    assert_int_equal(r.category_count, 2);
    assert_string_equal(r.categories[0].name, "run");
    assert_int_equal(r.categories[0].means.clip_count, 1);
    assert_int_equal(r.timing[EV_KNOWN_BODY].frames, 30 + 20);
    ev_report_fini(&r);

    /* The program says so in its exit status. */
    char *argv[] = {"eval", dir, "--json=-", "-q"};
    assert_int_equal(main_quietly(4, argv), 1);

    remove_in(dir, "a_good.bvh");
    remove_in(dir, "b_bad.bvh");
    remove_in(dir, "c_good.bvh");
    remove_in(dir, "MANIFEST.tsv");
    rmdir(dir);
}

static void
a_malformed_manifest_is_reported_with_its_line(void **state)
{
    (void)state;
    char dir[512];
    scratch_dir("manifest", dir, sizeof dir);
    write_clip(SMALL_CLIP, dir, "clip.bvh", 20, 0, NULL);
    write_text(dir, "MANIFEST.tsv", "file\tcategory\nclip.bvh\twalk\nother.bvh\n");
    struct ev_options o = {.clip_dir = dir, .modes = EV_MODE_KNOWN_BODY};
    struct ev_report r;
    struct em_error err = {{0}};
    if (ev_run(&o, &r, &err) != EM_OK)
        fail_msg("%s", err.message);
    expect_message(r.manifest_error, "MANIFEST.tsv:3:");
    expect_message(r.manifest_error, "expected 2 tab-separated fields");
    assert_true(r.clips[0].ok);
    assert_string_equal(r.clips[0].category, "other");
    assert_false(r.clips[0].has[EV_HEIGHT_ONLY]);
    assert_true(r.clips[0].has[EV_KNOWN_BODY]);
    ev_report_fini(&r);
    remove_in(dir, "clip.bvh");
    remove_in(dir, "MANIFEST.tsv");
    rmdir(dir);
}

static void
a_folder_without_clips_is_an_error_naming_it(void **state)
{
    (void)state;
    char dir[512];
    scratch_dir("empty", dir, sizeof dir);
    struct ev_options o = {.clip_dir = dir};
    struct ev_report r;
    struct em_error err = {{0}};
    assert_int_not_equal(ev_run(&o, &r, &err), EM_OK);
    expect_message(err.message, dir);
    expect_message(err.message, "no clips");
    ev_report_fini(&r);
    rmdir(dir);
    o.clip_dir = "/nonexistent/clips";
    assert_int_equal(ev_run(&o, &r, &err), EM_ERROR_IO);
    expect_message(err.message, "/nonexistent/clips");
    ev_report_fini(&r);
    char *argv[] = {"eval", "/nonexistent/clips", "-q"};
    assert_int_equal(main_quietly(3, argv), 2);
}

static double
json_number(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    if (!cJSON_IsNumber(x))
        fail_msg("no number at %s.%s", a, b ? b : "");
    return x->valuedouble;
}

static void
json_copy_holds_the_figures_and_the_bound_sets_the_exit_status(void **state)
{
    (void)state;
    char dir[512], json[1024];
    scratch_dir("json", dir, sizeof dir);
    write_clip(SMALL_CLIP, dir, "clip.bvh", 40, 0, NULL);
    snprintf(json, sizeof json, "%s/out.json", dir);
    struct ev_options o = {.clip_dir = dir, .json_path = json};
    struct ev_report r;
    struct em_error err = {{0}};
    if (ev_run(&o, &r, &err) != EM_OK)
        fail_msg("%s", err.message);
    if (ev_report_write_json(&r, json, &err) != EM_OK)
        fail_msg("%s", err.message);
    char *text = read_file(json);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    const cJSON *clip = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "clips"), 0);
    assert_non_null(clip);
    assert_string_equal(cJSON_GetObjectItem(clip, "file")->valuestring, "clip.bvh");
    for (int m = 0; m < EV_METHOD_COUNT; ++m) {
        const char *key = ev_method_key((enum ev_method)m);
        assert_near(json_number(clip, key, "mpjpe_cm"), r.clips[0].scores[m].mpjpe_cm[0],
                    1e-9);
        assert_near(json_number(clip, key, "lower_cm"),
                    r.clips[0].scores[m].mpjpe_cm[EV_GROUP_LOWER], 1e-9);
        const cJSON *means = cJSON_GetObjectItem(root, "means");
        assert_near(json_number(means, key, "mpjpe_cm"), r.means.scores[m].mpjpe_cm[0], 1e-9);
    }
    const cJSON *timing = cJSON_GetObjectItem(root, "update_timing");
    assert_near(json_number(timing, "all", "avatar_frames"), 40.0, 0.0);
    assert_non_null(cJSON_GetObjectItem(root, "categories"));
    cJSON_Delete(root);
    free(text);

    /* The bound: just below and just above what was achieved. */
    const double achieved = r.means.scores[EV_KNOWN_BODY].mpjpe_cm[0];
    assert_false(ev_report_exceeds_bound(&r)); /* no bound given */
    r.options.max_mean_mpjpe_cm = achieved * 0.99;
    assert_true(ev_report_exceeds_bound(&r));
    r.options.max_mean_mpjpe_cm = achieved * 1.01;
    assert_false(ev_report_exceeds_bound(&r));
    ev_report_fini(&r);
    char low[32], high[32];
    snprintf(low, sizeof low, "--max-mpjpe=%.6f", achieved * 0.99);
    snprintf(high, sizeof high, "--max-mpjpe=%.6f", achieved * 1.01);
    /* The procedural body, as ev_run above (the default runs the learned prior too). */
    char *argv_low[] = {"eval", dir, "--json=-", "-q", low, "--body=procedural"};
    char *argv_high[] = {"eval", dir, "--json=-", "-q", high, "--body=procedural"};
    assert_int_equal(main_quietly(6, argv_low), 1);
    assert_int_equal(main_quietly(6, argv_high), 0);

    remove_in(dir, "clip.bvh");
    remove_in(dir, "out.json");
    rmdir(dir);
}

/* A standing player turning 10 times each way, then standing still: no limb joint twists
 * beyond its limit (knees not at all), and the feet end up pointing where the head does.
 * (Before the legs were built without memory, every turn left the shins more twisted:
 * -160 degrees after six turns, feet sideways.) */
static void
turning_in_place_keeps_twist_within_limits_and_the_feet_under_the_heading(void **state)
{
    (void)state;
    struct ev_turn_result turn;
    ev_turn_in_place_check(&turn);
    assert_true(turn.ok);
    const enum ev_limb limbs[] = {EV_LIMB_LEFT_UPPER_ARM, EV_LIMB_LEFT_UPPER_LEG,
                                 EV_LIMB_LEFT_LOWER_LEG, EV_LIMB_LEFT_FOOT,
                                 EV_LIMB_RIGHT_UPPER_ARM, EV_LIMB_RIGHT_UPPER_LEG,
                                 EV_LIMB_RIGHT_LOWER_LEG, EV_LIMB_RIGHT_FOOT};
    for (size_t i = 0; i < sizeof limbs / sizeof limbs[0]; ++i) {
        const int l = limbs[i];
        const struct ev_checks *c = &turn.checks;
        assert_true(isfinite(c->limit_min_deg[l]));
        if (c->twist_min_deg[l] < c->limit_min_deg[l] - 1.0 ||
            c->twist_max_deg[l] > c->limit_max_deg[l] + 1.0)
            fail_msg("%s twists %.1f .. %.1f degrees, its limit is %.0f .. %.0f",
                     sk_bone_name(ev_limb_bone((enum ev_limb)l)), c->twist_min_deg[l],
                     c->twist_max_deg[l], c->limit_min_deg[l], c->limit_max_deg[l]);
    }
    assert_true(turn.foot_heading_error_deg[0] <= 20.0);
    assert_true(turn.foot_heading_error_deg[1] <= 20.0);
}

/* A walk solved again with every stream value moved by 1e-5: the same gait (which foot
 * steps first used to flip on such a change, leaving the feet a stride apart for the rest
 * of the walk: 550 mm at the 99th percentile). */
static void
a_tiny_change_of_the_input_does_not_change_the_gait(void **state)
{
    (void)state;
    struct ev_clip clip;
    struct em_error err = {{0}};
    if (ev_clip_load(EMBODY_SOURCE_DIR "/tests/data/continuity/cmu_07_04.bvh", 0, &clip,
                     &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(ev_trackers_select(&clip, 0, &err), EM_OK);
    for (int m = EV_KNOWN_BODY; m <= EV_HEIGHT_ONLY; ++m) {
        struct ev_motion ours;
        struct ev_checks checks;
        ev_checks_init(&checks);
        if (ev_clip_reconstruct_stream(&clip, &clip.stream, (enum ev_method)m, NULL, &ours,
                                       NULL, &checks, &err) != EM_OK ||
            ev_clip_sensitivity(&clip, (enum ev_method)m, NULL, &ours, &checks, &err) != EM_OK)
            fail_msg("%s", err.message);
        if (!(checks.sensitivity_p99_mm <= 1.0 && checks.sensitivity_max_mm <= 20.0))
            fail_msg("%s: the joints moved by %.3f mm (99th percentile), %.2f mm at most",
                     ev_method_name((enum ev_method)m), checks.sensitivity_p99_mm,
                     checks.sensitivity_max_mm);
        ev_motion_fini(&ours);
    }
    ev_clip_fini(&clip);
}

#define PI 3.14159265358979323846

/* The turn-in-place stream turns the head as it says: 10 turns left, 10 right, still. */
static void
the_turn_in_place_stream_turns_the_head_and_comes_back(void **state)
{
    (void)state;
    struct st_stream s;
    assert_int_equal(ev_turn_in_place_stream(1.75f, 2, 60.0, &s), EM_OK);
    assert_true(s.frame_count > 2 * 4 * 60);
    double turned = 0.0, last = 0.0;
    for (int k = 0; k < s.frame_count; ++k) {
        const float *qf = s.frames[k].device[EM_DEVICE_HEAD].pose.orientation;
        const double q[4] = {(double)qf[0], (double)qf[1], (double)qf[2], (double)qf[3]};
        /* The view looks along -Z: its yaw is that of -Z turned. */
        const double yaw = atan2(-2.0 * (q[0] * q[2] + q[3] * q[1]),
                                 -(1.0 - 2.0 * (q[0] * q[0] + q[1] * q[1])));
        if (k > 0) {
            double d = yaw - last;
            d -= 2.0 * PI * floor((d + PI) / (2.0 * PI));
            turned += d;
            assert_true(fabs(d) < 0.1); /* smooth: under 6 degrees a frame */
        }
        last = yaw;
        if (k == 2 * 4 * 60) /* the end of the turns to the left (4 s each) */
            assert_true(fabs(turned - 2.0 * 2.0 * PI) < 0.1);
    }
    assert_true(fabs(turned) < 0.01);
    st_stream_fini(&s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mpjpe_of_an_offset_on_one_hand_is_shared_out_by_group),
        cmocka_unit_test(mpjpe_of_a_whole_body_offset_is_the_offset_in_every_group),
        cmocka_unit_test(groups_have_the_protocols_joints),
        cmocka_unit_test(jitter_of_a_cubic_trajectory_is_its_third_derivative),
        cmocka_unit_test(jitter_of_linear_or_still_motion_is_zero),
        cmocka_unit_test(foot_skate_counts_only_frames_where_the_true_foot_is_planted),
        cmocka_unit_test(feet_lag_is_the_delay_of_their_motion_whatever_their_standing_offset),
        cmocka_unit_test(timing_median_mean_and_percentile),
        cmocka_unit_test(do_nothing_turns_with_the_heading_and_ignores_nods),
        cmocka_unit_test(do_nothing_of_a_clip_moving_rigidly_under_the_head_is_exact),
        cmocka_unit_test(true_joints_are_taken_at_the_streams_rows),
        cmocka_unit_test(options_take_values_after_a_space_or_an_equals_sign),
        cmocka_unit_test(bad_options_are_rejected_naming_the_option_and_what_was_expected),
        cmocka_unit_test(a_malformed_clip_is_reported_with_its_line_and_the_others_still_run),
        cmocka_unit_test(a_malformed_manifest_is_reported_with_its_line),
        cmocka_unit_test(a_folder_without_clips_is_an_error_naming_it),
        cmocka_unit_test(json_copy_holds_the_figures_and_the_bound_sets_the_exit_status),
        cmocka_unit_test(turning_in_place_keeps_twist_within_limits_and_the_feet_under_the_heading),
        cmocka_unit_test(the_turn_in_place_stream_turns_the_head_and_comes_back),
        cmocka_unit_test(a_tiny_change_of_the_input_does_not_change_the_gait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
