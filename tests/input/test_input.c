/*
 * Input sources: a replayed stream file gives the file's frames, never early in real time,
 * holds still while paused, keeps time increasing when it loops and says when it ends,
 * and gives each frame's finger columns (in a loop and paused too); the bundled demo is
 * found and plays.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <math.h>

#include "embody/hand.h"
#include "embody/input.h"
#include "embody/m_math.h"
#include "embody/skeleton.h"
#include "embody/stream.h"
#include "util/u_time.h"

/* Writes a stream of `count` frames, `period_s` apart from `start_s`, each a different
 * pose, into a scratch file; returns the frames as the file holds them. */
static void
write_stream(const char *tag, int count, double start_s, double period_s, char *path,
             size_t size, struct st_stream *out_file_frames)
{
    snprintf(path, size, "%s/tests/input-%s-%ld.csv", EMBODY_BINARY_DIR, tag, (long)getpid());
    struct st_stream s = {0};
    for (int i = 0; i < count; ++i) {
        struct em_tracking_frame f;
        memset(&f, 0, sizeof f);
        f.time_s = start_s + i * period_s;
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            m_vec3_set(f.device[d].pose.position_m, 0.1f * (float)i, 1.0f + 0.01f * (float)d,
                       -0.3f);
            const float axis[3] = {0, 1, 0};
            m_quat_from_axis_angle(axis, 0.05f * (float)i, f.device[d].pose.orientation);
            f.device[d].flags = (i + d) % 4 == 0 ? 0u : (uint32_t)EM_POSE_ALL_VALID;
        }
        assert_int_equal(st_stream_append(&s, &f), EM_OK);
    }
    struct em_error err = {{0}};
    assert_int_equal(st_stream_save(path, &s, &err), EM_OK);
    st_stream_fini(&s);
    assert_int_equal(st_stream_load(path, out_file_frames, &err), EM_OK);
}

static struct in_source *
replay(const char *path, bool fast, bool loop)
{
    const struct in_replay_desc desc = {.path = path, .as_fast_as_possible = fast, .loop = loop};
    struct in_source *src = NULL;
    struct em_error err = {{0}};
    if (in_replay_create(&desc, &src, &err) != EM_OK)
        fail_msg("%s", err.message);
    return src;
}

