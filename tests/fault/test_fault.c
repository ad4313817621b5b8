/*
 * Tests of the fault module (src/fault/fault.h): each fault changes a stream as it
 * says, measured back from the faulted frames (drift in degrees per minute, latency as a
 * time shift, noise's deviation, a dropout's share and window, mount offset and turn, a
 * swap); the same seed gives the same frames; bad faults are refused naming the option and
 * what was expected; and a source with faults delivers faulted frames.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fault/fault.h"
#include "embody/m_math.h"

#define RATE_HZ 60.0
#define PI_D 3.14159265358979323846

static void
pose_set(struct em_device_pose *d, float x, float y, float z)
{
    m_quat_identity(d->pose.orientation);
    m_vec3_set(d->pose.position_m, x, y, z);
    d->flags = EM_POSE_ALL_VALID;
}

/* `count` frames at 60 Hz: head, hands and a pelvis and both feet trackers, the pelvis
 * moving along +X at 1 m/s, everything else still, all facing -Z turned by nothing. */
static struct em_tracking_frame *
make_frames(int count)
{
    struct em_tracking_frame *frames = aligned_alloc(16, (size_t)count * sizeof *frames);
    assert_non_null(frames);
    memset(frames, 0, (size_t)count * sizeof *frames);
    for (int i = 0; i < count; ++i) {
        struct em_tracking_frame *f = &frames[i];
        f->time_s = 10.0 + i / RATE_HZ; /* a clock that does not start at 0 */
        pose_set(&f->device[EM_DEVICE_HEAD], 0.0f, 1.6f, 0.0f);
        pose_set(&f->device[EM_DEVICE_LEFT_HAND], 0.3f, 1.0f, 0.0f);
        pose_set(&f->device[EM_DEVICE_RIGHT_HAND], -0.3f, 1.0f, 0.0f);
        f->tracker_present = EM_TRACKER_BIT(EM_TRACKER_PELVIS) |
                             EM_TRACKER_BIT(EM_TRACKER_LEFT_FOOT) |
                             EM_TRACKER_BIT(EM_TRACKER_RIGHT_FOOT);
        pose_set(&f->tracker[EM_TRACKER_PELVIS], (float)(i / RATE_HZ), 1.0f, 0.0f);
        pose_set(&f->tracker[EM_TRACKER_LEFT_FOOT], 0.1f, 0.1f, 0.0f);
        pose_set(&f->tracker[EM_TRACKER_RIGHT_FOOT], -0.1f, 0.1f, 0.0f);
    }
    return frames;
}

static void
apply(const char *fault, uint64_t seed, struct em_tracking_frame *frames, int count)
{
    struct flt_set set = {.seed = seed};
    struct em_error err = {{0}};
    assert_int_equal(flt_set_add(&set, fault, "--fault", &err), EM_OK);
    assert_int_equal(flt_apply_frames(&set, frames, count, &err), EM_OK);
}

/* The heading (degrees) of the device's -Z (forward) about +Y. */
static double
yaw_deg(const struct em_device_pose *d)
{
    const float forward[3] = {0.0f, 0.0f, -1.0f};
    float f[3];
    m_quat_rotate(d->pose.orientation, forward, f);
    return atan2(-(double)f[0], -(double)f[2]) * 180.0 / PI_D;
}

static void
drift_turns_the_heading_at_the_given_degrees_per_minute(void **state)
{
    (void)state;
    const int n = (int)(90 * RATE_HZ) + 1; /* 90 s */
    struct em_tracking_frame *frames = make_frames(n);
    apply("drift:pelvis:20deg/min", 0, frames, n);
    /* the rate measured back: a least-squares slope of the heading over time */
    double st = 0, sy = 0, stt = 0, sty = 0;
    for (int i = 0; i < n; ++i) {
        const double t = frames[i].time_s - frames[0].time_s;
        const double y = yaw_deg(&frames[i].tracker[EM_TRACKER_PELVIS]);
        st += t, sy += y, stt += t * t, sty += t * y;
    }
    const double slope_deg_per_min = 60.0 * (n * sty - st * sy) / (n * stt - st * st);
    assert_true(fabs(slope_deg_per_min - 20.0) < 0.05);
    assert_true(fabs(yaw_deg(&frames[n - 1].tracker[EM_TRACKER_PELVIS]) - 30.0) < 0.05);
    /* the position and every other device are left alone */
    assert_true(fabsf(frames[n - 1].tracker[EM_TRACKER_PELVIS].pose.position_m[0] - 90.0f) < 1e-4f);
    assert_true(fabs(yaw_deg(&frames[n - 1].tracker[EM_TRACKER_LEFT_FOOT])) < 1e-6);
    assert_true(fabs(yaw_deg(&frames[n - 1].device[EM_DEVICE_HEAD])) < 1e-6);
    free(frames);
}

