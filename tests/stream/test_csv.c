/*
 * The 3-point stream files: columns by name, validity flags, exact round trips, and the
 * rejection of bad files with the file, the line and what was wrong.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "embody/stream.h"
#include "test_stream.h"

#define HEADER                                                                                 \
    "t,head_px,head_py,head_pz,head_qx,head_qy,head_qz,head_qw,head_valid,"                    \
    "left_px,left_py,left_pz,left_qx,left_qy,left_qz,left_qw,left_valid,"                      \
    "right_px,right_py,right_pz,right_qx,right_qy,right_qz,right_qw,right_valid\n"

/* Row values after t: head at y 1.6, hands lower, identity orientations. */
#define POSE_VALUES "0.1,1.6,0.2,0,0,0,1,1,0.3,1.0,0.1,0,0,0,1,1,-0.3,1.0,0.1,0,0,0,1,1"
#define POSES POSE_VALUES "\n"

static enum em_result
parse(const char *text, struct st_stream *out, struct em_error *err)
{
    char *copy = strdup(text);
    assert_non_null(copy);
    const enum em_result r = st_stream_parse(copy, "bad.csv", out, err);
    free(copy);
    return r;
}

/* Parses `text` and expects a failure whose message has "bad.csv", then the given
 * strings (NULL-terminated). */
static void
expect_rejected(const char *text, const char *first, const char *second, const char *third)
{
    struct st_stream s;
    struct em_error err = {{0}};
    const enum em_result r = parse(text, &s, &err);
    if (r == EM_OK) {
        st_stream_fini(&s);
        fail_msg("accepted:\n%s", text);
    }
    assert_int_equal(r, EM_ERROR_PARSE);
    assert_null(s.frames);
    test_expect_message(err.message, "bad.csv", first, second, third, (const char *)NULL);
}

static void
columns_are_found_by_name_in_any_order_and_unknown_groups_are_ignored(void **state)
{
    (void)state;
    const char *text =
        "right_valid,right_qw,right_qz,right_qy,right_qx,right_pz,right_py,right_px,"
        "pelvis_px,pelvis_py,pelvis_pz,pelvis_qx,pelvis_qy,pelvis_qz,pelvis_qw,pelvis_valid,"
        "head_px,head_py,head_pz,head_qx,head_qy,head_qz,head_qw,head_valid,t,"
        "left_px,left_py,left_pz,left_qx,left_qy,left_qz,left_qw,left_valid\n"
        "1,0.5,0.5,0.5,0.5,-3,-2,-1, 9,9,9,0,0,0,1,1, 1,2,3,0,0,0,1,1, 0.25, 4,5,6,1,0,0,0,0\n";
    struct st_stream s;
    struct em_error err = {{0}};
    assert_int_equal(parse(text, &s, &err), EM_OK);
    assert_int_equal(s.frame_count, 1);
    const struct em_tracking_frame *f = &s.frames[0];
    assert_true(f->time_s == 0.25);
    const struct em_device_pose *head = &f->device[EM_DEVICE_HEAD];
    const struct em_device_pose *left = &f->device[EM_DEVICE_LEFT_HAND];
    const struct em_device_pose *right = &f->device[EM_DEVICE_RIGHT_HAND];
    assert_true(head->pose.position_m[0] == 1.0f && head->pose.position_m[2] == 3.0f);
    assert_true(head->pose.orientation[3] == 1.0f);
    assert_true(right->pose.position_m[0] == -1.0f && right->pose.position_m[2] == -3.0f);
    assert_true(right->pose.orientation[0] == 0.5f && right->pose.orientation[3] == 0.5f);
    assert_true(left->pose.position_m[1] == 5.0f && left->pose.orientation[0] == 1.0f);
    assert_int_equal(head->flags, EM_POSE_ALL_VALID);
    assert_int_equal(right->flags, EM_POSE_ALL_VALID);
    assert_int_equal(left->flags, 0);
    st_stream_fini(&s);
}

static void
a_byte_order_mark_before_the_header_is_skipped(void **state)
{
    (void)state;
    struct st_stream s;
    struct em_error err = {{0}};
    assert_int_equal(parse("\xEF\xBB\xBF" HEADER "0," POSES, &s, &err), EM_OK);
    assert_int_equal(s.frame_count, 1);
    st_stream_fini(&s);
}

