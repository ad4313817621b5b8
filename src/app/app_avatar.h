/*
 * The avatar's skeleton, as the options choose it: the default humanoid
 * (config/humanoid.json, found with u_path_find_data), a known body from a BVH file's
 * HIERARCHY (st_bvh_to_humanoid: the motion is never read), an embody skeleton file, or a
 * VRM/glTF avatar (av_avatar_load: its skeleton and its skinned mesh). The default humanoid
 * wears the default avatar's mesh (config/avatar/embody.vrm, made from the same skeleton).
 * A VRM/glTF file that cannot be read is reported and the default avatar used instead.
 * Fitting to a height and arm span is the body's job (body_desc.height_m, arm_span_m).
 */
#ifndef EMBODY_APP_AVATAR_H
#define EMBODY_APP_AVATAR_H

#include <stdbool.h>
#include <stdio.h>

#include "avatar/avatar.h"
#include "embody/body.h"
#include "embody/hand.h"
#include "render/render.h"
#include "embody/prior.h"
#include "embody/result.h"
#include "embody/skeleton.h"

#define APP_PATH_MAX 4096

/* Where the avatar comes from; at most one of the paths is set. */
struct app_avatar_desc {
    const char *bvh_path;      /* --avatar FILE.bvh, or NULL */
    const char *skeleton_path; /* --skeleton FILE.json, or NULL */
    const char *model_path;    /* --avatar FILE.vrm|.glb|.gltf, or NULL */
    const char *bone_map_path; /* --bone-map FILE.json for model_path, or NULL */
    bool default_mesh;         /* the default humanoid wears config/avatar/embody.vrm (for
                                  drawing; commands without a window leave it out) */
    double unit_scale;         /* metres per BVH unit; 0 = st_bvh_guess_unit_scale */
    double height_m;           /* fit to this standing height; 0 = see app_avatar_load */
    double arm_span_m;         /* fit to this arm span; 0 = the avatar's proportions */
    const char *config_path;   /* --config FILE.json: the body's settings; NULL = the
                                  default config/body.json (built-in values without it) */
    const char *body_mode;     /* --body: "procedural" or "prior" (NULL: prior) */
    const char *prior_path;    /* --prior MODEL (NULL: PR_DEFAULT_MODEL); a file named that
                                  cannot be opened is an error, one that is refused falls
                                  back to the procedural estimate */
    const char *height_stream; /* a stream file to estimate the default humanoid's height
                                  from when height_m is 0 (in_height_estimate_file); NULL:
                                  APP_DEFAULT_HEIGHT_M */
};

struct app_avatar {
    struct sk_skeleton skeleton; /* as read (not yet fitted) */
    char path[APP_PATH_MAX];     /* the file it came from */
    const char *kind;            /* "default humanoid", "BVH skeleton", "skeleton file" */
    const char *option;          /* the option that chose it ("--avatar"), or NULL */
    double unit_scale;           /* BVH only: metres per file unit used */
    bool unit_scale_guessed;
    float own_height_m; /* the skeleton's standing height and arm span before fitting */
    float own_arm_span_m;
    float fit_height_m; /* what the body is asked to fit (0 = its own) */
    float fit_arm_span_m;
    /* The body's settings (offsets, filter, loss, floor) from the settings file; zero
     * fields keep the body's defaults. */
    struct body_desc settings;
    char settings_path[APP_PATH_MAX]; /* the file they came from, "" for built-in values */
    /* The skinned mesh drawn at the body's pose, when there is one. */
    struct av_avatar model;
    bool have_model;
    bool meshless; /* --avatar FILE.vrm had a skeleton and no mesh: drawn as capsules */
    char model_error[EM_ERROR_MESSAGE_MAX]; /* why --avatar FILE.vrm was not used, or "" */
    struct sk_bone_map rig; /* --avatar FILE.vrm's bones as found (--print-rig) */
    bool have_rig;
    struct av_skin_binding binding; /* to the body's fitted skeleton, renewed on refits */
    float bound_height_m;
    struct pr_model prior; /* the learned body-pose prior, when has_prior */
    bool has_prior;
    char prior_path[APP_PATH_MAX]; /* its model file, for reports ("" without it) */
    /* Where the fitted height comes from, for messages and --print-config: "--height",
     * "the avatar's own", "default", or "estimated from STREAM: ..." with the figures. */
    char height_source[APP_PATH_MAX + 200];
    bool height_estimated; /* from the stream (height_source says so) */
    /* The fingers this frame (app_avatar_set_fingers), for the avatar's mesh and the
     * capsule figure; has_fingers false: relaxed. */
    struct hd_pose fingers[HD_HAND_COUNT];
    bool has_fingers[HD_HAND_COUNT];
};

/* Reads the avatar and the body's settings (desc->config_path, or config/body.json when
 * it is found; a bad file is refused naming its field). The default humanoid is fitted to `height_m` or, when that is 0, to
 * APP_DEFAULT_HEIGHT_M; a BVH or skeleton file keeps its own height unless `height_m` is
 * given. Errors name the option and the file (and line or field, from the readers);
 * EM_ERROR_IO when the file is missing. `out_avatar` is the caller's to app_avatar_fini. */
enum em_result app_avatar_load(const struct app_avatar_desc *desc, struct app_avatar *out_avatar,
                               struct em_error *err);

/* The standing height the body is fitted to: the asked one, or the avatar's own. */
float
app_avatar_height_m(const struct app_avatar *avatar);

void app_avatar_fini(struct app_avatar *avatar);

/* --print-rig: writes the avatar file's bones as found, as a bone map file (JSON, bone ->
 * node name), to `out`; APP_EXIT_OK, or APP_EXIT_USAGE (logged) when no avatar file was
 * read. */
int app_avatar_print_rig(FILE *out, const struct app_avatar *avatar);

/* Puts the avatar's skinned mesh in `scene` (or nothing when it has none), binding it again
 * when the body's fitted skeleton changed height (calibration). */
void app_avatar_scene(struct app_avatar *avatar, const struct body *body,
                      struct render_scene *scene);

/* The fingers of this frame, per hand (enum hd_hand order; NULL or a NULL entry: the
 * relaxed hand): posed on the avatar's mesh (av_set_hand_pose) and given to the capsule
 * figure by the next app_avatar_scene. Allocates nothing. */
void app_avatar_set_fingers(struct app_avatar *avatar,
                            const struct hd_pose *const fingers[HD_HAND_COUNT]);

/* Fills `out_desc` (zeroed first) to build a body for the avatar. The skeleton pointer
 * refers to `avatar`, which must outlive body_create. */
void app_avatar_body_desc(const struct app_avatar *avatar, struct body_desc *out_desc);

/* Reads the avatar and builds its body; errors as app_avatar_load, and body_create's
 * reason (an implausible fit) prefixed with the options involved. */
enum em_result app_avatar_create_body(const struct app_avatar_desc *desc,
                                      struct app_avatar *out_avatar, struct body **out_body,
                                      struct em_error *err);

#endif