static void
latency_delays_the_pose_by_the_given_time(void **state)
{
    (void)state;
    const int n = 600;
    struct em_tracking_frame *frames = make_frames(n);
    apply("latency:pelvis:50", 0, frames, n);
    /* the pelvis moves at 1 m/s along +X: late by 50 ms it is 5 cm behind, from the
     * first 50 ms on; the time shift measured back from each frame */
    for (int i = 10; i < n; ++i) {
        const double t = frames[i].time_s - frames[0].time_s;
        const double shown = (double)frames[i].tracker[EM_TRACKER_PELVIS].pose.position_m[0];
        assert_true(fabs((t - shown) - 0.050) < 1e-4);
    }
    /* before the history reaches back 50 ms: the first sample */
    assert_true(fabsf(frames[1].tracker[EM_TRACKER_PELVIS].pose.position_m[0]) < 1e-6f);
    assert_true(fabsf(frames[n - 1].tracker[EM_TRACKER_LEFT_FOOT].pose.position_m[0] - 0.1f) <
                1e-6f);
    free(frames);
}

static void
noise_has_the_given_deviation_on_each_axis(void **state)
{
    (void)state;
    const int n = 20000;
    struct em_tracking_frame *frames = make_frames(n);
    apply("noise:left_foot:5mm", 7, frames, n);
    const float rest[3] = {0.1f, 0.1f, 0.0f};
    for (int a = 0; a < 3; ++a) {
        double sum = 0.0, sq = 0.0;
        for (int i = 0; i < n; ++i) {
            const double e =
                (double)(frames[i].tracker[EM_TRACKER_LEFT_FOOT].pose.position_m[a] - rest[a]);
            sum += e;
            sq += e * e;
        }
        const double mean = sum / n, sd_mm = 1000.0 * sqrt(sq / n - mean * mean);
        assert_true(fabs(mean) < 2e-4);
        assert_true(fabs(sd_mm - 5.0) < 0.15);
    }
    assert_true(fabsf(frames[n - 1].tracker[EM_TRACKER_RIGHT_FOOT].pose.position_m[0] + 0.1f) <
                1e-7f);
    free(frames);
}

static void
dropout_share_loses_that_share_in_bursts_and_holds_the_pose(void **state)
{
    (void)state;
    const int n = (int)(3600 * RATE_HZ); /* an hour */
    struct em_tracking_frame *frames = make_frames(n);
    apply("dropout:pelvis:20%", 3, frames, n);
    int lost = 0, bursts = 0;
    for (int i = 0; i < n; ++i) {
        const struct em_device_pose *p = &frames[i].tracker[EM_TRACKER_PELVIS];
        if (p->flags != 0) {
            assert_int_equal(p->flags, EM_POSE_ALL_VALID);
            continue;
        }
        lost++;
        if (i == 0 || frames[i - 1].tracker[EM_TRACKER_PELVIS].flags != 0)
            bursts++;
        if (i > 0) /* held at the value before: never ahead of the previous frame */
            assert_true(p->pose.position_m[0] ==
                        frames[i - 1].tracker[EM_TRACKER_PELVIS].pose.position_m[0]);
    }
    const double share = (double)lost / n;
    const double burst_s = (double)lost / bursts / RATE_HZ;
    assert_true(fabs(share - 0.20) < 0.02);
    assert_true(fabs(burst_s - FLT_DROPOUT_BURST_S) < 0.1);
    assert_int_equal(frames[n / 2].tracker[EM_TRACKER_LEFT_FOOT].flags, EM_POSE_ALL_VALID);
    free(frames);
}