/* cmocka's assert_float_equal compares floats; this compares doubles. */
#define assert_near(a, b, tol)                                                                 \
    do {                                                                                       \
        const double near_a = (double)(a), near_b = (double)(b);                               \
        if (!(fabs(near_a - near_b) <= (tol)))                                                 \
            fail_msg("%s = %.12g, expected %.12g within %g", #a, near_a, near_b, (double)(tol)); \
    } while (0)

static void
assert_same_poses(const struct em_tracking_frame *a, const struct em_tracking_frame *b)
{
    assert_memory_equal(a->device, b->device, sizeof a->device);
    assert_int_equal(a->events, b->events);
}

static void
a_replay_gives_the_files_frames_then_ends(void **state)
{
    (void)state;
    char path[512];
    struct st_stream file;
    write_stream("frames", 20, 0.0, 1.0 / 60.0, path, sizeof path, &file);
    struct in_source *src = replay(path, true, false);
    assert_string_equal(src->name, "replay");
    struct em_tracking_frame f;
    for (int i = 0; i < file.frame_count; ++i) {
        assert_int_equal(in_source_next(src, &f), EM_OK);
        assert_true(f.time_s == file.frames[i].time_s);
        assert_same_poses(&f, &file.frames[i]);
        assert_int_equal(in_source_submit(src), EM_OK);
    }
    assert_int_equal(in_source_next(src, &f), EM_END_OF_STREAM);
    assert_int_equal(in_source_next(src, &f), EM_END_OF_STREAM);
    in_source_destroy(&src);
    assert_null(src);
    in_source_destroy(&src); /* NULL is fine */
    st_stream_fini(&file);
    remove(path);
}

static void
a_real_time_replay_never_delivers_a_frame_before_its_time(void **state)
{
    (void)state;
    char path[512];
    struct st_stream file;
    /* The file's clock starts at 3 s: only the intervals matter. */
    write_stream("pace", 8, 3.0, 0.02, path, sizeof path, &file);
    struct in_source *src = replay(path, false, false);
    const int64_t start_ns = u_time_now_ns();
    struct em_tracking_frame f;
    for (int i = 0; i < file.frame_count; ++i) {
        assert_int_equal(in_source_next(src, &f), EM_OK);
        const double elapsed_s = (double)(u_time_now_ns() - start_ns) / 1e9;
        const double due_s = file.frames[i].time_s - file.frames[0].time_s;
        if (elapsed_s < due_s)
            fail_msg("frame %d came after %.6f s, before its time %.6f s", i, elapsed_s,
                     due_s);
        assert_same_poses(&f, &file.frames[i]);
    }
    assert_int_equal(in_source_next(src, &f), EM_END_OF_STREAM);
    in_source_destroy(&src);
    st_stream_fini(&file);
    remove(path);
}

static void
pausing_holds_the_current_frame_and_time(void **state)
{
    (void)state;
    char path[512];
    struct st_stream file;
    write_stream("pause", 5, 0.0, 0.01, path, sizeof path, &file);
    for (int real_time = 0; real_time < 2; ++real_time) {
        struct in_source *src = replay(path, !real_time, false);
        assert_true(in_source_can_pause(src));
        struct em_tracking_frame f;
        assert_int_equal(in_source_next(src, &f), EM_OK);
        assert_int_equal(in_source_next(src, &f), EM_OK);
        in_source_set_paused(src, true);
        for (int i = 0; i < 4; ++i) {
            assert_int_equal(in_source_next(src, &f), EM_OK);
            assert_true(f.time_s == file.frames[1].time_s);
            assert_same_poses(&f, &file.frames[1]);
        }
        in_source_set_paused(src, false);
        assert_int_equal(in_source_next(src, &f), EM_OK);
        assert_true(f.time_s == file.frames[2].time_s);
        assert_same_poses(&f, &file.frames[2]);
        in_source_destroy(&src);
    }
    st_stream_fini(&file);
    remove(path);
}

/* A stream file with finger columns: each frame the replay gives comes with that row's
 * fingers, paused (the same row's again), after a loop, and from a stream made in memory;
 * a file without them gives none. */
static void
a_replay_gives_each_frames_fingers(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/tests/input-fingers-%ld.csv", EMBODY_BINARY_DIR,
             (long)getpid());
    struct hd_model model;
    const struct hd_model_desc hand = {.hand = HD_RIGHT};
    struct em_error err = {{0}};
    assert_int_equal(hd_model_init(&hand, &model, &err), EM_OK);
    struct st_stream s = {0};
    enum { ROWS = 6 };
    for (int i = 0; i < ROWS; ++i) {
        struct em_tracking_frame f;
        memset(&f, 0, sizeof f);
        f.time_s = 0.01 * i;
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            m_vec3_set(f.device[d].pose.position_m, 0.0f, 1.0f, 0.0f);
            m_quat_identity(f.device[d].pose.orientation);
            f.device[d].flags = (uint32_t)EM_POSE_ALL_VALID;
        }
        /* Row i closes the right hand by i / (ROWS - 1); the left hand is not known. */
        struct hd_curls curls = {.splay = 0.0f};
        for (int k = 0; k < HD_FINGER_COUNT; ++k)
            curls.curl[k] = (float)i / (ROWS - 1);
        struct hd_pose pose;
        hd_pose_from_curls(&model, &curls, &pose);
        struct st_fingers fingers;
        memset(&fingers, 0, sizeof fingers);
        st_fingers_set_pose(&fingers, HD_RIGHT, &pose);
        assert_int_equal(st_stream_append_fingers(&s, &f, &fingers), EM_OK);
    }
    assert_int_equal(st_stream_save(path, &s, &err), EM_OK);
    struct st_stream file;
    assert_int_equal(st_stream_load(path, &file, &err), EM_OK);
    assert_non_null(file.fingers);
    for (int from_memory = 0; from_memory < 2; ++from_memory) {
        const struct in_replay_desc desc = {.path = path, .stream = from_memory ? &s : NULL,
                                            .as_fast_as_possible = true, .loop = true};
        struct in_source *src = NULL;
        assert_int_equal(in_replay_create(&desc, &src, &err), EM_OK);
        struct st_fingers got;
        assert_false(in_source_fingers(src, &got)); /* no frame yet */
        struct em_tracking_frame f;
        for (int k = 0; k < 2 * ROWS + 2; ++k) {
            if (k == ROWS + 1)
                in_source_set_paused(src, true);
            if (k == ROWS + 3)
                in_source_set_paused(src, false);
            assert_int_equal(in_source_next(src, &f), EM_OK);
            /* Paused at k = ROWS + 1 and ROWS + 2: the frame of k = ROWS again. */
            const int repeats = k <= ROWS ? 0 : (k - ROWS < 2 ? k - ROWS : 2);
            const int row = (k - repeats) % ROWS;
            assert_true(in_source_fingers(src, &got));
            const struct st_fingers *want = from_memory ? &s.fingers[row] : &file.fingers[row];
            assert_false(got.valid[HD_LEFT]);
            assert_true(got.valid[HD_RIGHT]);
            assert_memory_equal(got.angle_deg, want->angle_deg, sizeof got.angle_deg);
        }
        in_source_destroy(&src);
    }
    st_stream_fini(&file);
    st_stream_fini(&s);
    remove(path);
    /* Without finger columns: none. */
    write_stream("nofingers", 3, 0.0, 0.01, path, sizeof path, &file);
    struct in_source *src = replay(path, true, false);
    struct em_tracking_frame f;
    struct st_fingers got;
    assert_int_equal(in_source_next(src, &f), EM_OK);
    assert_false(in_source_fingers(src, &got));
    in_source_destroy(&src);
    st_stream_fini(&file);
    remove(path);
}