static void
an_invalid_device_keeps_its_pose_values_and_has_no_flags(void **state)
{
    (void)state;
    /* A lost device's quaternion need not be unit: it must not be trusted anyway. */
    const char *text = HEADER "0,0.1,1.6,0.2,0,0,0,1,1,"
                              "7,8,9,0,0,0,0,0,"
                              "-0.3,1.0,0.1,0,0,0,1,1\n";
    struct st_stream s;
    struct em_error err = {{0}};
    assert_int_equal(parse(text, &s, &err), EM_OK);
    const struct em_device_pose *left = &s.frames[0].device[EM_DEVICE_LEFT_HAND];
    assert_int_equal(left->flags, 0);
    assert_false(em_device_pose_usable(left));
    assert_true(left->pose.position_m[0] == 7.0f && left->pose.position_m[2] == 9.0f);
    assert_true(em_device_pose_usable(&s.frames[0].device[EM_DEVICE_HEAD]));
    st_stream_fini(&s);
}

/* A random unit quaternion, or garbage when `valid` is false. */
static void
random_orientation(bool valid, float *q)
{
    for (int i = 0; i < 4; ++i)
        q[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
    if (valid)
        m_quat_normalize(q);
}

static void
make_random_frames(struct em_tracking_frame *frames, int count, double start_s)
{
    double t = start_s;
    for (int i = 0; i < count; ++i) {
        memset(&frames[i], 0, sizeof frames[i]);
        /* Irregular intervals, as a runtime's predicted display times are. */
        t += 0.011 + 0.001 * (rand() % 10) + 1e-7 * (rand() % 1000);
        frames[i].time_s = t;
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            struct em_device_pose *dp = &frames[i].device[d];
            const bool valid = rand() % 5 != 0;
            dp->flags = valid ? EM_POSE_ALL_VALID : 0;
            for (int k = 0; k < 3; ++k)
                dp->pose.position_m[k] = (float)rand() / (float)RAND_MAX * 4.0f - 2.0f;
            random_orientation(valid, dp->pose.orientation);
        }
    }
    /* Awkward floats: tiny, huge, many digits. */
    frames[0].device[0].pose.position_m[0] = 1.17549435e-38f;
    frames[0].device[0].pose.position_m[1] = 3.40282347e+38f;
    frames[0].device[0].pose.position_m[2] = 1.0f / 3.0f;
    frames[0].device[0].flags = 0; /* beyond 1 km: kept as written only on a lost device */
    frames[1].device[1].pose.position_m[0] = -0.0f;
}

