/*
 * Body trackers in the mirror view (src/render/r_scene.c): a present tracker is drawn
 * where it is, an absent one is not, and a lost one is greyed and marked with the red
 * cross like a lost headset or controller.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "embody/m_math.h"
#include "render/render.h"
#include "render_check.h"

#define HUMANOID EMBODY_SOURCE_DIR "/config/humanoid.json"

static int
red_pixels(const struct render_check_image *image, const float px[2], int radius)
{
    int n = 0;
    for (int dy = -radius; dy <= radius; ++dy)
        for (int dx = -radius; dx <= radius; ++dx) {
            const int x = (int)px[0] + dx, y = (int)px[1] + dy;
            if (x < 0 || y < 0 || x >= image->width || y >= image->height)
                continue;
            const uint8_t *p = image->rgba + ((size_t)y * (size_t)image->width + (size_t)x) * 4;
            n += p[0] > 200 && p[1] < 80 && p[2] < 80;
        }
    return n;
}

static int
changed_pixels(const struct render_check_image *a, const struct render_check_image *b,
               const float px[2], int radius)
{
    int n = 0;
    for (int dy = -radius; dy <= radius; ++dy)
        for (int dx = -radius; dx <= radius; ++dx) {
            const int x = (int)px[0] + dx, y = (int)px[1] + dy;
            if (x < 0 || y < 0 || x >= a->width || y >= a->height)
                continue;
            const size_t at = ((size_t)y * (size_t)a->width + (size_t)x) * 4;
            n += abs(a->rgba[at] - b->rgba[at]) + abs(a->rgba[at + 1] - b->rgba[at + 1]) +
                     abs(a->rgba[at + 2] - b->rgba[at + 2]) >
                 60;
        }
    return n;
}

static void
trackers_are_drawn_where_they_are_and_marked_when_lost(void **state)
{
    (void)state;
    struct render_check_scene ts;
    render_check_scene_load(&ts, HUMANOID);
    struct render *r = render_check_open_hidden();
    /* A pelvis tracker half a metre beside the hips, in the clear. */
    struct em_device_pose *t = &ts.scene.tracker[EM_TRACKER_PELVIS];
    const float *hips = ts.pose.position_m[ts.skeleton.bone_joint[SK_HIPS]];
    m_vec3_set(t->pose.position_m, hips[0] + 0.5f, hips[1], hips[2]);
    m_quat_identity(t->pose.orientation);
    t->flags = EM_POSE_ALL_VALID;
    struct render_check_image without, with, lost;
    ts.scene.tracker_present = 0;
    render_draw(r, &ts.scene);
    assert_true(render_check_image_read(r, &without));
    ts.scene.tracker_present = EM_TRACKER_BIT(EM_TRACKER_PELVIS);
    render_draw(r, &ts.scene);
    assert_true(render_check_image_read(r, &with));
    t->flags = 0;
    render_draw(r, &ts.scene);
    assert_true(render_check_image_read(r, &lost));
    float px[2];
    assert_true(render_project(r, t->pose.position_m, px));
    const int radius = 14;
    const int drawn = changed_pixels(&without, &with, px, radius);
    if (drawn < 40)
        fail_msg("the tracker changed %d pixels around (%.0f, %.0f)", drawn, (double)px[0],
                 (double)px[1]);
    assert_int_equal(red_pixels(&with, px, radius), 0);
    const int red = red_pixels(&lost, px, radius);
    if (red < 20)
        fail_msg("lost tracker: %d red pixels", red);
    render_check_image_fini(&without);
    render_check_image_fini(&with);
    render_check_image_fini(&lost);
    render_destroy(&r);
    render_check_scene_fini(&ts);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trackers_are_drawn_where_they_are_and_marked_when_lost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
