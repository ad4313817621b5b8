/*
 * Fingers in streams (PROTOCOL.md section 1b): the hand columns survive a write and a
 * read to the last bit, files without them read as before (no fingers), and bad values
 * or half groups are refused naming the line and the column.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/stream.h"
#include "test_stream.h"

static const char k_header[] =
    "t,head_px,head_py,head_pz,head_qx,head_qy,head_qz,head_qw,head_valid,"
    "left_px,left_py,left_pz,left_qx,left_qy,left_qz,left_qw,left_valid,"
    "right_px,right_py,right_pz,right_qx,right_qy,right_qz,right_qw,right_valid";
static const char k_devices[] = "0,0,1.6,0,0,1,0,0,1,0.3,1,0.2,0,0,0,1,1,-0.3,1,0.2,0,0,0,1,1";
/* The left hand's 21 column names. */
static void
left_finger_columns(char *out, size_t size, int leave_out)
{
    static const char *const fingers[HD_FINGER_COUNT] = {"thumb", "index", "middle", "ring",
                                                         "little"};
    static const char *const angles[4] = {"flex1_deg", "flex2_deg", "flex3_deg", "abduct_deg"};
    size_t n = 0;
    out[0] = '\0';
    for (int c = 0; c < 21; ++c) {
        if (c == leave_out)
            continue;
        if (c < 20)
            n += (size_t)snprintf(out + n, size - n, "%sleft_fingers_%s_%s", n ? "," : "",
                                  fingers[c / 4], angles[c % 4]);
        else
            n += (size_t)snprintf(out + n, size - n, ",left_fingers_valid");
    }
}

/* Frames of a moving hand: angles anywhere within their limits (values no short decimal
 * writes exactly), the right hand unknown on every third frame. */
static void
make_stream(struct st_stream *out, int frames)
{
    memset(out, 0, sizeof *out);
    char text[1024];
    snprintf(text, sizeof text, "%s\n%s\n", k_header, k_devices);
    struct st_stream one;
    struct em_error err = {{0}};
    if (st_stream_parse(text, "devices.csv", &one, &err) != EM_OK)
        fail_msg("%s", err.message);
    for (int i = 0; i < frames; ++i) {
        struct em_tracking_frame f = one.frames[0];
        f.time_s = (double)i / 90.0;
        struct st_fingers fingers;
        memset(&fingers, 0, sizeof fingers);
        for (int h = 0; h < HD_HAND_COUNT; ++h) {
            fingers.valid[h] = h == HD_LEFT || i % 3 != 0;
            for (int k = 0; k < HD_FINGER_COUNT; ++k)
                for (int j = 0; j < ST_FINGER_ANGLES; ++j) {
                    float lo, hi;
                    hd_joint_limits_deg(k, j, &lo, &hi);
                    const float x = fmodf((float)(i + k + j) / 7.0f + (float)h / 3.0f, 1.0f);
                    fingers.angle_deg[h][k][j] = lo + (hi - lo) * x;
                }
        }
        assert_int_equal(st_stream_append_fingers(out, &f, &fingers), EM_OK);
    }
    st_stream_fini(&one);
}

