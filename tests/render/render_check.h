/*
 * Helpers for render tests (tests/render/) and for any test that draws a scene and wants
 * to know the avatar really is on screen: a test pose with distinct sides, devices placed
 * where a headset and controllers would be, and pixel checks at projected points.
 *
 * Pixel checks read the image of the last render_draw (render_read_pixels) and use the
 * current camera (render_project), so they hold for any pose and any camera: a replayed
 * stream's pose can be checked the same way as the test pose.
 */
#ifndef EMBODY_RENDER_CHECK_H
#define EMBODY_RENDER_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "render/render.h"
#include "embody/skeleton.h"

/* Keeps SDL's video subsystem and the OpenGL library loaded until the process exits.
 * Mesa's driver (llvmpipe, LLVM) keeps allocations for its lifetime that it does not free
 * when it is unloaded; unloaded at render_destroy, LeakSanitizer reports them as leaks of
 * an "<unknown module>". Call once in a test process, after any test that needs SDL's
 * video to start from nothing (the no-display test). Returns false if that fails. */
bool render_check_hold_gl(void);

/* For cmocka tests: holds the GL library (render_check_hold_gl) and opens a hidden
 * default-size (1280x720) render without the HUD, so text never covers what a test
 * checks. Fails the test if either cannot be done. Free it with render_destroy. */
struct render *render_check_open_hidden(void);

/* What a pixel looks like: the avatar's parts by colour, or the world behind them. */
enum render_check_class {
    RENDER_CHECK_OTHER = 0,     /* none of the below (an edge, a device, the HUD) */
    RENDER_CHECK_AVATAR_CENTER, /* torso and head: warm sand */
    RENDER_CHECK_AVATAR_LEFT,   /* the body's left side: orange */
    RENDER_CHECK_AVATAR_RIGHT,  /* the body's right side: blue */
    RENDER_CHECK_BACKDROP,      /* background or floor between grid lines: dark, bluish */
};

const char *render_check_class_name(enum render_check_class c);

/* Classifies one sRGB pixel by its hue and brightness (lighting changes the brightness of
 * a part's colour much more than its hue). */
enum render_check_class render_check_classify(const uint8_t rgb[3]);

/* An image read back from the renderer. */
struct render_check_image {
    uint8_t *rgba;
    int width;
    int height;
};

/* Reads the last render_draw's image; false when out of memory. */
bool render_check_image_read(struct render *render, struct render_check_image *out_image);

void render_check_image_fini(struct render_check_image *image);

/* The share (0 to 1) of the pixels within `radius_px` of (x, y) that are of class `c`. */
float render_check_share(const struct render_check_image *image, float x, float y, int radius_px,
                         enum render_check_class c);

/* Checks the avatar where the scene's head, hands and feet project with the renderer's
 * current camera: around each, at least half the nearby pixels have that part's colour
 * (head: centre colour; hands and feet: their side's colour). Bones the skeleton lacks
 * are skipped. Returns the number of parts that failed (0 = all good) and describes each
 * check in `report` (one line each). `min_checked` parts must have been checked. */
int render_check_avatar(struct render *render, const struct render_check_image *image,
                        const struct render_scene *scene, char *report, size_t report_size);

/* A test scene: config/humanoid.json in a pose with the left arm raised, the right arm
 * reaching forward, the left knee bent and the head turned left, with a headset at the
 * eyes and controllers in the hands (all tracked). */
struct render_check_scene {
    struct sk_skeleton skeleton;
    struct sk_pose pose;
    struct render_scene scene;
};

bool render_check_scene_init(struct render_check_scene *ts, const char *humanoid_json_path,
                             struct em_error *err);

void render_check_scene_fini(struct render_check_scene *ts);

/* For cmocka tests: render_check_scene_init, failing the test with its message if it
 * fails. */
void render_check_scene_load(struct render_check_scene *ts, const char *humanoid_json_path);

/* Places the devices where a headset and controllers are for the scene's pose (eyes and
 * palms, protocol axes: head -Z forward, grip -Z through the fist), all valid. */
void render_check_place_devices(struct render_check_scene *ts);

#endif