static void
writing_then_reading_gives_identical_floats_and_times(void **state)
{
    (void)state;
    srand(7);
    enum { N = 200 };
    static struct em_tracking_frame frames[N];
    make_random_frames(frames, N, 0.0);
    frames[0].time_s = 0.0; /* times are written relative to the first: start there */
    char path[512];
    test_scratch_path("exact", "csv", path, sizeof path);
    struct st_stream_writer w;
    struct em_error err = {{0}};
    assert_int_equal(st_stream_writer_open(path, &w, &err), EM_OK);
    for (int i = 0; i < N; ++i)
        assert_int_equal(st_stream_writer_write(&w, &frames[i], &err), EM_OK);
    assert_int_equal(st_stream_writer_close(&w, &err), EM_OK);

    struct st_stream s;
    if (st_stream_load(path, &s, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(s.frame_count, N);
    for (int i = 0; i < N; ++i) {
        assert_true(s.frames[i].time_s == frames[i].time_s);
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            const struct em_device_pose *a = &frames[i].device[d], *b = &s.frames[i].device[d];
            assert_int_equal(a->flags, b->flags);
            assert_memory_equal(a->pose.position_m, b->pose.position_m, sizeof(vec3));
            assert_memory_equal(a->pose.orientation, b->pose.orientation, sizeof(versor));
        }
    }
    st_stream_fini(&s);
    remove(path);
}

static void
reading_and_writing_twice_gives_byte_identical_text(void **state)
{
    (void)state;
    /* Columns out of order, blanks, CRLF, an extra group, t not starting at 0. */
    const char *odd =
        "head_px,head_py,head_pz,head_qx,head_qy,head_qz,head_qw,head_valid,t,"
        "left_px,left_py,left_pz,left_qx,left_qy,left_qz,left_qw,left_valid,"
        "right_px,right_py,right_pz,right_qx,right_qy,right_qz,right_qw,right_valid,"
        "waist_px\r\n"
        " 0.1 ,1.6,0.2,0,0,0,1,1, 10.5 ,0.3,1.0,0.1,0,0,0,1,1,-0.3,1.0,0.1,0,0,0,1,1,5\r\n"
        "0.10000001,1.6000001,0.2,0.0000001,0,0,0.99999999,1,10.5166666,"
        "0.3,1.0,0.1,0,0,0,1,0,-0.3,1.0,0.1,0,0,0,1,1,5\r\n";
    const char *sources[] = {odd, NULL};
    char *reference = test_read_file(EMBODY_SOURCE_DIR "/tests/data/streams/cmu_127_17.csv");
    sources[1] = reference;
    for (int i = 0; i < 2; ++i) {
        char a[512], b[512];
        test_scratch_path("twice-a", "csv", a, sizeof a);
        test_scratch_path("twice-b", "csv", b, sizeof b);
        struct st_stream s1, s2;
        struct em_error err = {{0}};
        if (parse(sources[i], &s1, &err) != EM_OK)
            fail_msg("%s", err.message);
        assert_int_equal(st_stream_save(a, &s1, &err), EM_OK);
        if (st_stream_load(a, &s2, &err) != EM_OK)
            fail_msg("%s", err.message);
        assert_int_equal(s1.frame_count, s2.frame_count);
        for (int f = 0; f < s1.frame_count; ++f)
            assert_memory_equal(s1.frames[f].device, s2.frames[f].device,
                                sizeof s1.frames[f].device);
        assert_int_equal(st_stream_save(b, &s2, &err), EM_OK);
        char *ta = test_read_file(a), *tb = test_read_file(b);
        assert_string_equal(ta, tb);
        free(ta);
        free(tb);
        st_stream_fini(&s1);
        st_stream_fini(&s2);
        remove(a);
        remove(b);
    }
    free(reference);
}

static void
the_writer_marks_a_device_valid_only_when_position_and_orientation_are(void **state)
{
    (void)state;
    struct em_tracking_frame f;
    memset(&f, 0, sizeof f);
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        m_quat_identity(f.device[d].pose.orientation);
    f.device[EM_DEVICE_HEAD].flags = EM_POSE_ALL_VALID;
    f.device[EM_DEVICE_LEFT_HAND].flags = EM_POSE_ORIENTATION_VALID | EM_POSE_ORIENTATION_TRACKED;
    f.device[EM_DEVICE_RIGHT_HAND].flags = EM_POSE_ORIENTATION_VALID | EM_POSE_POSITION_VALID;
    char path[512];
    test_scratch_path("flags", "csv", path, sizeof path);
    struct st_stream_writer w;
    struct em_error err = {{0}};
    assert_int_equal(st_stream_writer_open(path, &w, &err), EM_OK);
    assert_int_equal(st_stream_writer_write(&w, &f, &err), EM_OK);
    assert_int_equal(st_stream_writer_close(&w, &err), EM_OK);
    struct st_stream s;
    assert_int_equal(st_stream_load(path, &s, &err), EM_OK);
    assert_int_equal(s.frames[0].device[EM_DEVICE_HEAD].flags, EM_POSE_ALL_VALID);
    assert_int_equal(s.frames[0].device[EM_DEVICE_LEFT_HAND].flags, 0);
    assert_int_equal(s.frames[0].device[EM_DEVICE_RIGHT_HAND].flags, EM_POSE_ALL_VALID);
    st_stream_fini(&s);
    remove(path);
}

static void
the_writer_refuses_what_the_reader_would_refuse(void **state)
{
    (void)state;
    struct em_tracking_frame f;
    memset(&f, 0, sizeof f);
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        m_quat_identity(f.device[d].pose.orientation);
        f.device[d].flags = EM_POSE_ALL_VALID;
    }
    f.time_s = 2.0;
    char path[512];
    test_scratch_path("refuse", "csv", path, sizeof path);
    struct st_stream_writer w;
    struct em_error err = {{0}};
    assert_int_equal(st_stream_writer_open(path, &w, &err), EM_OK);
    assert_int_equal(st_stream_writer_write(&w, &f, &err), EM_OK);
    /* The same time again. */
    assert_int_equal(st_stream_writer_write(&w, &f, &err), EM_ERROR_INVALID_ARGUMENT);
    test_expect_message(err.message, path, "frame 1", "t = 0 s", (const char *)NULL);
    f.time_s = 2.5;
    f.device[EM_DEVICE_RIGHT_HAND].pose.position_m[1] = NAN;
    assert_int_equal(st_stream_writer_write(&w, &f, &err), EM_ERROR_INVALID_ARGUMENT);
    test_expect_message(err.message, "right", "not finite", (const char *)NULL);
    f.device[EM_DEVICE_RIGHT_HAND].pose.position_m[1] = 1.0f;
    f.device[EM_DEVICE_HEAD].pose.orientation[3] = 0.5f;
    assert_int_equal(st_stream_writer_write(&w, &f, &err), EM_ERROR_INVALID_ARGUMENT);
    test_expect_message(err.message, "head orientation", "0.5", (const char *)NULL);
    assert_int_equal(st_stream_writer_close(&w, &err), EM_OK);
    struct st_stream s;
    assert_int_equal(st_stream_load(path, &s, &err), EM_OK);
    assert_int_equal(s.frame_count, 1);
    st_stream_fini(&s);
    remove(path);
}

