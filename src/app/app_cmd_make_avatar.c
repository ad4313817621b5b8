/*
 * embody make-avatar (app_commands.h): writes the avatar embody makes itself, a small
 * skinned humanoid (av_make_glb), from an embody skeleton file. The shipped default avatar
 * config/avatar/embody.vrm is made by:
 *
 *   embody make-avatar --skeleton config/humanoid.json -o config/avatar/embody.vrm
 */
#include <stdio.h>
#include <string.h>

#include "app/app_args.h"
#include "app/app_commands.h"
#include "app/app_options.h"
#include "avatar/avatar.h"
#include "util/u_path.h"

#define HELP_HINT "embody make-avatar --help"

enum { OPT_OUTPUT = 1, OPT_SKELETON, OPT_RIG, OPT_DETAIL, OPT_HEIGHT, OPT_BONE_AXES, OPT_HELP };

/* --detail's range and default (av_make_desc: 0 means MAKE_DETAIL_DEFAULT). */
#define MAKE_DETAIL_MIN 6
#define MAKE_DETAIL_MAX 256
#define MAKE_DETAIL_DEFAULT 12

static const struct app_arg_spec k_specs[] = {
    {OPT_OUTPUT, "output", 'o', APP_ARG_VALUE}, {OPT_SKELETON, "skeleton", 0, APP_ARG_VALUE},
    {OPT_RIG, "rig", 0, APP_ARG_VALUE},         {OPT_DETAIL, "detail", 0, APP_ARG_VALUE},
    {OPT_HEIGHT, "height", 0, APP_ARG_VALUE},   {OPT_BONE_AXES, "bone-axes", 0, APP_ARG_FLAG},
    {OPT_HELP, "help", 'h', APP_ARG_FLAG},
};
#define SPEC_COUNT ((int)(sizeof k_specs / sizeof k_specs[0]))

static void
print_help(void)
{
    printf("usage: embody make-avatar -o OUT.vrm [--skeleton FILE.json] [--rig R]\n"
          "                          [--detail N] [--height M]\n"
          "\n"
          "Writes a small skinned humanoid (glTF 2.0 binary): every body part a capsule\n"
          "weighted to its bone, the mirror view's colours (left orange, right blue),\n"
          "eyes as a rigid mesh under the head. No third-party model is involved.\n"
          "\n"
          "  -o, --output OUT       where to write (.vrm or .glb: binary glTF)\n"
          "  --skeleton FILE.json   the skeleton (default config/humanoid.json)\n"
          "  --rig R                vrm1 (default), vrm0 (facing -Z, as VRM 0.x),\n"
          "                         mixamo or plain (glTF without VRM, named bones)\n"
          "  --detail N             sides of each limb, %d to %d (default %d; more sides,\n"
          "                         more triangles: the command prints how many it made)\n"
          "  --height M             fit the skeleton to this height first\n"
          "  --bone-axes            each bone node's +Y along its bone (as Blender\n"
          "                         exports rigs) instead of world-aligned frames\n"
          "  -h, --help             this help\n",
          MAKE_DETAIL_MIN, MAKE_DETAIL_MAX, MAKE_DETAIL_DEFAULT);
}

struct make_args {
    const char *output;
    const char *skeleton;
    enum av_make_rig rig;
    long detail;
    double height_m;
    bool bone_axes;
    bool help;
};

