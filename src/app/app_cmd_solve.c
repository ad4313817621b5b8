/*
 * embody solve (app_commands.h): every row of a 3-point stream through the body, as fast
 * as possible, and the body's motion out as BVH (PROTOCOL section 3): one frame per row,
 * Frame Time the stream's period, VRM joint names, metres, the stream's world frame.
 *
 * Fingers: a stream with finger columns (PROTOCOL section 1b) gives each hand it has
 * fingers for fifteen finger joints under the hand (VRM 1.0's names, leftThumbMetacarpal
 * ... leftLittleDistal, and an End Site at each tip), placed by the hand model sized to
 * the body's hand (its middle knuckle at the hand's end) and rotated each frame by the
 * frame's finger angles (hd_pose_humanoid_locals); a frame without that hand's fingers
 * holds them relaxed (the hierarchy is fixed for the file). A stream without finger
 * columns writes the body alone, as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/app_args.h"
#include "app/app_avatar.h"
#include "app/app_commands.h"
#include "app/app_options.h"
#include "embody/body.h"
#include "embody/hand.h"
#include "embody/m_math.h"
#include "embody/stream.h"
#include "embody/prior.h"
#include "util/u_log.h"
#include "util/u_time.h"

#define HELP_HINT "embody solve --help"
#define PROGRESS_INTERVAL_NS 1000000000LL
#define SINGLE_FRAME_PERIOD_S (1.0 / 60.0)

enum {
    OPT_OUTPUT = 1,
    OPT_AVATAR,
    OPT_HEIGHT,
    OPT_ARM_SPAN,
    OPT_UNIT_SCALE,
    OPT_QUIET,
    OPT_VERBOSE,
    OPT_HELP,
    OPT_CONFIG,
    OPT_BODY,
    OPT_PRIOR,
};

static const struct app_arg_spec k_specs[] = {
    {OPT_OUTPUT, "output", 'o', APP_ARG_VALUE},
    {OPT_AVATAR, "avatar", 0, APP_ARG_VALUE},
    {OPT_HEIGHT, "height", 0, APP_ARG_VALUE},
    {OPT_ARM_SPAN, "arm-span", 0, APP_ARG_VALUE},
    {OPT_UNIT_SCALE, "unit-scale", 0, APP_ARG_VALUE},
    {OPT_QUIET, "quiet", 'q', APP_ARG_FLAG},
    {OPT_VERBOSE, "verbose", 'v', APP_ARG_FLAG},
    {OPT_HELP, "help", 'h', APP_ARG_FLAG},
    {OPT_CONFIG, "config", 0, APP_ARG_VALUE},
    {OPT_BODY, "body", 0, APP_ARG_VALUE},
    {OPT_PRIOR, "prior", 0, APP_ARG_VALUE},
};
#define SPEC_COUNT ((int)(sizeof k_specs / sizeof k_specs[0]))

/* Every default and range named here is the constant the code uses
 * (tests/app/test_app_help.c checks them). */
static void
print_help(void)
{
    printf("usage: embody solve STREAM.csv -o OUT.bvh [--avatar CLIP.bvh | --height M]\n"
          "\n"
          "Reconstructs the full body for every row of a 3-point stream and writes its\n"
          "motion as BVH: one frame per row, Frame Time = the stream's period, joints named\n"
          "with the VRM humanoid bone names, lengths in metres (PROTOCOL.md section 3).\n"
          "\n"
          "  -o, --output OUT.bvh   the BVH file to write\n"
          "  --avatar CLIP.bvh      known body: the avatar from a BVH skeleton (its\n"
          "                         HIERARCHY only, never its motion)\n"
          "  --height M             height only: the default humanoid fitted to M metres\n"
          "                         (%.1f to %.1f; without it and --avatar, the height is\n"
          "                         estimated from where the stream's head is held still)\n"
          "  --arm-span M           also fit the arm span (%.1f to %.1f m)\n"
          "  --unit-scale S         metres per unit of the --avatar file (default: guessed)\n"
          "  --config FILE.json     the body's settings (default: %s)\n"
          "  --body MODE            legs and pelvis from the learned prior (prior, the\n"
          "                         default, as the program) or the procedural estimate\n"
          "                         (procedural), to compare them\n"
          "  --prior MODEL          the prior's model file (default\n"
          "                         %s)\n"
          "  -q, --quiet            no progress and no summary\n"
          "  -v, --verbose          more messages (the model and settings files read)\n"
          "  -h, --help             this help\n",
          APP_HEIGHT_MIN_M, APP_HEIGHT_MAX_M, APP_ARM_SPAN_MIN_M, APP_ARM_SPAN_MAX_M,
          APP_DEFAULT_BODY_SETTINGS, PR_DEFAULT_MODEL);
}

