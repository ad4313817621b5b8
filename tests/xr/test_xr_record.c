/*
 * Record followed by replay reproduces the stream to the last digit: frames read from
 * the test runtime through the OpenXR source are written with the stream writer (as
 * --record does), then played back by the replay source as fast as possible. Every pose
 * and validity comes back bit for bit as recorded, the times as recorded (relative to
 * the first frame), and the valid poses are the ones the runtime served.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "embody/input.h"
#include "embody/stream.h"
#include "xr/xr.h"
#include "xr_test_util.h"

#define MAX_CALLS 2000

static struct in_source *g_source;
static struct in_source *g_replay;

static int
destroy_sources(void **state)
{
    (void)state;
    in_source_destroy(&g_source);
    in_source_destroy(&g_replay);
    return 0;
}

static void
record_then_replay_reproduces_the_stream_exactly(void **state)
{
    (void)state;
    enum { N = 60 };
    struct em_tracking_frame rows[N], got[N];
    xt_make_frames(rows, N, 211);
    for (int k = 10; k < 20; ++k)
        rows[k].device[EM_DEVICE_LEFT_HAND].flags = 0;
    for (int k = 30; k < 35; ++k)
        rows[k].device[EM_DEVICE_RIGHT_HAND].flags = 0;
    rows[45].device[EM_DEVICE_HEAD].flags = 0;
    char script[1024];
    xt_use_runtime(xt_write_script("record", rows, N, "", script, sizeof script));

    /* Live frames from the runtime (headless: no display needed). */
    const struct oxr_desc desc = {.headless = true, .headless_rate_hz = 500.0f};
    struct em_error err = {{0}};
    if (oxr_source_create(&desc, &g_source, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(xt_pull_frames(g_source, got, N, MAX_CALLS, NULL), N);
    in_source_destroy(&g_source);
    xt_assert_no_violations();

    /* Recorded as --record does. */
    char path[1024];
    xt_temp_path("recorded.csv", path, sizeof path);
    struct st_stream_writer writer;
    if (st_stream_writer_open(path, &writer, &err) != EM_OK)
        fail_msg("%s", err.message);
    /* A frame less than the shortest step a stream may take (ST_STREAM_MIN_STEP_S) after
     * the last one written is skipped, as --record skips it (a loaded machine can pull
     * the headless runtime's frames microseconds apart). */
    int kept[N], kept_count = 0;
    for (int k = 0; k < N; ++k) {
        if (kept_count > 0 &&
            got[k].time_s - got[kept[kept_count - 1]].time_s < ST_STREAM_MIN_STEP_S)
            continue;
        if (st_stream_writer_write(&writer, &got[k], &err) != EM_OK)
            fail_msg("%s", err.message);
        kept[kept_count++] = k;
    }
    assert_true(kept_count > N / 2);
    if (st_stream_writer_close(&writer, &err) != EM_OK)
        fail_msg("%s", err.message);

    /* Played back. */
    const struct in_replay_desc replay = {.path = path, .as_fast_as_possible = true};
    if (in_replay_create(&replay, &g_replay, &err) != EM_OK)
        fail_msg("%s", err.message);
    for (int i = 0; i < kept_count; ++i) {
        const int k = kept[i];
        struct em_tracking_frame back;
        assert_int_equal(in_source_next(g_replay, &back), EM_OK);
        if (fabs(back.time_s - (got[k].time_s - got[0].time_s)) > 1e-6)
            fail_msg("frame %d: time %.9f s after replay, %.9f s recorded", k, back.time_s,
                     got[k].time_s - got[0].time_s);
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            const bool usable = em_device_pose_usable(&got[k].device[d]);
            assert_int_equal(em_device_pose_usable(&back.device[d]), usable);
            /* Lost devices keep the last values given: those come back too. */
            if (!xt_pose_equal(&back.device[d].pose, &got[k].device[d].pose))
                fail_msg("frame %d, device %d: the replayed pose differs from the recorded one",
                         k, d);
            if (usable && !xt_pose_equal(&back.device[d].pose, &rows[k].device[d].pose))
                fail_msg("frame %d, device %d: not the pose the runtime served", k, d);
        }
    }
    struct em_tracking_frame end;
    assert_int_equal(in_source_next(g_replay, &end), EM_END_OF_STREAM);
    in_source_destroy(&g_replay);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(record_then_replay_reproduces_the_stream_exactly,
                                  destroy_sources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