static void
finger_columns_round_trip_to_the_last_bit(void **state)
{
    (void)state;
    struct st_stream made, back, again;
    make_stream(&made, 300); /* past the first capacity (256): the arrays grow together */
    struct em_error err = {{0}};
    char path[512];
    test_scratch_path("fingers", "csv", path, sizeof path);
    if (st_stream_save(path, &made, &err) != EM_OK)
        fail_msg("%s", err.message);
    char *written = test_read_file(path);
    assert_non_null(strstr(written, "right_valid,left_fingers_thumb_flex1_deg,"));
    assert_non_null(strstr(written, "left_fingers_valid,right_fingers_thumb_flex1_deg,"));
    if (st_stream_load(path, &back, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(back.frame_count, 300);
    assert_int_equal(back.finger_mask, ST_FINGERS_ALL);
    assert_non_null(back.fingers);
    for (int i = 0; i < back.frame_count; ++i)
        for (int h = 0; h < HD_HAND_COUNT; ++h) {
            const struct st_fingers *a = &made.fingers[i], *b = &back.fingers[i];
            assert_int_equal(a->valid[h], b->valid[h]);
            for (int k = 0; k < HD_FINGER_COUNT; ++k)
                for (int j = 0; j < ST_FINGER_ANGLES; ++j)
                    /* every angle to the bit; an unknown hand's written as zeros */
                    assert_true(b->angle_deg[h][k][j] ==
                                (a->valid[h] ? a->angle_deg[h][k][j] : 0.0f));
        }
    /* Written again, the same text. */
    char path2[512];
    test_scratch_path("fingers-again", "csv", path2, sizeof path2);
    if (st_stream_save(path2, &back, &err) != EM_OK)
        fail_msg("%s", err.message);
    char *rewritten = test_read_file(path2);
    assert_string_equal(written, rewritten);
    if (st_stream_load(path2, &again, &err) != EM_OK)
        fail_msg("%s", err.message);
    free(written);
    free(rewritten);
    remove(path);
    remove(path2);
    st_stream_fini(&made);
    st_stream_fini(&back);
    st_stream_fini(&again);
}

static void
files_without_finger_columns_read_and_write_as_before(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/tests/data/streams/cmu_14_04.csv", EMBODY_SOURCE_DIR);
    struct st_stream s;
    struct em_error err = {{0}};
    if (st_stream_load(path, &s, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(s.finger_mask, 0u);
    assert_null(s.fingers);
    char out[512];
    test_scratch_path("no-fingers", "csv", out, sizeof out);
    if (st_stream_save(out, &s, &err) != EM_OK)
        fail_msg("%s", err.message);
    char *original = test_read_file(path), *written = test_read_file(out);
    /* the same header, no finger group */
    const size_t header = (size_t)(strchr(original, '\n') - original);
    assert_int_equal(strncmp(original, written, header + 1), 0);
    assert_null(strstr(written, "fingers"));
    free(original);
    free(written);
    remove(out);
    st_stream_fini(&s);

    /* A stream appended without fingers among ones with: those frames are unknown. */
    struct st_stream mixed;
    make_stream(&mixed, 2);
    assert_int_equal(st_stream_append(&mixed, &mixed.frames[1]), EM_OK);
    assert_false(mixed.fingers[2].valid[HD_LEFT]);
    assert_false(mixed.fingers[2].valid[HD_RIGHT]);
    st_stream_fini(&mixed);
}

/* Parses a stream with the left hand's group (less column `leave_out`, or -1), a first
 * row of zero angles and a second whose column `bad` (0 to 20 in the group) holds `text`;
 * returns the result and leaves the message in `err`. */
static enum em_result
parse_with_fingers(int leave_out, int bad, const char *text_value, struct em_error *err)
{
    char columns[1024], row1[512] = "", row2[512] = "";
    left_finger_columns(columns, sizeof columns, leave_out);
    size_t n1 = 0, n2 = 0;
    for (int c = 0; c < 21; ++c) {
        if (c == leave_out)
            continue;
        const char *v1 = c == 20 ? "1" : "0";
        const char *v2 = c == bad ? text_value : v1;
        n1 += (size_t)snprintf(row1 + n1, sizeof row1 - n1, ",%s", v1);
        n2 += (size_t)snprintf(row2 + n2, sizeof row2 - n2, ",%s", v2);
    }
    char text[4096];
    snprintf(text, sizeof text, "%s,%s\n%s%s\n1,%s%s\n", k_header, columns, k_devices, row1,
             k_devices + 2, row2);
    struct st_stream s;
    const enum em_result r = st_stream_parse(text, "hands.csv", &s, err);
    if (r == EM_OK) {
        assert_int_equal(s.finger_mask, ST_FINGERS_BIT(HD_LEFT));
        assert_true(s.fingers[0].valid[HD_LEFT]);
        st_stream_fini(&s);
    } else {
        assert_int_equal(s.frame_count, 0);
        assert_null(s.fingers);
    }
    return r;
}

static void
bad_finger_values_are_refused_naming_line_and_column(void **state)
{
    (void)state;
    struct em_error err = {{0}};
    assert_int_equal(parse_with_fingers(-1, 4, "90", &err), EM_OK); /* the index's limit */
    assert_int_equal(parse_with_fingers(-1, 20, "0", &err), EM_OK); /* not known */
    static const struct {
        int field;
        const char *value;
        const char *column;
    } bad[] = {
        {4, "95", "column 30 (left_fingers_index_flex1_deg)"},
        {3, "-11", "column 29 (left_fingers_thumb_abduct_deg)"},
        {0, "nan", "column 26 (left_fingers_thumb_flex1_deg)"},
        {15, "x", "column 41 (left_fingers_ring_abduct_deg)"},
        {18, "inf", "column 44 (left_fingers_little_flex3_deg)"},
        {9, "1e30", "column 35 (left_fingers_middle_flex2_deg)"},
        {20, "2", "column 46 (left_fingers_valid)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        assert_int_equal(parse_with_fingers(-1, bad[i].field, bad[i].value, &err), EM_ERROR_PARSE);
        test_expect_message(err.message, "hands.csv:3:", bad[i].column, NULL);
    }
    /* A half group names what it lacks. */
    assert_int_equal(parse_with_fingers(7, -1, "", &err), EM_ERROR_PARSE);
    test_expect_message(err.message, "hands.csv:1", "left_fingers group",
                        "left_fingers_index_abduct_deg", NULL);
}

/* One row of the left hand's group: every angle 0 but column `field` (0 to 19), which
 * holds `value`, and the flag `valid`. */
static enum em_result
parse_one_hand_row(const char *valid, int field, const char *value, struct st_stream *out,
                   struct em_error *err)
{
    char columns[1024], row[512] = "";
    left_finger_columns(columns, sizeof columns, -1);
    size_t n = 0;
    for (int c = 0; c < 20; ++c)
        n += (size_t)snprintf(row + n, sizeof row - n, ",%s", c == field ? value : "0");
    char text[4096];
    snprintf(text, sizeof text, "%s,%s\n%s%s,%s\n", k_header, columns, k_devices, row, valid);
    return st_stream_parse(text, "hands.csv", out, err);
}

/* PROTOCOL.md section 1b: with valid 0 "the angles are then 0 and mean nothing": they are
 * not held to the joints' limits (but must still be numbers), and read as 0. */
static void
an_unknown_hands_angles_are_not_held_to_the_limits(void **state)
{
    (void)state;
    struct st_stream s;
    struct em_error err = {{0}};
    /* The index's knuckle at -90 degrees, 70 past its limit, on an unknown hand. */
    if (parse_one_hand_row("0", 4, "-90", &s, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(s.frame_count, 1);
    assert_non_null(s.fingers);
    assert_false(s.fingers[0].valid[HD_LEFT]);
    for (int k = 0; k < HD_FINGER_COUNT; ++k)
        for (int j = 0; j < ST_FINGER_ANGLES; ++j)
            assert_true(s.fingers[0].angle_deg[HD_LEFT][k][j] == 0.0f); /* not used */
    st_stream_fini(&s);
    /* The same on a known hand is refused, naming the line and the column. */
    assert_int_equal(parse_one_hand_row("1", 4, "-90", &s, &err), EM_ERROR_PARSE);
    test_expect_message(err.message, "hands.csv:2:", "column 30 (left_fingers_index_flex1_deg)",
                        "-90", NULL);
    /* Unknown, but not a finite number: still refused. */
    assert_int_equal(parse_one_hand_row("0", 4, "nan", &s, &err), EM_ERROR_PARSE);
    test_expect_message(err.message, "hands.csv:2:", "column 30 (left_fingers_index_flex1_deg)",
                        NULL);
    assert_int_equal(parse_one_hand_row("0", 15, "x", &s, &err), EM_ERROR_PARSE);
    test_expect_message(err.message, "hands.csv:2:", "column 41 (left_fingers_ring_abduct_deg)",
                        NULL);
}

static void
the_writer_refuses_what_the_reader_would(void **state)
{
    (void)state;
    struct st_stream s;
    make_stream(&s, 1);
    char path[512];
    test_scratch_path("bad-fingers", "csv", path, sizeof path);
    struct st_stream_writer w;
    struct em_error err = {{0}};
    assert_int_equal(st_stream_writer_open(path, &w, &err), EM_OK);
    struct st_fingers f = s.fingers[0];
    f.valid[HD_RIGHT] = true;
    f.angle_deg[HD_RIGHT][HD_RING][1] = NAN;
    assert_int_equal(st_stream_writer_write_fingers(&w, &s.frames[0], &f, &err),
                     EM_ERROR_INVALID_ARGUMENT);
    test_expect_message(err.message, "right_fingers_ring_flex2_deg", NULL);
    f.angle_deg[HD_RIGHT][HD_RING][1] = 170.0f; /* a finger folded back on itself */
    assert_int_equal(st_stream_writer_write_fingers(&w, &s.frames[0], &f, &err),
                     EM_ERROR_INVALID_ARGUMENT);
    /* The same values on a hand not known are not written: accepted. */
    f.valid[HD_RIGHT] = false;
    assert_int_equal(st_stream_writer_write_fingers(&w, &s.frames[0], &f, &err), EM_OK);
    assert_int_equal(st_stream_writer_close(&w, &err), EM_OK);
    struct st_stream back;
    if (st_stream_load(path, &back, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_false(back.fingers[0].valid[HD_RIGHT]);
    assert_true(back.fingers[0].valid[HD_LEFT]);
    remove(path);
    st_stream_fini(&s);
    st_stream_fini(&back);
}

/* A hand pose goes into the columns and comes back within float rounding of a degree's
 * conversion. */
static void
a_hand_pose_goes_through_the_columns(void **state)
{
    (void)state;
    struct hd_model model;
    struct em_error err = {{0}};
    const struct hd_model_desc desc = {.hand = HD_RIGHT};
    assert_int_equal(hd_model_init(&desc, &model, &err), EM_OK);
    const struct hd_curls curls = {{0.1f, 0.7f, 0.3f, 0.9f, 0.5f}, 0.4f};
    struct hd_pose pose, back;
    hd_pose_from_curls(&model, &curls, &pose);
    struct st_fingers f;
    memset(&f, 0, sizeof f);
    st_fingers_set_pose(&f, HD_RIGHT, &pose);
    assert_true(f.valid[HD_RIGHT] && !f.valid[HD_LEFT]);
    st_fingers_get_pose(&f, HD_RIGHT, &back);
    for (int k = 0; k < HD_FINGER_COUNT; ++k) {
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            assert_float_equal(back.flex_rad[k][j], pose.flex_rad[k][j], 1e-6);
        assert_float_equal(back.abduct_rad[k], pose.abduct_rad[k], 1e-6);
    }
}

static const struct CMUnitTest k_tests[] = {
    cmocka_unit_test(a_hand_pose_goes_through_the_columns),
    cmocka_unit_test(finger_columns_round_trip_to_the_last_bit),
    cmocka_unit_test(files_without_finger_columns_read_and_write_as_before),
    cmocka_unit_test(bad_finger_values_are_refused_naming_line_and_column),
    cmocka_unit_test(an_unknown_hands_angles_are_not_held_to_the_limits),
    cmocka_unit_test(the_writer_refuses_what_the_reader_would),
};

const struct CMUnitTest *
finger_stream_tests(size_t *out_count)
{
    *out_count = sizeof k_tests / sizeof k_tests[0];
    return k_tests;
}