struct solve_args {
    const char *stream;
    const char *output;
    const char *avatar;
    const char *config;
    const char *body_mode; /* --body: "prior" or "procedural" (NULL: prior) */
    const char *prior_path;
    double height_m;
    double arm_span_m;
    double unit_scale;
    bool quiet;
    bool verbose;
    bool help;
};

static enum em_result
apply(void *context, int id, const char *name, const char *value, struct em_error *err)
{
    struct solve_args *a = context;
    switch (id) {
    case 0:
        if (a->stream)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "one stream at a time: \"%s\" and \"%s\" (see %s)", a->stream, value,
                           HELP_HINT);
        a->stream = value;
        return EM_OK;
    case OPT_OUTPUT: a->output = value; return EM_OK;
    case OPT_AVATAR: a->avatar = value; return EM_OK;
    case OPT_HEIGHT:
        return app_parse_metres(name, value, APP_HEIGHT_MIN_M, APP_HEIGHT_MAX_M,
                                "a standing height", &a->height_m, err);
    case OPT_ARM_SPAN:
        return app_parse_metres(name, value, APP_ARM_SPAN_MIN_M, APP_ARM_SPAN_MAX_M,
                                "an arm span", &a->arm_span_m, err);
    case OPT_UNIT_SCALE:
        return app_parse_number(name, value, APP_UNIT_SCALE_MIN, APP_UNIT_SCALE_MAX,
                                "metres per BVH unit", &a->unit_scale, err);
    case OPT_QUIET: a->quiet = true; return EM_OK;
    case OPT_VERBOSE: a->verbose = true; return EM_OK;
    case OPT_CONFIG: a->config = value; return EM_OK;
    case OPT_BODY:
        if (strcmp(value, "procedural") != 0 && strcmp(value, "prior") != 0)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: expected procedural or prior, got \"%s\"", name, value);
        a->body_mode = value;
        return EM_OK;
    case OPT_PRIOR: a->prior_path = value; return EM_OK;
    default: a->help = true; return EM_OK;
    }
}

static enum em_result
check(const struct solve_args *a, struct em_error *err)
{
    if (!a->stream)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "expected a stream: STREAM.csv (see %s)",
                       HELP_HINT);
    if (!a->output)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "-o OUT.bvh: expected the BVH file to write (see %s)", HELP_HINT);
    if (!app_has_suffix(a->output, ".bvh"))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "-o: expected a .bvh file name, got \"%s\"",
                       a->output);
    if (a->avatar && a->height_m > 0.0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--avatar and --height: choose one (the known body has its own height)");
    if (a->avatar && !app_has_suffix(a->avatar, ".bvh"))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "--avatar: expected a BVH file (CLIP.bvh), got \"%s\"", a->avatar);
    if (a->unit_scale > 0.0 && !a->avatar)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--unit-scale: only with --avatar");
    return EM_OK;
}

static enum em_result
parse(int argc, char **argv, struct solve_args *a, struct em_error *err)
{
    memset(a, 0, sizeof *a);
    const enum em_result r =
        app_args_parse(argc, argv, 1, k_specs, SPEC_COUNT, HELP_HINT, apply, a, err);
    if (r != EM_OK)
        return r;
    return a->help ? EM_OK : check(a, err);
}

/* The stream's period: its mean frame interval (a one-row stream: 60 Hz). */
static double
stream_period_s(const struct st_stream *s)
{
    if (s->frame_count < 2)
        return SINGLE_FRAME_PERIOD_S;
    return (s->frames[s->frame_count - 1].time_s - s->frames[0].time_s) /
           (double)(s->frame_count - 1);
}

/* A progress line at most once a second, for long files; on a terminal it rewrites
 * itself. */
struct progress {
    bool enabled;
    bool tty;
    bool printed;
    int64_t next_ns;
};

static void
progress_show(struct progress *p, int done, int total)
{
    if (!p->enabled)
        return;
    const int64_t now = u_time_now_ns();
    if (now < p->next_ns)
        return;
    p->next_ns = now + PROGRESS_INTERVAL_NS;
    fprintf(stderr, "%sembody solve: %d / %d frames (%d%%)%s", p->tty ? "\r" : "", done, total,
            (int)(100.0 * done / total), p->tty ? "" : "\n");
    p->printed = true;
}

