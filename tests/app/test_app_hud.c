/*
 * The HUD tells the truth about trackers (issue 21): a tracker whose samples the body
 * refuses (flags valid, 5 km away) is not shown as tracked while they last,
 * and is again when good samples return. Runs the live loop without a window.
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

#include "app/app_live.h"
#include "app/app_options.h"
#include "embody/body.h"
#include "embody/tracking.h"

#define TRACKER_STREAM EMBODY_SOURCE_DIR "/tests/data/streams-trackers/cmu_127_17.csv"
/* The left foot tracker's x position column in that file's header. */
#define BAD_FROM 30
#define BAD_TO 60

/* A copy of the tracker stream with the left foot 5 km away on rows [BAD_FROM, BAD_TO),
 * flags still valid (the body refuses samples over 1 km away). */
struct shown {
    int bad_rows_shown_tracked;
    int good_rows_shown_tracked;
    int bad_rows_waiting_or_blending;
};

static void
on_frame(void *user, long index, const struct em_tracking_frame *frame, struct render *render,
         const struct render_scene *scene, const struct body *body)
{
    (void)render;
    (void)body;
    struct shown *s = user;
    /* The left foot's tracker 5 km away on rows BAD_FROM..BAD_TO-1, as a live source (VMC,
     * OpenXR) could deliver it: the stream reader refuses such rows in a file, so the bad
     * sample goes into the frame the source gave, before the body sees it. */
    if (index >= BAD_FROM && index < BAD_TO)
        ((struct em_tracking_frame *)frame)->tracker[EM_TRACKER_LEFT_FOOT].pose.position_m[0] =
            5000.0f;
    /* The scene is the previous frame's: row index - 1. */
    const long row = index - 1;
    const struct em_device_pose *t = &scene->tracker[EM_TRACKER_LEFT_FOOT];
    const bool tracked = em_device_pose_usable(t);
    if (row >= BAD_FROM + 1 && row < BAD_TO) {
        s->bad_rows_shown_tracked += tracked;
        s->bad_rows_waiting_or_blending += scene->hud.tracker_note[EM_TRACKER_LEFT_FOOT] != NULL;
    } else if (row >= BAD_TO + 30 && row < BAD_TO + 60) {
        s->good_rows_shown_tracked += tracked;
    }
}

static void
a_tracker_the_body_refuses_is_not_shown_as_tracked(void **state)
{
    (void)state;
    char *argv[] = {"embody", "--replay", TRACKER_STREAM, "--fast", "--no-window", "-q", NULL};
    struct app_options options;
    struct em_error err = {{0}};
    if (app_options_parse(6, argv, 1, &options, &err) != EM_OK)
        fail_msg("%s", err.message);
    struct shown shown = {0};
    const struct app_live_hooks hooks = {.on_frame = on_frame, .user = &shown};
    assert_int_equal(app_live_run(&options, &hooks, NULL), 0);
    if (shown.bad_rows_shown_tracked != 0)
        fail_msg("the refused left foot tracker was shown as tracked on %d frames",
                 shown.bad_rows_shown_tracked);
    assert_int_equal(shown.bad_rows_waiting_or_blending, BAD_TO - BAD_FROM - 1);
    assert_int_equal(shown.good_rows_shown_tracked, 30);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_tracker_the_body_refuses_is_not_shown_as_tracked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