static void
bad_rows_are_rejected_naming_the_line_and_column(void **state)
{
    (void)state;
    expect_rejected(HEADER "0," POSES "0.1,1,2,3\n", "bad.csv:3", "4 columns, expected 25",
                    NULL);
    expect_rejected(HEADER "0," POSES "0.1," POSE_VALUES ",9", "bad.csv:3", "more than 25 columns",
                    NULL);
    expect_rejected(HEADER "0,0.1,abc,0.2,0,0,0,1,1,0.3,1.0,0.1,0,0,0,1,1,-0.3,1.0,0.1,0,0,0,1,1",
                    "bad.csv:2", "column 3 (head_py)", "expected a number, got \"abc\"");
    expect_rejected(HEADER "0,0.1,1.6,0.2,0,0,0,1,1,0.3,nan,0.1,0,0,0,1,1,-0.3,1.0,0.1,0,0,0,1,1",
                    "bad.csv:2", "column 11 (left_py)", "expected a finite number, got \"nan\"");
    expect_rejected(HEADER "0,0.1,1.6,0.2,0,0,0,1,1,0.3,1,0.1,0,0,0,1,1,-0.3,1.0,0.1,0,0,0,inf,1",
                    "bad.csv:2", "column 24 (right_qw)", "finite number, got \"inf\"");
    expect_rejected(HEADER "0,0.1,1.6,0.2,0,0,0,1,1,0.3,1,0.1,0,0,0,1,1,-0.3,1.0,0.1,0,0,0,1,1e99",
                    "bad.csv:2", "column 25 (right_valid)", "expected 0 or 1, got \"1e99\"");
    expect_rejected(HEADER "0,0.1,1.6,0.2,0,0,0,1,yes,0.3,1,0.1,0,0,0,1,1,-0.3,1.0,0.1,0,0,0,1,1",
                    "bad.csv:2", "column 9 (head_valid)", "expected 0 or 1, got \"yes\"");
    expect_rejected(HEADER "1e999," POSES, "bad.csv:2", "column 1 (t)", "finite number");
}

static void
times_that_do_not_increase_are_rejected_naming_both(void **state)
{
    (void)state;
    expect_rejected(HEADER "0.5," POSES "0.25," POSES, "bad.csv:3",
                    "t = 0.25 is not after t = 0.5 on line 2", "strictly increasing");
    expect_rejected(HEADER "0," POSES "\n0.1," POSES "0.1," POSES, "bad.csv:5",
                    "t = 0.1 is not after t = 0.1 on line 4", NULL);
}