static void
dropout_window_loses_exactly_the_window(void **state)
{
    (void)state;
    const int n = 600;
    struct em_tracking_frame *frames = make_frames(n);
    apply("dropout:feet:2-3.5s", 0, frames, n);
    for (int i = 0; i < n; ++i) {
        const double t = frames[i].time_s - frames[0].time_s;
        const bool inside = t >= 2.0 - 1e-9 && t < 3.5 - 1e-9;
        assert_int_equal(frames[i].tracker[EM_TRACKER_LEFT_FOOT].flags == 0, inside);
        assert_int_equal(frames[i].tracker[EM_TRACKER_RIGHT_FOOT].flags == 0, inside);
        assert_int_equal(frames[i].tracker[EM_TRACKER_PELVIS].flags, EM_POSE_ALL_VALID);
    }
    free(frames);
}

static void
offset_and_turn_move_the_tracker_as_strapped(void **state)
{
    (void)state;
    struct em_tracking_frame *frames = make_frames(2);
    /* the left foot tracker turned 90 degrees about +X first: its +Y is then world +Z */
    const float x_axis[3] = {1.0f, 0.0f, 0.0f};
    for (int i = 0; i < 2; ++i)
        m_quat_from_axis_angle(x_axis, (float)(PI_D / 2),
                               frames[i].tracker[EM_TRACKER_LEFT_FOOT].pose.orientation);
    apply("offset:left_foot:4cm", 0, frames, 2);
    const float *p = frames[1].tracker[EM_TRACKER_LEFT_FOOT].pose.position_m;
    assert_true(fabsf(p[0] - 0.1f) < 1e-6f && fabsf(p[1] - 0.1f) < 1e-6f &&
                fabsf(p[2] - 0.04f) < 1e-6f);
    apply("turn:right_foot:-25", 0, frames, 2);
    assert_true(fabs(yaw_deg(&frames[1].tracker[EM_TRACKER_RIGHT_FOOT]) + 25.0) < 1e-3);
    assert_true(fabsf(frames[1].tracker[EM_TRACKER_RIGHT_FOOT].pose.position_m[0] + 0.1f) < 1e-7f);
    free(frames);
}

static void
swap_exchanges_left_and_right(void **state)
{
    (void)state;
    struct em_tracking_frame *frames = make_frames(3);
    apply("swap:feet", 0, frames, 3);
    assert_true(frames[2].tracker[EM_TRACKER_LEFT_FOOT].pose.position_m[0] < 0.0f);
    assert_true(frames[2].tracker[EM_TRACKER_RIGHT_FOOT].pose.position_m[0] > 0.0f);
    apply("swap:left", 0, frames, 3); /* a hand names its pair */
    assert_true(frames[2].device[EM_DEVICE_LEFT_HAND].pose.position_m[0] < 0.0f);
    free(frames);
}

static void
faults_on_devices_the_source_lacks_do_nothing(void **state)
{
    (void)state;
    struct em_tracking_frame *a = make_frames(120), *b = make_frames(120);
    apply("noise:knees:50", 0, a, 120);
    apply("swap:elbows", 0, a, 120);
    assert_memory_equal(a, b, 120 * sizeof *a);
    free(a);
    free(b);
}

static void
the_same_seed_gives_the_same_frames(void **state)
{
    (void)state;
    const int n = 2000;
    struct em_tracking_frame *a = make_frames(n), *b = make_frames(n), *c = make_frames(n);
    const char *faults[] = {"noise:all:3", "dropout:trackers:0.1", "latency:hands:20"};
    for (int k = 0; k < 3; ++k) {
        apply(faults[k], 11, a, n);
        apply(faults[k], 11, b, n);
        apply(faults[k], 12, c, n);
    }
    assert_memory_equal(a, b, (size_t)n * sizeof *a);
    assert_true(memcmp(a, c, (size_t)n * sizeof *a) != 0);
    free(a);
    free(b);
    free(c);
}

static void
expect_refused(const char *text, const char *expected_part)
{
    struct flt_fault f;
    struct em_error err = {{0}};
    assert_int_equal(flt_parse(text, "--fault", &f, &err), EM_ERROR_INVALID_ARGUMENT);
    if (!strstr(err.message, "--fault") || !strstr(err.message, expected_part))
        fail_msg("\"%s\": message \"%s\" lacks \"%s\"", text, err.message, expected_part);
}

