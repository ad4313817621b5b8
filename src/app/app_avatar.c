/* Reading the avatar's skeleton and building its body (app_avatar.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app_args.h"
#include "app/app_avatar.h"
#include "app/app_options.h"
#include "embody/stream.h"
#include "util/u_log.h"
#include "util/u_path.h"

#define DEFAULT_HUMANOID "config/humanoid.json"

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
    if (r != EM_OK && r != EM_ERROR_IO)
        app_error_prefix(err, a->option);
    return r;
}

/* The joint names of a BVH, for guessing their convention. */
static enum sk_name_map
guess_names(const struct st_bvh *bvh)
{
    const char **names = calloc((size_t)bvh->joint_count, sizeof *names);
    if (!names)
        return SK_NAMES_CMU;
    for (int i = 0; i < bvh->joint_count; ++i)
        names[i] = bvh->joints[i].name;
    const enum sk_name_map map = sk_name_map_guess(names, bvh->joint_count);
    free(names);
    return map;
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
        r = st_bvh_to_humanoid(&bvh, guess_names(&bvh), a->unit_scale, path, &a->skeleton, err);
        st_bvh_fini(&bvh);
    }
    if (r != EM_OK)
        app_error_prefix(err, a->option);
    return r;
}

enum em_result
app_avatar_load(const struct app_avatar_desc *desc, struct app_avatar *out_avatar,
                struct em_error *err)
{
    struct app_avatar *a = out_avatar;
    memset(a, 0, sizeof *a);
    enum em_result r;
    if (desc->bvh_path)
        r = load_bvh(a, desc->bvh_path, desc->unit_scale, err);
    else if (desc->skeleton_path)
        r = load_skeleton_file(a, desc->skeleton_path, err);
    else
        r = load_default(a, err);
    if (r != EM_OK) {
        sk_skeleton_fini(&a->skeleton);
        return r;
    }
    a->own_height_m = sk_humanoid_height(&a->skeleton);
    a->own_arm_span_m = sk_humanoid_arm_span(&a->skeleton);
    const bool is_default = !desc->bvh_path && !desc->skeleton_path;
    a->fit_height_m = (float)desc->height_m;
    if (a->fit_height_m <= 0.0f && is_default)
        a->fit_height_m = (float)APP_DEFAULT_HEIGHT_M;
    a->fit_arm_span_m = (float)desc->arm_span_m;
    return EM_OK;
}

void
app_avatar_fini(struct app_avatar *avatar)
{
    sk_skeleton_fini(&avatar->skeleton);
    pr_model_fini(&avatar->prior);
    avatar->has_prior = false;
}

/* The body-pose prior for --body prior (the default): a model that cannot be found or is
 * refused leaves the procedural estimate, with a warning naming the file and why. */
static void
load_prior(const struct app_avatar_desc *desc, struct app_avatar *a)
{
    if (desc->body_mode && strcmp(desc->body_mode, "procedural") == 0)
        return;
    char found[APP_PATH_MAX];
    const char *path = desc->prior_path;
    if (!path) {
        if (!u_path_find_data(PR_DEFAULT_MODEL, found, sizeof found)) {
            U_LOG_W("%s not found; the body uses the procedural estimate", PR_DEFAULT_MODEL);
            return;
        }
        path = found;
    }
    struct em_error err = {{0}};
    if (pr_model_load(path, &a->prior, &err) != EM_OK) {
        U_LOG_W("%s; the body uses the procedural estimate", err.message);
        return;
    }
    a->has_prior = true;
    U_LOG_D("body: the learned prior %s (%s)", path, a->prior.note);
}

void
app_avatar_body_desc(const struct app_avatar *avatar, struct body_desc *out_desc)
{
    memset(out_desc, 0, sizeof *out_desc);
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
    load_prior(desc, out_avatar);
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