static void
a_looping_replay_keeps_time_increasing(void **state)
{
    (void)state;
    char path[512];
    struct st_stream file;
    write_stream("loop", 3, 0.5, 0.1, path, sizeof path, &file);
    struct in_source *src = replay(path, true, true);
    struct em_tracking_frame f;
    double previous = -1.0;
    for (int i = 0; i < 10; ++i) {
        assert_int_equal(in_source_next(src, &f), EM_OK);
        assert_true(f.time_s > previous);
        /* One period between the last frame and the first again, as between any two. */
        if (i > 0)
            assert_near(f.time_s - previous, 0.1, 1e-9);
        assert_same_poses(&f, &file.frames[i % 3]);
        previous = f.time_s;
    }
    assert_near(f.time_s, file.frames[0].time_s + 9 * 0.1, 1e-9);
    in_source_destroy(&src);
    st_stream_fini(&file);
    remove(path);
}

static void
a_bad_stream_file_is_reported_with_its_line(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/tests/input-bad-%ld.csv", EMBODY_BINARY_DIR,
             (long)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("t,head_px\n0,1\n", f);
    fclose(f);
    const struct in_replay_desc desc = {.path = path};
    struct in_source *src = NULL;
    struct em_error err = {{0}};
    assert_int_equal(in_replay_create(&desc, &src, &err), EM_ERROR_PARSE);
    assert_null(src);
    char want[600];
    snprintf(want, sizeof want, "%s:1", path);
    if (!strstr(err.message, want) || !strstr(err.message, "head_py"))
        fail_msg("message \"%s\" lacks \"%s\" or head_py", err.message, want);
    remove(path);
    const struct in_replay_desc missing = {.path = "/nonexistent/take.csv"};
    assert_int_equal(in_replay_create(&missing, &src, &err), EM_ERROR_IO);
    assert_non_null(strstr(err.message, "/nonexistent/take.csv"));
}

