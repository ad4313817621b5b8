/* Reading the avatar's skeleton and building its body (app_avatar.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app_args.h"
#include "app/app_avatar.h"
#include "app/app_options.h"
#include "embody/input.h"
#include "embody/stream.h"
#include "util/u_log.h"
#include "util/u_path.h"

#define DEFAULT_HUMANOID "config/humanoid.json"

/* The body's settings: --config's file, else config/body.json where the data is (none:
 * the built-in values, which are the same). */
static enum em_result
load_settings(struct app_avatar *a, const char *config_path, struct em_error *err)
{
    memset(&a->settings, 0, sizeof a->settings);
    a->settings_path[0] = '\0';
    if (config_path) {
        snprintf(a->settings_path, sizeof a->settings_path, "%s", config_path);
        enum em_result r = app_check_readable("--config", config_path, err);
        if (r == EM_OK && (r = body_desc_load_json(config_path, &a->settings, err)) != EM_OK)
            app_error_prefix(err, "--config");
        return r;
    }
    char path[APP_PATH_MAX];
    if (!u_path_find_data(APP_DEFAULT_BODY_SETTINGS, path, sizeof path))
        return EM_OK;
    app_path_tidy(path, a->settings_path, sizeof a->settings_path);
    return body_desc_load_json(a->settings_path, &a->settings, err);
}

#define DEFAULT_MODEL "config/avatar/embody.vrm"

static enum em_result
load_default(struct app_avatar *a, struct em_error *err)
{
    a->kind = "default humanoid";
    if (!u_path_find_data(DEFAULT_HUMANOID, a->path, sizeof a->path)) {
        char tried[APP_PATH_MAX];
        snprintf(tried, sizeof tried, "%s", a->path);
        a->path[0] = '\0';
        return em_fail(err, EM_ERROR_IO,
                       "cannot find the default avatar %s (tried %s); set EMBODY_DATA_DIR to "
                       "the folder holding config/",
                       DEFAULT_HUMANOID, tried);
    }
    const enum em_result r = sk_skeleton_load_json(a->path, &a->skeleton, err);
    app_path_tidy(a->path, a->path, sizeof a->path);
    return r;
}

static enum em_result
load_skeleton_file(struct app_avatar *a, const char *path, struct em_error *err)
{
    a->kind = "skeleton file";
    a->option = "--skeleton";
    snprintf(a->path, sizeof a->path, "%s", path);
    enum em_result r = app_check_readable(a->option, path, err);
    if (r == EM_OK)
        r = sk_skeleton_load_json(path, &a->skeleton, err);
    if (r == EM_OK)
        r = sk_humanoid_validate(&a->skeleton, path, err);
    if (r == EM_OK)
        r = sk_humanoid_check_size(&a->skeleton, path, err);
    if (r != EM_OK && r != EM_ERROR_IO)
        app_error_prefix(err, a->option);
    return r;
}

/* Says which unit scale made a BVH avatar's size (the usual cause of a wrong one). */
static void
append_unit_scale(struct em_error *err, double unit_scale, bool guessed)
{
    const size_t n = strlen(err->message);
    snprintf(err->message + n, sizeof err->message - n, " [read at %g m per BVH unit%s]",
             unit_scale, guessed ? ", guessed; see --unit-scale" : ", from --unit-scale");
}

static enum em_result
load_bvh(struct app_avatar *a, const char *path, double unit_scale, struct em_error *err)
{
    a->kind = "BVH skeleton";
    a->option = "--avatar";
    snprintf(a->path, sizeof a->path, "%s", path);
    enum em_result r = app_check_readable(a->option, path, err);
    if (r != EM_OK)
        return r;
    struct st_bvh bvh;
    r = st_bvh_load(path, &bvh, err);
    if (r == EM_OK) {
        a->unit_scale_guessed = unit_scale <= 0.0;
        a->unit_scale = a->unit_scale_guessed ? st_bvh_guess_unit_scale(&bvh) : unit_scale;
        r = st_bvh_to_humanoid(&bvh, st_bvh_guess_name_map(&bvh), a->unit_scale, path,
                               &a->skeleton, err);
        st_bvh_fini(&bvh);
        if (r == EM_OK && (r = sk_humanoid_check_size(&a->skeleton, path, err)) != EM_OK)
            append_unit_scale(err, a->unit_scale, a->unit_scale_guessed);
    }
    if (r != EM_OK)
        app_error_prefix(err, a->option);
    return r;
}