static void
progress_end(struct progress *p)
{
    if (p->enabled && p->tty && p->printed)
        fputc('\n', stderr);
}

/* The BVH's skeleton and pose: the body's, and the fingers of the hands the stream has
 * fingers for, after the body's joints (hd_joint order per hand, then the five tips). */
struct finger_rig {
    uint32_t hands;                           /* ST_FINGERS_BIT of each hand written */
    struct hd_model model[HD_HAND_COUNT];     /* sized to the body's hands */
    int joint[HD_HAND_COUNT][HD_JOINT_COUNT]; /* each finger joint in the skeleton */
    int *body_joint;                          /* the skeleton's joint of each body joint
                                                 (sk_skeleton_create orders depth first) */
    int body_joint_count;
    struct sk_pose pose; /* the whole skeleton's, each frame */
};

#define TIP_COUNT HD_FINGER_COUNT
#define RIG_NAME_MAX 40

/* The hand model for hand `h` of `sk`: the default hand scaled so its middle knuckle is
 * at the hand's end, as the default avatar's (src/avatar/av_make.c). */
static enum em_result
sized_hand(const struct sk_skeleton *sk, enum hd_hand h, struct hd_model *out, struct em_error *err)
{
    struct hd_model def;
    enum em_result r = hd_model_init(&(struct hd_model_desc){.hand = h}, &def, err);
    const int hand = sk->bone_joint[h == HD_RIGHT ? SK_RIGHT_HAND : SK_LEFT_HAND];
    const int end = sk->bone_joint[h == HD_RIGHT ? SK_RIGHT_HAND_END : SK_LEFT_HAND_END];
    float length = HD_DEFAULT_HAND_LENGTH_M;
    if (r == EM_OK && hand >= 0 && end >= 0)
        length *= m_vec3_distance(sk->rest_position_m[hand], sk->rest_position_m[end]) /
                  m_vec3_length(def.base_m[HD_MIDDLE]);
    length = m_clampf(length, HD_MIN_HAND_LENGTH_M, HD_MAX_HAND_LENGTH_M);
    if (r == EM_OK)
        r = hd_model_init(&(struct hd_model_desc){.hand = h, .hand_length_m = length}, out, err);
    return r;
}

/* `body_sk` with the fingers of the hands in `hands` into `out`; fills `rig`. */
static enum em_result
finger_skeleton(const struct sk_skeleton *body_sk, uint32_t hands, struct sk_skeleton *out,
                struct finger_rig *rig, struct em_error *err)
{
    enum { PER_HAND = HD_JOINT_COUNT + TIP_COUNT };
    const int count = body_sk->joint_count + HD_HAND_COUNT * PER_HAND;
    struct sk_joint_desc *d = calloc((size_t)count, sizeof *d);
    char(*names)[RIG_NAME_MAX] = calloc(HD_HAND_COUNT * PER_HAND, sizeof *names);
    enum em_result r = d && names ? EM_OK : em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    int n = 0;
    for (int j = 0; j < body_sk->joint_count && r == EM_OK; ++j, ++n) {
        d[n].name = body_sk->name[j];
        d[n].parent = body_sk->parent[j] >= 0 ? body_sk->name[body_sk->parent[j]] : NULL;
        m_vec3_copy(body_sk->offset_m[j], d[n].offset_m);
        d[n].limit = body_sk->limit[j];
    }
    rig->hands = 0;
    for (int h = 0; h < HD_HAND_COUNT && r == EM_OK; ++h) {
        const int hand = body_sk->bone_joint[h == HD_RIGHT ? SK_RIGHT_HAND : SK_LEFT_HAND];
        if (!(hands & ST_FINGERS_BIT(h)) || hand < 0)
            continue;
        if ((r = sized_hand(body_sk, (enum hd_hand)h, &rig->model[h], err)) != EM_OK)
            break;
        rig->hands |= ST_FINGERS_BIT(h);
        struct hd_pose rest;
        memset(&rest, 0, sizeof rest);
        float rot[HD_JOINT_COUNT][4], off[HD_JOINT_COUNT][3];
        hd_pose_humanoid_locals(&rig->model[h], &rest, rot, off);
        for (int j = 0; j < HD_JOINT_COUNT; ++j, ++n) {
            char *name = names[n - body_sk->joint_count];
            snprintf(name, RIG_NAME_MAX, "%s", hd_vrm_bone_name((enum hd_hand)h, j));
            d[n].name = name;
            d[n].parent = j % HD_FINGER_JOINTS == 0 ? body_sk->name[hand]
                                                    : hd_vrm_bone_name((enum hd_hand)h, j - 1);
            m_vec3_copy(off[j], d[n].offset_m);
        }
        for (int f = 0; f < TIP_COUNT; ++f, ++n) { /* End Sites: the distal bone's length */
            const int distal = f * HD_FINGER_JOINTS + 2;
            char *name = names[n - body_sk->joint_count];
            snprintf(name, RIG_NAME_MAX, "%sTip", hd_vrm_bone_name((enum hd_hand)h, distal));
            d[n].name = name;
            d[n].parent = hd_vrm_bone_name((enum hd_hand)h, distal);
            m_vec3_scale(off[distal], rig->model[h].bone_m[f][2] / rig->model[h].bone_m[f][1],
                         d[n].offset_m);
        }
    }
    if (r == EM_OK)
        r = sk_skeleton_create(d, n, "solve's BVH skeleton", out, err);
    /* sk_skeleton_create orders the joints depth first: find them again by name. */
    for (int h = 0; h < HD_HAND_COUNT && r == EM_OK; ++h)
        for (int j = 0; j < HD_JOINT_COUNT && (rig->hands & ST_FINGERS_BIT(h)); ++j)
            rig->joint[h][j] = sk_skeleton_find(out, hd_vrm_bone_name((enum hd_hand)h, j));
    if (r == EM_OK) {
        rig->body_joint_count = body_sk->joint_count;
        rig->body_joint = calloc((size_t)body_sk->joint_count, sizeof *rig->body_joint);
        if (!rig->body_joint)
            r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
        for (int j = 0; j < body_sk->joint_count && r == EM_OK; ++j)
            rig->body_joint[j] = sk_skeleton_find(out, body_sk->name[j]);
    }
    if (r == EM_OK && sk_pose_init(&rig->pose, out) != EM_OK)
        r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    if (r == EM_OK)
        sk_pose_set_rest(&rig->pose, out);
    free(d);
    free(names);
    return r;
}