static enum em_result
apply(void *context, int id, const char *name, const char *value, struct em_error *err)
{
    struct make_args *a = context;
    switch (id) {
    case 0:
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "unexpected argument \"%s\" (see %s)", value,
                       HELP_HINT);
    case OPT_OUTPUT: a->output = value; return EM_OK;
    case OPT_SKELETON: a->skeleton = value; return EM_OK;
    case OPT_RIG: {
        static const char *rigs[] = {"vrm1", "vrm0", "mixamo", "plain"};
        for (int i = 0; i < 4; ++i)
            if (strcmp(value, rigs[i]) == 0) {
                a->rig = (enum av_make_rig)i;
                return EM_OK;
            }
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: expected vrm1, vrm0, mixamo or plain, got \"%s\"", name, value);
    }
    case OPT_DETAIL:
        return app_parse_count(name, value, MAKE_DETAIL_MIN, MAKE_DETAIL_MAX, "sides", &a->detail,
                               err);
    case OPT_HEIGHT:
        return app_parse_metres(name, value, APP_HEIGHT_MIN_M, APP_HEIGHT_MAX_M,
                                "a standing height", &a->height_m, err);
    case OPT_BONE_AXES: a->bone_axes = true; return EM_OK;
    default: a->help = true; return EM_OK;
    }
}

int
app_cmd_make_avatar(int argc, char **argv)
{
    struct make_args a = {.skeleton = NULL};
    struct em_error err = {{0}};
    if (app_args_parse(argc, argv, 1, k_specs, SPEC_COUNT, HELP_HINT, apply, &a, &err) != EM_OK) {
        fprintf(stderr, "embody make-avatar: error: %s\n", err.message);
        return APP_EXIT_USAGE;
    }
    if (a.help) {
        print_help();
        return APP_EXIT_OK;
    }
    if (!a.output) {
        fprintf(stderr, "embody make-avatar: error: -o OUT.vrm is required (see %s)\n", HELP_HINT);
        return APP_EXIT_USAGE;
    }
    /* What is written is binary glTF: a .gltf name would promise JSON. */
    if (!app_has_suffix(a.output, ".vrm") && !app_has_suffix(a.output, ".glb")) {
        fprintf(stderr,
                "embody make-avatar: error: -o: expected a .vrm or .glb file name (the avatar is "
                "binary glTF), got \"%s\"\n",
                a.output);
        return APP_EXIT_USAGE;
    }
    char found[4096] = "config/humanoid.json";
    if (!a.skeleton && !u_path_find_data("config/humanoid.json", found, sizeof found))
        snprintf(found, sizeof found, "config/humanoid.json");
    const char *skeleton_path = a.skeleton ? a.skeleton : found;
    struct sk_skeleton sk = {0};
    enum em_result r = app_check_readable("--skeleton", skeleton_path, &err);
    if (r == EM_OK)
        r = sk_skeleton_load_json(skeleton_path, &sk, &err);
    if (r == EM_OK && a.height_m > 0.0)
        r = sk_humanoid_fit(&sk, (float)a.height_m, 0.0f, &err);
    if (r != EM_OK) {
        fprintf(stderr, "embody make-avatar: error: %s\n", err.message);
        sk_skeleton_fini(&sk);
        return APP_EXIT_USAGE;
    }
    const int detail = a.detail > 0 ? (int)a.detail : MAKE_DETAIL_DEFAULT;
    const struct av_make_desc desc = {
        .skeleton = &sk, .rig = a.rig, .detail = detail, .bone_axes = a.bone_axes};
    r = av_make_file(&desc, a.output, &err);
    sk_skeleton_fini(&sk);
    if (r != EM_OK) {
        fprintf(stderr, "embody make-avatar: error: %s\n", err.message);
        return r == EM_ERROR_IO ? APP_EXIT_FAILURE : APP_EXIT_USAGE;
    }
    /* Read back what was written: the figures are the file's, and it loads. */
    struct av_avatar made;
    if (av_avatar_load(a.output, NULL, &made, &err) != EM_OK) {
        fprintf(stderr, "embody make-avatar: error: %s does not read back: %s\n", a.output,
                err.message);
        return APP_EXIT_FAILURE;
    }
    printf("embody make-avatar: %s: detail %d, %u triangles, %d vertices, %.2f m tall\n", a.output,
           detail, made.index_count / 3u, made.vertex_count, (double)made.height_m);
    av_avatar_fini(&made);
    return APP_EXIT_OK;
}