static void
bad_faults_are_refused_naming_the_option_and_what_was_expected(void **state)
{
    (void)state;
    expect_refused("drift", "expected KIND:DEVICE:AMOUNT");
    expect_refused("wobble:pelvis:3", "unknown kind");
    expect_refused("drift:belly:3", "unknown device");
    expect_refused("drift:pelvis", "expected an amount");
    expect_refused("drift:pelvis:", "expected an amount");
    expect_refused("drift:pelvis:fast", "degrees per minute");
    expect_refused("noise:pelvis:-1", "from 0 to 1000");
    expect_refused("noise:pelvis:5cm", "mm");
    expect_refused("latency:pelvis:nan", "latency in ms");
    expect_refused("latency:pelvis:5000", "latency in ms");
    expect_refused("dropout:pelvis:1.5", "share");
    expect_refused("dropout:pelvis:120%", "share");
    expect_refused("dropout:pelvis:3-2s", "window");
    expect_refused("dropout:pelvis:2-3", "window");
    expect_refused("swap:pelvis", "pair");
    expect_refused("swap:trackers", "pair");
    expect_refused("swap:feet:2", "no amount");
    expect_refused("turn:pelvis:200", "degrees");
    struct flt_fault f;
    struct em_error err = {{0}};
    assert_int_equal(flt_parse("dropout:pelvis:2.5-4s", "--fault", &f, &err), EM_OK);
    assert_true(f.window && f.window_from_s == 2.5 && f.window_to_s == 4.0);
    assert_int_equal(flt_parse("dropout:hands:15%", "--fault", &f, &err), EM_OK);
    assert_true(fabs(f.amount - 0.15) < 1e-12 && !f.window);
    struct flt_set set = {0};
    for (int i = 0; i < FLT_MAX_FAULTS; ++i)
        assert_int_equal(flt_set_add(&set, "noise:head:1", "--fault", &err), EM_OK);
    assert_int_equal(flt_set_add(&set, "noise:head:1", "--fault", &err), EM_ERROR_LIMIT);
}

/* A source of fixed frames, for the wrapper. */
struct list_source {
    struct in_source base;
    struct em_tracking_frame *frames;
    int count, next;
};

static enum em_result
list_next(struct in_source *src, struct em_tracking_frame *out)
{
    struct list_source *s = (struct list_source *)src;
    if (s->next >= s->count)
        return EM_END_OF_STREAM;
    *out = s->frames[s->next++];
    return EM_OK;
}

static void
list_destroy(struct in_source *src)
{
    free(((struct list_source *)src)->frames);
    free(src);
}

static void
a_source_with_faults_delivers_faulted_frames(void **state)
{
    (void)state;
    const int n = 120;
    struct list_source *inner = calloc(1, sizeof *inner);
    assert_non_null(inner);
    inner->base = (struct in_source){.name = "list", .next = list_next, .destroy = list_destroy};
    inner->frames = make_frames(n);
    inner->count = n;
    struct flt_set set = {0};
    struct em_error err = {{0}};
    assert_int_equal(flt_set_add(&set, "dropout:pelvis:1-10s", "--fault", &err), EM_OK);
    struct in_source *src = NULL;
    assert_int_equal(flt_source_create(&inner->base, &set, &src, &err), EM_OK);
    assert_string_equal(src->name, "list");
    assert_false(in_source_can_pause(src));
    struct em_tracking_frame f;
    int lost = 0, frames = 0;
    while (in_source_next(src, &f) == EM_OK) {
        frames++;
        lost += f.tracker[EM_TRACKER_PELVIS].flags == 0;
    }
    assert_int_equal(frames, n);
    assert_int_equal(lost, n - 60);
    in_source_destroy(&src);
    assert_null(src);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(drift_turns_the_heading_at_the_given_degrees_per_minute),
        cmocka_unit_test(latency_delays_the_pose_by_the_given_time),
        cmocka_unit_test(noise_has_the_given_deviation_on_each_axis),
        cmocka_unit_test(dropout_share_loses_that_share_in_bursts_and_holds_the_pose),
        cmocka_unit_test(dropout_window_loses_exactly_the_window),
        cmocka_unit_test(offset_and_turn_move_the_tracker_as_strapped),
        cmocka_unit_test(swap_exchanges_left_and_right),
        cmocka_unit_test(faults_on_devices_the_source_lacks_do_nothing),
        cmocka_unit_test(the_same_seed_gives_the_same_frames),
        cmocka_unit_test(bad_faults_are_refused_naming_the_option_and_what_was_expected),
        cmocka_unit_test(a_source_with_faults_delivers_faulted_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