/* The frame's whole pose: the body's joints as solved, each written hand's fingers from
 * the frame (relaxed where the frame has none for it). */
static const struct sk_pose *
frame_pose(struct finger_rig *rig, const struct sk_pose *body_pose,
           const struct st_fingers *fingers)
{
    if (!rig->hands)
        return body_pose;
    for (int j = 0; j < rig->body_joint_count; ++j)
        m_quat_copy(body_pose->local_rotation[j], rig->pose.local_rotation[rig->body_joint[j]]);
    m_vec3_copy(body_pose->position_m[0], rig->pose.position_m[0]); /* the root's, first */
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        if (!(rig->hands & ST_FINGERS_BIT(h)))
            continue;
        struct hd_pose pose;
        if (fingers && fingers->valid[h])
            st_fingers_get_pose(fingers, (enum hd_hand)h, &pose);
        else
            hd_pose_relaxed(&rig->model[h], &pose);
        float rot[HD_JOINT_COUNT][4], off[HD_JOINT_COUNT][3];
        hd_pose_humanoid_locals(&rig->model[h], &pose, rot, off);
        for (int j = 0; j < HD_JOINT_COUNT; ++j)
            m_quat_copy(rot[j], rig->pose.local_rotation[rig->joint[h][j]]);
    }
    return &rig->pose;
}

/* Solves every frame into the writer. */
static enum em_result
solve_all(const struct solve_args *a, const struct st_stream *stream, struct body *body,
          struct finger_rig *rig, struct st_bvh_writer *writer, double *out_update_s,
          struct em_error *err)
{
    struct progress progress = {
        .enabled = !a->quiet,
        .tty = isatty(STDERR_FILENO) != 0,
        .next_ns = u_time_now_ns() + PROGRESS_INTERVAL_NS,
    };
    int64_t update_ns = 0;
    for (int i = 0; i < stream->frame_count; ++i) {
        const int64_t t0 = u_time_now_ns();
        body_update(body, &stream->frames[i]);
        update_ns += u_time_now_ns() - t0;
        const struct st_fingers *fingers = stream->fingers ? &stream->fingers[i] : NULL;
        const enum em_result r =
            st_bvh_writer_write(writer, frame_pose(rig, body_pose(body), fingers), err);
        if (r != EM_OK)
            return r;
        progress_show(&progress, i + 1, stream->frame_count);
    }
    progress_end(&progress);
    *out_update_s = (double)update_ns * 1e-9;
    return EM_OK;
}

static int
fail(const char *message, int code)
{
    fprintf(stderr, "embody solve: error: %s\n", message);
    return code;
}