/* The default avatar's mesh on the default humanoid; without it the capsule figure. */
static void
load_default_model(struct app_avatar *a)
{
    char path[APP_PATH_MAX];
    struct em_error err = {{0}};
    if (!u_path_find_data(DEFAULT_MODEL, path, sizeof path)) {
        U_LOG_W("cannot find the default avatar's mesh %s; showing the capsule figure",
                DEFAULT_MODEL);
        return;
    }
    app_path_tidy(path, path, sizeof path);
    if (av_avatar_load(path, NULL, &a->model, &err) != EM_OK) {
        U_LOG_W("%s; showing the capsule figure", err.message);
        return;
    }
    a->have_model = true;
}

/* A VRM or glTF avatar: its skeleton (with the default humanoid's joint limits, its rest
 * frames being embody's) and its mesh. */
/* Says which bones of a rig were guessed, and a mirror-named rig's swap. */
static void
report_rig(const struct av_avatar *model, const char *path)
{
    char guessed[400] = "";
    for (int b = 0; b < SK_BONE_COUNT; ++b) {
        if (model->rig_found[b] != SK_RIG_BY_SHAPE)
            continue;
        const size_t n = strlen(guessed);
        snprintf(guessed + n, sizeof guessed - n, "%s%s", n ? ", " : "",
                 sk_bone_name((enum sk_bone)b));
    }
    if (guessed[0])
        U_LOG_W("%s: bones guessed from the skeleton's shape (their names are none embody "
                "knows): %s; --print-rig shows their nodes, --bone-map FILE.json sets them",
                path, guessed);
    if (model->rig_sides_swapped)
        U_LOG_W("%s: the bones named left are on the figure's right (its toes show which way "
                "it faces): read with the sides swapped",
                path);
}

static enum em_result
load_model(struct app_avatar *a, const char *path, const struct sk_bone_map *bone_map,
           struct em_error *err)
{
    a->kind = app_has_suffix(path, ".fbx") ? "FBX avatar" : "VRM/glTF avatar";
    a->option = "--avatar";
    snprintf(a->path, sizeof a->path, "%s", path);
    enum em_result r = app_check_readable(a->option, path, err);
    if (r == EM_OK)
        r = av_avatar_load(path, &(struct av_load_desc){.bone_map = bone_map}, &a->model, err);
    if (r != EM_OK)
        return r;
    report_rig(&a->model, path);
    a->rig = a->model.rig;
    a->have_rig = true;
    r = sk_skeleton_copy(&a->model.skeleton, &a->skeleton);
    if (r != EM_OK) {
        av_avatar_fini(&a->model);
        return em_fail(err, r, "%s: out of memory", path);
    }
    char humanoid[APP_PATH_MAX];
    struct sk_skeleton limits = {0};
    if (u_path_find_data(DEFAULT_HUMANOID, humanoid, sizeof humanoid) &&
        sk_skeleton_load_json(humanoid, &limits, NULL) == EM_OK)
        sk_skeleton_copy_limits(&limits, &a->skeleton);
    sk_skeleton_fini(&limits);
    if (a->model.index_count == 0) {
        /* Nothing to draw: its skeleton drives the body, shown as the capsule figure. */
        U_LOG_W("%s: a skeleton without a mesh: it will be drawn as capsules", path);
        av_avatar_fini(&a->model);
        a->meshless = true;
        return EM_OK;
    }
    a->have_model = true;
    U_LOG_I("avatar %s: %s, %d joints, %u triangles", path, a->kind, a->skeleton.joint_count,
            a->model.index_count / 3u);
    return EM_OK;
}

/* APP_DEFAULT_HEIGHT_M; `after_estimate`: height_source already says why. */
static void
use_default_height(struct app_avatar *a, bool after_estimate)
{
    a->fit_height_m = (float)APP_DEFAULT_HEIGHT_M;
    if (!after_estimate)
        snprintf(a->height_source, sizeof a->height_source, "default %.2f m (--height M to set it)",
                 APP_DEFAULT_HEIGHT_M);
}

/* The default humanoid's height from the whole stream (in_height_estimate); false, with
 * the reason in height_source, when the stream does not show a standing player. */
