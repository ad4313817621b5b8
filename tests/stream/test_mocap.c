/*
 * Streams made from motion capture (PROTOCOL.md section 2): every reference stream is
 * reproduced from its clip, the bundled demo is the stream of its clip, and a clip
 * without the tracked joints is refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/stream.h"
#include "test_stream.h"

#define CMU_SCALE 0.056444

/* Largest difference between two streams' numbers; fails on a different shape. */
static double
stream_difference(const struct st_stream *a, const struct st_stream *b, const char *what)
{
    if (a->frame_count != b->frame_count)
        fail_msg("%s: %d frames, expected %d", what, a->frame_count, b->frame_count);
    double worst = 0.0;
    for (int i = 0; i < a->frame_count; ++i) {
        const struct em_tracking_frame *fa = &a->frames[i], *fb = &b->frames[i];
        worst = fmax(worst, fabs(fa->time_s - fb->time_s));
        for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
            const struct em_device_pose *da = &fa->device[d], *db = &fb->device[d];
            if (da->flags != db->flags)
                fail_msg("%s: frame %d: %s flags differ", what, i,
                         em_device_name((enum em_device)d));
            for (int k = 0; k < 3; ++k)
                worst = fmax(worst, fabs((double)da->pose.position_m[k] -
                                         (double)db->pose.position_m[k]));
            /* The sign of each quaternion counts too. */
            for (int k = 0; k < 4; ++k)
                worst = fmax(worst, fabs((double)da->pose.orientation[k] -
                                         (double)db->pose.orientation[k]));
        }
    }
    return worst;
}

static void
clip_to_stream(const char *clip, struct st_stream *out, int *out_clip_frames)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/data/mocap/%s.bvh", EMBODY_SOURCE_DIR, clip);
    struct st_bvh bvh;
    struct em_error err = {{0}};
    if (st_bvh_load(path, &bvh, &err) != EM_OK)
        fail_msg("%s", err.message);
    if (st_mocap_to_stream(&bvh, CMU_SCALE, path, out, &err) != EM_OK)
        fail_msg("%s", err.message);
    *out_clip_frames = bvh.frame_count;
    st_bvh_fini(&bvh);
}

static void
every_reference_stream_is_reproduced_from_its_clip(void **state)
{
    (void)state;
    for (int c = 0; c < TEST_CLIP_COUNT; ++c) {
        struct st_stream made, reference;
        int clip_frames = 0;
        clip_to_stream(test_clips[c], &made, &clip_frames);
        char path[512];
        snprintf(path, sizeof path, "%s/tests/data/streams/%s.csv", EMBODY_SOURCE_DIR,
                 test_clips[c]);
        struct em_error err = {{0}};
        if (st_stream_load(path, &reference, &err) != EM_OK)
            fail_msg("%s", err.message);
        /* 120 fps clips: every second frame from frame 0. */
        assert_int_equal(made.frame_count, (clip_frames + 1) / 2);
        const double worst = stream_difference(&made, &reference, test_clips[c]);
        if (!(worst <= 1e-5))
            fail_msg("%s: differs from the reference stream by %g", test_clips[c], worst);
        st_stream_fini(&made);
        st_stream_fini(&reference);
    }
}

static void
the_demo_stream_is_the_stream_of_its_clip(void **state)
{
    (void)state;
    struct st_stream made, demo;
    int clip_frames = 0;
    clip_to_stream("cmu_14_14", &made, &clip_frames);
    struct em_error err = {{0}};
    if (st_stream_load(EMBODY_SOURCE_DIR "/config/demo/demo.csv", &demo, &err) != EM_OK)
        fail_msg("%s", err.message);
    /* Written by the exact writer, so only a change in the conversion can differ. */
    const double worst = stream_difference(&made, &demo, "demo.csv");
    if (!(worst <= 1e-6))
        fail_msg("config/demo/demo.csv differs from cmu_14_14's stream by %g: remake it with "
                 "make_stream",
                 worst);
    st_stream_fini(&made);
    st_stream_fini(&demo);
}

static void
a_60_fps_clip_keeps_every_frame(void **state)
{
    (void)state;
    char *text = test_read_file(EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_127_17.bvh");
    char *ft = strstr(text, "Frame Time: 0.0083333");
    assert_non_null(ft);
    memcpy(ft, "Frame Time: 0.0166667", 21);
    struct st_bvh bvh;
    struct st_stream s;
    struct em_error err = {{0}};
    assert_int_equal(st_bvh_parse(text, "60fps.bvh", &bvh, &err), EM_OK);
    assert_int_equal(st_mocap_to_stream(&bvh, CMU_SCALE, "60fps.bvh", &s, &err), EM_OK);
    assert_int_equal(s.frame_count, bvh.frame_count);
    assert_true(s.frames[10].time_s == 10 * 0.0166667);
    st_stream_fini(&s);
    st_bvh_fini(&bvh);
    free(text);
}

static void
a_clip_without_the_tracked_joints_is_refused_naming_them(void **state)
{
    (void)state;
    char *text = test_read_file(EMBODY_SOURCE_DIR "/tests/data/mocap/cmu_127_17.bvh");
    memcpy(strstr(text, "JOINT LeftFingerBase\n"), "JOINT LeftFingerBasX\n", 21);
    struct st_bvh bvh;
    struct st_stream s;
    struct em_error err = {{0}};
    assert_int_equal(st_bvh_parse(text, "renamed.bvh", &bvh, &err), EM_OK);
    assert_int_equal(st_mocap_to_stream(&bvh, CMU_SCALE, "renamed.bvh", &s, &err),
                     EM_ERROR_PARSE);
    test_expect_message(err.message, "renamed.bvh", "no joint named \"LeftFingerBase\"",
                        (const char *)NULL);
    assert_null(s.frames);
    assert_int_equal(st_mocap_to_stream(&bvh, -1.0, "renamed.bvh", &s, &err),
                     EM_ERROR_INVALID_ARGUMENT);
    st_bvh_fini(&bvh);
    free(text);
}

const struct CMUnitTest *
mocap_tests(size_t *out_count)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_reference_stream_is_reproduced_from_its_clip),
        cmocka_unit_test(the_demo_stream_is_the_stream_of_its_clip),
        cmocka_unit_test(a_60_fps_clip_keeps_every_frame),
        cmocka_unit_test(a_clip_without_the_tracked_joints_is_refused_naming_them),
    };
    *out_count = sizeof tests / sizeof tests[0];
    return tests;
}