/* Solves every row of `stream` with `body` into the BVH at a->output (the body's skeleton,
 * with each hand's finger joints when the stream has finger columns); on failure what was
 * at -o stays as it was. The time spent in body_update, summed, into *out_update_s. */
static enum em_result
write_bvh(const struct solve_args *a, const struct st_stream *stream, struct body *body,
          double *out_update_s, struct em_error *err)
{
    /* The writer keeps the skeleton: a copy of the fitted one, which stays put. */
    struct sk_skeleton skeleton = {0};
    struct st_bvh_writer writer = {0};
    struct finger_rig rig;
    memset(&rig, 0, sizeof rig);
    enum em_result r =
        stream->fingers && stream->finger_mask
            ? finger_skeleton(body_skeleton(body), stream->finger_mask, &skeleton, &rig, err)
        : sk_skeleton_copy(body_skeleton(body), &skeleton) == EM_OK
            ? EM_OK
            : em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    if (r == EM_OK)
        r = st_bvh_writer_open(a->output, &skeleton, stream_period_s(stream), &writer, err);
    if (r == EM_OK)
        r = solve_all(a, stream, body, &rig, &writer, out_update_s, err);
    if (r == EM_OK)
        r = st_bvh_writer_close(&writer, err);
    else
        st_bvh_writer_abort(&writer); /* what was at -o stays as it was */
    sk_pose_fini(&rig.pose);
    free(rig.body_joint);
    sk_skeleton_fini(&skeleton);
    return r;
}

int
app_cmd_solve(int argc, char **argv)
{
    struct solve_args a;
    struct em_error err = {{0}};
    if (parse(argc, argv, &a, &err) != EM_OK)
        return fail(err.message, APP_EXIT_USAGE);
    if (a.help) {
        print_help();
        return APP_EXIT_OK;
    }
    u_log_set_level(a.verbose ? U_LOG_DEBUG : (a.quiet ? U_LOG_WARN : U_LOG_INFO));
    const struct app_input_file inputs[] = {
        {"the stream", a.stream}, {"the avatar", a.avatar}, {"the settings", a.config}};
    if (app_check_not_input("-o", a.output, inputs, 3, &err) != EM_OK)
        return fail(err.message, APP_EXIT_USAGE);
    struct st_stream stream = {0};
    if (app_check_readable("stream", a.stream, &err) != EM_OK ||
        st_stream_load(a.stream, &stream, &err) != EM_OK)
        return fail(err.message, APP_EXIT_USAGE);
    if (app_check_writable("-o", a.output, &err) != EM_OK) {
        st_stream_fini(&stream);
        return fail(err.message, APP_EXIT_USAGE);
    }

    const struct app_avatar_desc avatar_desc = {
        .bvh_path = a.avatar,
        .unit_scale = a.unit_scale,
        .height_m = a.height_m,
        .arm_span_m = a.arm_span_m,
        .config_path = a.config,
        .body_mode = a.body_mode,
        .prior_path = a.prior_path,
        .height_stream = a.avatar || a.height_m > 0.0 ? NULL : a.stream,
    };
    struct app_avatar avatar;
    struct body *body = NULL;
    if (app_avatar_create_body(&avatar_desc, &avatar, &body, &err) != EM_OK) {
        st_stream_fini(&stream);
        return fail(err.message, APP_EXIT_USAGE);
    }
    if (!a.quiet && !a.avatar && a.height_m <= 0.0)
        fprintf(stderr, "embody solve: height %.2f m: %s\n", (double)app_avatar_height_m(&avatar),
                avatar.height_source);
    double update_s = 0.0;
    const enum em_result r = write_bvh(&a, &stream, body, &update_s, &err);
    const int frames = stream.frame_count;
    char body_name[APP_PATH_MAX + 32];
    if (avatar.has_prior)
        snprintf(body_name, sizeof body_name, "learned prior %s", avatar.prior_path);
    else
        snprintf(body_name, sizeof body_name, "procedural");
    body_destroy(&body);
    app_avatar_fini(&avatar);
    st_stream_fini(&stream);
    if (r != EM_OK)
        return fail(err.message, APP_EXIT_FAILURE);
    if (!a.quiet)
        fprintf(stderr,
                "embody solve: %d frames from %s to %s (avatar: %s, %s; body: %s); body "
                "update %.1f µs per frame\n",
                frames, a.stream, a.output, avatar.path[0] ? avatar.path : "-",
                a.avatar ? "known body" : "height only", body_name,
                1e6 * update_s / (double)frames);
    return APP_EXIT_OK;
}