static void
the_demo_is_found_and_plays_its_stream_in_a_loop(void **state)
{
    (void)state;
    const char *path = in_demo_path();
    assert_non_null(path);
    struct st_stream file;
    struct em_error err = {{0}};
    if (st_stream_load(path, &file, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct in_source *src = NULL;
    assert_int_equal(in_demo_create(true, &src, &err), EM_OK);
    assert_string_equal(src->name, "demo");
    struct em_tracking_frame f;
    double previous = -1.0;
    for (int i = 0; i < file.frame_count + 5; ++i) {
        assert_int_equal(in_source_next(src, &f), EM_OK);
        assert_true(f.time_s > previous);
        previous = f.time_s;
        assert_same_poses(&f, &file.frames[i % file.frame_count]);
    }
    in_source_destroy(&src);
    st_stream_fini(&file);
}

struct gap_told {
    int count;
    double gap_s, at_s, waited_s;
};

static void
count_gap(void *user, double gap_s, double at_s, double waited_s)
{
    struct gap_told *told = user;
    told->count++;
    told->gap_s = gap_s;
    told->at_s = at_s;
    told->waited_s = waited_s;
}

static void
a_long_gap_in_a_real_time_replay_is_shortened_and_told_once(void **state)
{
    (void)state;
    /* Two gaps of nearly the longest step a stream may have (1 s), longer than the wait
     * (gaps of 1e10 s, which overflowed a conversion to nanoseconds, are now refused by
     * the reader: stream.h). */
    static const double times[] = {0.0, 0.01, 0.81, 0.82, 1.8};
    const int count = (int)(sizeof times / sizeof times[0]);
    struct st_stream s = {0};
    for (int i = 0; i < count; ++i) {
        struct em_tracking_frame f;
        memset(&f, 0, sizeof f);
        f.time_s = times[i];
        for (int d = 0; d < EM_DEVICE_COUNT; ++d)
            f.device[d].pose.orientation[3] = 1.0f;
        assert_int_equal(st_stream_append(&s, &f), EM_OK);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/tests/input-gap-%ld.csv", EMBODY_BINARY_DIR, (long)getpid());
    struct em_error err = {{0}};
    assert_int_equal(st_stream_save(path, &s, &err), EM_OK);
    st_stream_fini(&s);

    struct gap_told told = {0};
    const struct in_replay_desc desc = {
        .path = path, .max_wait_s = 0.05, .on_gap = count_gap, .on_gap_user = &told};
    struct in_source *src = NULL;
    assert_int_equal(in_replay_create(&desc, &src, &err), EM_OK);
    const int64_t start_ns = u_time_now_ns();
    struct em_tracking_frame f;
    for (int i = 0; i < count; ++i) {
        assert_int_equal(in_source_next(src, &f), EM_OK);
        assert_true(f.time_s == times[i]); /* the frames and their times are the file's */
    }
    assert_int_equal(in_source_next(src, &f), EM_END_OF_STREAM);
    const double elapsed_s = (double)(u_time_now_ns() - start_ns) * 1e-9;
    /* 0.01 + two waits of 0.05 + 0.01: a tenth of a second, not 1.8 s. */
    if (!(elapsed_s >= 0.11 && elapsed_s < 1.0))
        fail_msg("the replay took %.3f s", elapsed_s);
    assert_int_equal(told.count, 1);
    assert_near(told.gap_s, 0.8, 1e-3);
    assert_near(told.at_s, 0.81, 1e-3);
    assert_near(told.waited_s, 0.05, 1e-12);
    in_source_destroy(&src);
    remove(path);
}

/* A frame at `t` with the headset at `eye_y` (tracked or not). */
static struct em_tracking_frame
head_frame(double t, float eye_y, bool tracked)
{
    struct em_tracking_frame f;
    memset(&f, 0, sizeof f);
    f.time_s = t;
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        f.device[d].pose.orientation[3] = 1.0f;
        f.device[d].flags = EM_POSE_ALL_VALID;
    }
    f.device[EM_DEVICE_HEAD].pose.position_m[1] = eye_y;
    if (!tracked)
        f.device[EM_DEVICE_HEAD].flags = 0;
    return f;
}

/* The height the estimator gives for a skull base held still at `skull_m`, within its
 * histogram's bin. */
static double
height_for_skull(double skull_m)
{
    return 0.993 * skull_m / (double)SK_HEAD_JOINT_HEIGHT_RATIO;
}

static void
the_height_comes_from_where_the_head_is_held_still(void **state)
{
    (void)state;
    struct in_height_estimator e;
    in_height_estimator_init(&e, NULL, 0.0f);
    /* 60 Hz, the skull base 8 cm below the eyes: standing still at 1.40 m (eyes), a
     * crouch, jumping on the spot, a lost headset far off, a climb onto a 60 cm platform
     * where the player stands still (no taller person stands like that), and standing
     * still again, looking down 40 degrees (the eyes lower, the skull base not). */
    bool confident = false;
    int i = 0;
    for (; i < 1500; ++i) {
        const double t = 10.0 + i / 60.0;
        float y = 1.40f;
        struct em_tracking_frame f;
        if (i >= 90 && i < 150)
            y = 0.9f;
        else if (i >= 150 && i < 400)
            y = 1.40f + 0.25f * fabsf(sinf((float)(i - 150) * 0.1f));
        else if (i >= 400 && i < 700)
            y = 2.00f;
        const bool tracked = !(i >= 120 && i < 130);
        f = head_frame(t, tracked ? y : 9.0f, tracked);
        if (i >= 700) {
            /* pitched down about +X: the eyes 9 cm forward drop, the skull base stays */
            const float pitch = -0.698f;
            f.device[EM_DEVICE_HEAD].pose.orientation[0] = sinf(pitch / 2.0f);
            f.device[EM_DEVICE_HEAD].pose.orientation[3] = cosf(pitch / 2.0f);
            f.device[EM_DEVICE_HEAD].pose.position_m[1] =
                1.32f + 0.08f * cosf(pitch) + 0.09f * sinf(pitch);
        }
        const bool now = in_height_estimator_add(&e, &f);
        assert_true(now || !confident); /* once confident, stays so */
        confident = now;
    }
    assert_true(confident);
    float height = 0.0f, skull = 0.0f;
    struct em_error err = {{0}};
    assert_int_equal(in_height_estimate(&e, &height, &skull, &err), EM_OK);
    assert_near(skull, 1.32, 0.006);
    assert_near(height, height_for_skull(1.32), 0.01);
    /* A floor at 0.2 m lowers the height by as much over the ratio. */
    in_height_estimator_init(&e, NULL, 0.2f);
    for (i = 0; i < 200; ++i) {
        const struct em_tracking_frame f = head_frame(i / 60.0, 1.60f, true);
        in_height_estimator_add(&e, &f);
    }
    assert_int_equal(in_height_estimate(&e, &height, &skull, &err), EM_OK);
    assert_near(skull, 1.32, 0.006);

    /* Standing with bent knees (the head still 20 cm low) in a T-pose: the grips 1.45 m
     * apart at shoulder height say the player is at least 1.45 / 0.87 m tall. */
    in_height_estimator_init(&e, NULL, 0.0f);
    for (i = 0; i < 200; ++i) {
        struct em_tracking_frame f = head_frame(i / 60.0, 1.30f, true);
        m_vec3_set(f.device[EM_DEVICE_LEFT_HAND].pose.position_m, 0.725f, 1.12f, 0.0f);
        m_vec3_set(f.device[EM_DEVICE_RIGHT_HAND].pose.position_m, -0.725f, 1.12f, 0.0f);
        in_height_estimator_add(&e, &f);
    }
    assert_int_equal(in_height_estimate(&e, &height, &skull, &err), EM_OK);
    assert_near(height, 1.45 / 0.87, 1e-3);
    assert_true((double)height > height_for_skull(1.22) + 0.2);

    /* Sitting the whole time: not a standing height, said so. */
    in_height_estimator_init(&e, NULL, 0.0f);
    for (i = 0; i < 200; ++i) {
        const struct em_tracking_frame f = head_frame(i / 60.0, 0.75f, true);
        in_height_estimator_add(&e, &f);
    }
    assert_int_equal(in_height_estimate(&e, &height, NULL, &err), EM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "not a standing height"));
    /* Nothing tracked at all. */
    in_height_estimator_init(&e, NULL, 0.0f);
    const struct em_tracking_frame lost = head_frame(0.0, 1.5f, false);
    in_height_estimator_add(&e, &lost);
    assert_int_equal(in_height_estimate(&e, &height, NULL, &err), EM_ERROR_INVALID_ARGUMENT);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_replay_gives_the_files_frames_then_ends),
        cmocka_unit_test(a_real_time_replay_never_delivers_a_frame_before_its_time),
        cmocka_unit_test(pausing_holds_the_current_frame_and_time),
        cmocka_unit_test(a_looping_replay_keeps_time_increasing),
        cmocka_unit_test(a_bad_stream_file_is_reported_with_its_line),
        cmocka_unit_test(a_replay_gives_each_frames_fingers),
        cmocka_unit_test(the_demo_is_found_and_plays_its_stream_in_a_loop),
        cmocka_unit_test(a_long_gap_in_a_real_time_replay_is_shortened_and_told_once),
        cmocka_unit_test(the_height_comes_from_where_the_head_is_held_still),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