static void
a_non_unit_quaternion_on_a_valid_device_is_rejected(void **state)
{
    (void)state;
    expect_rejected(HEADER "0,0.1,1.6,0.2,0,0,0,1,1,0.3,1.0,0.1,0,0,0,0.5,1,-0.3,1,0.1,0,0,0,1,1",
                    "bad.csv:2", "left orientation", "length 0.5");
    /* 1e-4 off is within the tolerance of printed quaternions. */
    struct st_stream s;
    struct em_error err = {{0}};
    assert_int_equal(
        parse(HEADER "0,0.1,1.6,0.2,0,0,0,1.0001,1,0.3,1,0.1,0,0,0,1,1,-0.3,1,0.1,0,0,0,1,1",
              &s, &err),
        EM_OK);
    st_stream_fini(&s);
}

static void
files_without_a_usable_header_or_rows_are_rejected(void **state)
{
    (void)state;
    expect_rejected("", "empty file", NULL, NULL);
    expect_rejected("\n  \n", "empty file", NULL, NULL);
    expect_rejected(HEADER, "no samples after the header (line 1)", NULL, NULL);
    expect_rejected("0," POSES "0.1," POSES, "bad.csv:1", "expected a header line", NULL);
    expect_rejected("time,head_px,head_py,head_pz,head_qx,head_qy,head_qz,head_qw,head_valid,"
                    "left_px,left_py,left_pz,left_qx,left_qy,left_qz,left_qw,left_valid\n",
                    "bad.csv:1", "lacks column t", "the right group (right_px ... right_valid)");
    expect_rejected("t,head_px,head_py,head_pz,head_qx,head_qy,head_qz,head_valid,"
                    "left_px,left_py,left_pz,left_qx,left_qy,left_qz,left_qw,left_valid,"
                    "right_px,right_py,right_pz,right_qx,right_qy,right_qz,right_qw,right_valid\n",
                    "bad.csv:1", "lacks column head_qw", NULL);
    expect_rejected("t,t,head_px\n", "bad.csv:1", "column 2 (t) repeats column 1", NULL);
    expect_rejected("t,,head_px\n", "bad.csv:1", "column 2 of the header has no name", NULL);
}

static void
a_missing_file_is_reported_by_name(void **state)
{
    (void)state;
    struct st_stream s;
    struct em_error err = {{0}};
    assert_int_equal(st_stream_load("/nonexistent/walk.csv", &s, &err), EM_ERROR_IO);
    test_expect_message(err.message, "/nonexistent/walk.csv", "cannot open", (const char *)NULL);
}

static void
absurd_positions_and_times_are_rejected_naming_the_line(void **state)
{
    (void)state;
    /* A head 1e30 m away, and 3.4e38 m (issue 20: both were accepted silently). */
    expect_rejected(HEADER "0," POSES "0.01,0.1,1e30,0.2,0,0,0,1,1,0.3,1.0,0.1,0,0,0,1,1,-0.3,"
                           "1.0,0.1,0,0,0,1,1\n",
                    ":3:", "head position", "within 1 km");
    expect_rejected(HEADER "0,3.4e38,1.6,0.2,0,0,0,1,1,0.3,1.0,0.1,0,0,0,1,1,-0.3,1.0,0.1,0,0,0,1,1\n",
                    ":2:", "head position", "within 1 km");
    /* Times of 1e300, steps of 1e-9 s, and a jump of an hour between rows. */
    expect_rejected(HEADER "1e300," POSES "2e300," POSES, ":2:", "column 1 (t)", "within 1e9");
    expect_rejected(HEADER "0," POSES "0.000000001," POSES, ":3:", "0.1 ms to 1 s", "line 2");
    expect_rejected(HEADER "0," POSES "3600," POSES, ":3:", "0.1 ms to 1 s", "line 2");
    /* A lost device's values are not its pose: far away is fine there. */
    struct st_stream s;
    struct em_error err = {{0}};
    assert_int_equal(parse(HEADER "0,1e30,1.6,0.2,0,0,0,1,0,0.3,1.0,0.1,0,0,0,1,1,-0.3,1.0,0.1,0,"
                                  "0,0,1,1\n",
                           &s, &err),
                     EM_OK);
    st_stream_fini(&s);
}