static bool
estimate_height(struct app_avatar *a, const char *stream)
{
    float height = 0.0f, skull = 0.0f;
    struct em_error err = {{0}};
    /* Not a readable regular file (a device would never end): whoever reads the stream
     * reports that. */
    if (app_check_readable("stream", stream, &err) != EM_OK) {
        use_default_height(a, false);
        return false;
    }
    if (in_height_estimate_file(stream, a->settings.offsets.head_position_m,
                                a->settings.floor_height_m, &height, &skull, &err) != EM_OK) {
        snprintf(a->height_source, sizeof a->height_source,
                 "default %.2f m (no estimate: %s; --height M to set it)", APP_DEFAULT_HEIGHT_M,
                 err.message);
        return false;
    }
    a->fit_height_m = height;
    a->height_estimated = true;
    snprintf(a->height_source, sizeof a->height_source,
             "estimated from %s: the head held still %.2f m above the floor gives %.2f m "
             "(--height M to set it)",
             stream, (double)skull, (double)height);
    return true;
}

enum em_result
app_avatar_load(const struct app_avatar_desc *desc, struct app_avatar *out_avatar,
                struct em_error *err)
{
    struct app_avatar *a = out_avatar;
    memset(a, 0, sizeof *a);
    enum em_result r = EM_OK;
    bool is_default = !desc->bvh_path && !desc->skeleton_path;
    struct sk_bone_map *bone_map = NULL;
    if (desc->bone_map_path) {
        /* A settings file the player wrote: a bad one stops the program, as --config's. */
        bone_map = malloc(sizeof *bone_map);
        if (!bone_map)
            return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "--bone-map: out of memory");
        r = app_check_readable("--bone-map", desc->bone_map_path, err);
        if (r == EM_OK && (r = sk_bone_map_load(desc->bone_map_path, bone_map, err)) != EM_OK)
            app_error_prefix(err, "--bone-map");
        if (r != EM_OK) {
            free(bone_map);
            return r;
        }
    }
    if (desc->model_path) {
        /* A file the user names that cannot be opened is a mistake in the command line,
         * not a bad avatar: stop (exit 2) rather than show the default one. */
        if (app_check_readable("--avatar", desc->model_path, err) != EM_OK)
            return EM_ERROR_IO;
        struct em_error model_err = {{0}};
        r = load_model(a, desc->model_path, bone_map, &model_err);
        if (r != EM_OK) {
            /* A bad avatar file is not worth stopping for: say why and show the default. */
            snprintf(a->model_error, sizeof a->model_error, "%s", model_err.message);
            U_LOG_W("%s; showing the default avatar instead", model_err.message);
            sk_skeleton_fini(&a->skeleton);
            a->option = NULL;
        } else {
            is_default = false;
        }
    }
    free(bone_map);
    if (desc->bvh_path)
        r = load_bvh(a, desc->bvh_path, desc->unit_scale, err);
    else if (desc->skeleton_path)
        r = load_skeleton_file(a, desc->skeleton_path, err);
    else if (is_default && (r = load_default(a, err)) == EM_OK && desc->default_mesh)
        load_default_model(a);
    if (r == EM_OK)
        r = load_settings(a, desc->config_path, err);
    if (r != EM_OK) {
        sk_skeleton_fini(&a->skeleton);
        av_avatar_fini(&a->model);
        a->have_model = false;
        return r;
    }
    a->own_height_m = sk_humanoid_height(&a->skeleton);
    a->own_arm_span_m = sk_humanoid_arm_span(&a->skeleton);
    a->fit_height_m = (float)desc->height_m;
    if (a->fit_height_m > 0.0f)
        snprintf(a->height_source, sizeof a->height_source, "--height");
    else if (!is_default)
        snprintf(a->height_source, sizeof a->height_source, "the avatar's own");
    else if (!desc->height_stream || !estimate_height(a, desc->height_stream))
        use_default_height(a, desc->height_stream != NULL);
    a->fit_arm_span_m = (float)desc->arm_span_m;
    return EM_OK;
}

float
app_avatar_height_m(const struct app_avatar *avatar)
{
    return avatar->fit_height_m > 0.0f ? avatar->fit_height_m : avatar->own_height_m;
}

void
app_avatar_fini(struct app_avatar *avatar)
{
    sk_skeleton_fini(&avatar->skeleton);
    av_skin_binding_fini(&avatar->binding);
    av_avatar_fini(&avatar->model);
    avatar->have_model = false;
    pr_model_fini(&avatar->prior);
    avatar->has_prior = false;
}