static void
a_last_row_cut_short_is_dropped_and_its_line_given(void **state)
{
    (void)state;
    struct st_stream s;
    struct em_error err = {{0}};
    /* A recording a crash ended mid-row: the whole rows are read. */
    assert_int_equal(parse(HEADER "0," POSES "0.01," POSES "0.02,0.1,1.6,0.2,0,0", &s, &err),
                     EM_OK);
    assert_int_equal(s.frame_count, 2);
    assert_int_equal(s.cut_line, 4);
    st_stream_fini(&s);
    /* The same bad row with its line end is an error, as is a cut first row (nothing to
     * play) and a last row with too many columns. */
    expect_rejected(HEADER "0," POSES "0.01,0.1,1.6,0.2,0,0\n", ":3:", "columns", NULL);
    expect_rejected(HEADER "0,0.1,1.6", ":2:", "columns", NULL);
    expect_rejected(HEADER "0," POSES "0.01," POSE_VALUES ",7", ":3:", "columns", NULL);
    /* A whole last row without its line end is a row like any other. */
    assert_int_equal(parse(HEADER "0," POSES "0.01," POSE_VALUES, &s, &err), EM_OK);
    assert_int_equal(s.frame_count, 2);
    assert_int_equal(s.cut_line, 0);
    st_stream_fini(&s);
}

static void
a_pause_in_a_recording_is_written_as_the_longest_step(void **state)
{
    (void)state;
    char path[512];
    test_scratch_path("pause", "csv", path, sizeof path);
    struct st_stream_writer w;
    struct em_error err = {{0}};
    assert_int_equal(st_stream_writer_open_recording(path, &w, &err), EM_OK);
    struct em_tracking_frame f;
    memset(&f, 0, sizeof f);
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        f.device[d].pose.orientation[3] = 1.0f;
    const double times[] = {100.0, 100.01, 160.0, 160.01};
    for (int i = 0; i < 4; ++i) {
        f.time_s = times[i];
        assert_int_equal(st_stream_writer_write(&w, &f, &err), EM_OK);
    }
    char partial[600];
    snprintf(partial, sizeof partial, "%s.partial", path);
    FILE *probe = fopen(partial, "r"); /* the partial file is where the rows go */
    assert_non_null(probe);
    fclose(probe);
    assert_int_equal(st_stream_writer_close(&w, &err), EM_OK);
    assert_null(fopen(partial, "r"));
    struct st_stream s;
    if (st_stream_load(path, &s, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(s.frame_count, 4);
    assert_true(fabs(s.frames[2].time_s - 1.01) < 1e-9);
    assert_true(fabs(s.frames[3].time_s - 1.02) < 1e-9);
    st_stream_fini(&s);
    remove(path);
}

const struct CMUnitTest *
csv_tests(size_t *out_count)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(columns_are_found_by_name_in_any_order_and_unknown_groups_are_ignored),
        cmocka_unit_test(a_byte_order_mark_before_the_header_is_skipped),
        cmocka_unit_test(an_invalid_device_keeps_its_pose_values_and_has_no_flags),
        cmocka_unit_test(writing_then_reading_gives_identical_floats_and_times),
        cmocka_unit_test(reading_and_writing_twice_gives_byte_identical_text),
        cmocka_unit_test(the_writer_marks_a_device_valid_only_when_position_and_orientation_are),
        cmocka_unit_test(the_writer_refuses_what_the_reader_would_refuse),
        cmocka_unit_test(bad_rows_are_rejected_naming_the_line_and_column),
        cmocka_unit_test(times_that_do_not_increase_are_rejected_naming_both),
        cmocka_unit_test(a_non_unit_quaternion_on_a_valid_device_is_rejected),
        cmocka_unit_test(files_without_a_usable_header_or_rows_are_rejected),
        cmocka_unit_test(a_missing_file_is_reported_by_name),
        cmocka_unit_test(absurd_positions_and_times_are_rejected_naming_the_line),
        cmocka_unit_test(a_last_row_cut_short_is_dropped_and_its_line_given),
        cmocka_unit_test(a_pause_in_a_recording_is_written_as_the_longest_step),
    };
    *out_count = sizeof tests / sizeof tests[0];
    return tests;
}