void
app_avatar_scene(struct app_avatar *avatar, const struct body *body, struct render_scene *scene)
{
    scene->avatar = NULL;
    scene->avatar_binding = NULL;
    for (int h = 0; h < HD_HAND_COUNT; ++h)
        scene->hand_pose[h] = avatar->has_fingers[h] ? &avatar->fingers[h] : NULL;
    if (!avatar->have_model)
        return;
    const struct sk_skeleton *fitted = body_skeleton(body);
    const float h = sk_humanoid_height(fitted);
    if (!avatar->binding.body_joint || h != avatar->bound_height_m) {
        av_skin_binding_fini(&avatar->binding);
        struct em_error err = {{0}};
        if (av_skin_bind(&avatar->model, fitted, &avatar->binding, &err) != EM_OK) {
            U_LOG_W("%s; showing the capsule figure", err.message);
            av_avatar_fini(&avatar->model);
            avatar->have_model = false;
            return;
        }
        avatar->bound_height_m = h;
    }
    scene->avatar = &avatar->model;
    scene->avatar_binding = &avatar->binding;
}

void
app_avatar_set_fingers(struct app_avatar *avatar,
                       const struct hd_pose *const fingers[HD_HAND_COUNT])
{
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        const struct hd_pose *p = fingers ? fingers[h] : NULL;
        avatar->has_fingers[h] = p != NULL;
        if (p)
            avatar->fingers[h] = *p;
        if (avatar->have_model)
            av_set_hand_pose(&avatar->model, (enum hd_hand)h, p);
    }
}

/* The body-pose prior for --body prior (the default). A --prior file that cannot be
 * opened is an error (the user named it); a model that cannot be found or is refused
 * leaves the procedural estimate, with a warning naming the file and why. */
static enum em_result
load_prior(const struct app_avatar_desc *desc, struct app_avatar *a, struct em_error *err)
{
    a->prior_path[0] = '\0';
    if (desc->body_mode && strcmp(desc->body_mode, "procedural") == 0)
        return EM_OK;
    char found[APP_PATH_MAX];
    const char *path = desc->prior_path;
    if (path && app_check_readable("--prior", path, err) != EM_OK)
        return EM_ERROR_IO;
    if (!path) {
        if (!u_path_find_data(PR_DEFAULT_MODEL, found, sizeof found)) {
            U_LOG_W("%s not found; the body uses the procedural estimate", PR_DEFAULT_MODEL);
            return EM_OK;
        }
        path = found;
    }
    struct em_error model_err = {{0}};
    if (pr_model_load(path, &a->prior, &model_err) != EM_OK) {
        U_LOG_W("%s; the body uses the procedural estimate", model_err.message);
        return EM_OK;
    }
    a->has_prior = true;
    app_path_tidy(path, a->prior_path, sizeof a->prior_path);
    U_LOG_D("body: the learned prior %s (%s)", a->prior_path, a->prior.note);
    return EM_OK;
}

void
app_avatar_body_desc(const struct app_avatar *avatar, struct body_desc *out_desc)
{
    *out_desc = avatar->settings;
    out_desc->skeleton = &avatar->skeleton;
    out_desc->height_m = avatar->fit_height_m;
    out_desc->arm_span_m = avatar->fit_arm_span_m;
    out_desc->prior = avatar->has_prior ? &avatar->prior : NULL;
}

enum em_result
app_avatar_create_body(const struct app_avatar_desc *desc, struct app_avatar *out_avatar,
                       struct body **out_body, struct em_error *err)
{
    *out_body = NULL;
    enum em_result r = app_avatar_load(desc, out_avatar, err);
    if (r != EM_OK)
        return r;
    r = load_prior(desc, out_avatar, err);
    if (r != EM_OK) {
        app_avatar_fini(out_avatar);
        return r;
    }
    struct body_desc bd;
    app_avatar_body_desc(out_avatar, &bd);
    r = body_create(&bd, out_body, err);
    if (r != EM_OK) {
        char what[APP_PATH_MAX + 64];
        snprintf(what, sizeof what, "avatar %s", out_avatar->path);
        app_error_prefix(err, what);
        app_avatar_fini(out_avatar);
    }
    return r;
}

int
app_avatar_print_rig(FILE *out, const struct app_avatar *avatar)
{
    if (!avatar->have_rig) {
        U_LOG_E("--print-rig: no rig to print: %s",
                avatar->model_error[0] ? avatar->model_error : "no --avatar FILE");
        return APP_EXIT_USAGE;
    }
    char text[SK_BONE_COUNT * (SK_BONE_MAP_NODE_MAX * 2 + 32) + 8];
    sk_bone_map_format(&avatar->rig, text, sizeof text);
    fputs(text, out);
    return APP_EXIT_OK;
}
