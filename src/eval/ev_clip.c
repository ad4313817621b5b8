/*
 * One clip of the evaluation: the BVH, the 3-point stream made from it (PROTOCOL
 * section 2), the true positions of the scored joints at the stream's rows, the clip's
 * own humanoid (the known body), and its reconstruction by a method.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "util/u_time.h"

/* Fewer rows than this leave jitter (a third difference) undefined. */
#define MIN_ROWS 4

const char *
ev_method_name(enum ev_method method)
{
    static const char *const names[EV_METHOD_COUNT] = {"known body", "height only",
                                                       "do-nothing"};
    return method >= 0 && method < EV_METHOD_COUNT ? names[method] : "none";
}

const char *
ev_method_key(enum ev_method method)
{
    static const char *const keys[EV_METHOD_COUNT] = {"known_body", "height_only",
                                                      "do_nothing"};
    return method >= 0 && method < EV_METHOD_COUNT ? keys[method] : "none";
}

/* The BVH joint of each scored joint; fails naming every one missing. */
static enum em_result
find_scored_joints(const struct st_bvh *bvh, const char *path, int *out_joint,
                   struct em_error *err)
{
    char missing[400] = "";
    for (int j = 0; j < EV_JOINT_COUNT; ++j) {
        out_joint[j] = st_bvh_find(bvh, ev_joint_cmu_name((enum ev_joint)j));
        if (out_joint[j] < 0) {
            const size_t used = strlen(missing);
            snprintf(missing + used, sizeof missing - used, "%s\"%s\"", used ? ", " : "",
                     ev_joint_cmu_name((enum ev_joint)j));
        }
    }
    if (missing[0])
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: no joint named %s; the scored joints are CMU's Hips, Neck, Head, "
                       "arms (LeftArm, LeftForeArm, LeftHand, ...) and legs (LeftUpLeg, "
                       "LeftLeg, LeftFoot, LeftToeBase, ...)",
                       path, missing);
    return EM_OK;
}

/* True positions of the scored joints at rows 0.. (clip frames 0, step, 2 step, ...). */
static enum em_result
fill_truth(const struct st_bvh *bvh, const int *joint, struct ev_clip *clip,
           struct em_error *err)
{
    const size_t n = (size_t)bvh->joint_count;
    double(*position)[3] = malloc(n * sizeof *position);
    double(*rotation)[4] = malloc(n * sizeof *rotation);
    enum em_result r = EM_OK;
    if (!position || !rotation) {
        r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", clip->path);
        goto done;
    }
    for (int row = 0; row < clip->truth.frame_count; ++row) {
        st_bvh_frame_pose(bvh, row * clip->step, position, rotation);
        for (int j = 0; j < EV_JOINT_COUNT; ++j)
            for (int k = 0; k < 3; ++k)
                clip->truth.position_m[row][j][k] = position[joint[j]][k] * clip->unit_scale;
    }
done:
    free(position);
    free(rotation);
    return r;
}

/* Everything but the BVH's own parsing, which the caller has done. */
static enum em_result
prepare(const struct st_bvh *bvh, int frame_limit, struct ev_clip *clip, struct em_error *err)
{
    int joint[EV_JOINT_COUNT];
    enum em_result r = find_scored_joints(bvh, clip->path, joint, err);
    if (r != EM_OK)
        return r;
    clip->source_frame_count = bvh->frame_count;
    clip->unit_scale = st_bvh_guess_unit_scale(bvh);
    /* With all eight body trackers when the skeleton has their joints (ev_trackers.c
     * keeps the ones a run asks for), else the 3-point stream. */
    r = st_mocap_to_stream_trackers(bvh, clip->unit_scale, EM_TRACKER_ALL, clip->path,
                                    &clip->stream, err);
    if (r != EM_OK)
        r = st_mocap_to_stream(bvh, clip->unit_scale, clip->path, &clip->stream, err);
    if (r != EM_OK)
        return r;
    /* The stream keeps every step-th frame from frame 0 (stream.h); row k is frame k step. */
    long step = lround(1.0 / (bvh->frame_time_s * 60.0));
    clip->step = step < 1 ? 1 : (int)step;
    const int expected_rows = (bvh->frame_count + clip->step - 1) / clip->step;
    if (clip->stream.frame_count != expected_rows)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: the stream has %d rows, expected %d (every %d-th of %d frames)",
                       clip->path, clip->stream.frame_count, expected_rows, clip->step,
                       bvh->frame_count);
    if (frame_limit > 0 && clip->stream.frame_count > frame_limit)
        clip->stream.frame_count = frame_limit;
    if (clip->stream.frame_count < MIN_ROWS)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: %d frames make %d rows at 60 Hz; the evaluation needs at least %d",
                       clip->path, bvh->frame_count, clip->stream.frame_count, MIN_ROWS);
    const double fps = 1.0 / ((double)clip->step * bvh->frame_time_s);
    if (ev_motion_init(&clip->truth, clip->stream.frame_count, fps) != EM_OK)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", clip->path);
    r = fill_truth(bvh, joint, clip, err);
    if (r != EM_OK)
        return r;
    r = st_bvh_to_humanoid(bvh, SK_NAMES_CMU, clip->unit_scale, clip->path, &clip->skeleton,
                           err);
    if (r != EM_OK)
        return r;
    clip->height_m = sk_humanoid_height(&clip->skeleton);
    ev_trackers_known_axes(bvh, clip);
    if (!(clip->height_m > 0.5f && clip->height_m < 2.8f))
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: the skeleton stands %.3f m tall (unit scale %g), expected a "
                       "person between 0.5 and 2.8 m",
                       clip->path, (double)clip->height_m, clip->unit_scale);
    return EM_OK;
}

enum em_result
ev_clip_load(const char *path, int frame_limit, struct ev_clip *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    if (strlen(path) >= sizeof out->path)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%.200s...: path too long", path);
    snprintf(out->path, sizeof out->path, "%s", path);
    struct st_bvh bvh;
    enum em_result r = st_bvh_load(path, &bvh, err);
    if (r != EM_OK) {
        memset(out, 0, sizeof *out);
        return r;
    }
    r = prepare(&bvh, frame_limit, out, err);
    st_bvh_fini(&bvh);
    if (r != EM_OK)
        ev_clip_fini(out);
    return r;
}

enum em_result
ev_clip_load_for(const char *path, const struct ev_options *options, struct ev_clip *out,
                 struct em_error *err)
{
    const enum em_result r = ev_clip_load(path, options->frame_limit, out, err);
    if (r == EM_OK)
        out->body_stages_off = options->stages_off;
    return r;
}

void
ev_clip_fini(struct ev_clip *clip)
{
    st_stream_fini(&clip->stream);
    ev_motion_fini(&clip->truth);
    sk_skeleton_fini(&clip->skeleton);
    memset(clip, 0, sizeof *clip);
}

enum em_result
ev_body_scored_positions(const struct body *body, double out_m[EV_JOINT_COUNT][3],
                         struct em_error *err)
{
    const struct sk_skeleton *sk = body_skeleton(body);
    const struct sk_pose *pose = body_pose(body);
    for (int j = 0; j < EV_JOINT_COUNT; ++j) {
        const enum sk_bone bone = ev_joint_bone((enum ev_joint)j);
        const int joint = sk_skeleton_bone_joint(sk, bone);
        if (joint < 0 || joint >= sk->joint_count)
            return em_fail(err, EM_ERROR_UNSUPPORTED,
                           "the avatar has no %s joint, which is scored", sk_bone_name(bone));
        const float *p = pose->position_m[joint];
        if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])))
            return em_fail(err, EM_ERROR_RUNTIME, "body_update gave a non-finite %s position",
                           sk_bone_name(bone));
        for (int k = 0; k < 3; ++k)
            out_m[j][k] = (double)p[k];
    }
    return EM_OK;
}

static enum em_result
copy_pose(const struct body *body, const struct ev_clip *clip, enum ev_method method,
          int row, struct ev_motion *out, struct em_error *err)
{
    struct em_error why = {{0}};
    const enum em_result r = ev_body_scored_positions(body, out->position_m[row], &why);
    if (r == EM_OK)
        return EM_OK;
    return em_fail(err, r, "%s: %s: row %d: %s", clip->path, ev_method_name(method), row,
                   why.message);
}

enum em_result
ev_clip_make_body(const struct ev_clip *clip, enum ev_method method,
                  const struct pr_model *prior, struct body **out_body, struct em_error *err)
{
    struct body_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.prior = prior;
    desc.stages_off = clip->body_stages_off;
    if (method == EV_KNOWN_BODY) {
        desc.skeleton = &clip->skeleton;
        ev_trackers_known_mounts(clip, desc.tracker_mount);
    } else
        desc.height_m = clip->height_m; /* the default proportions, fitted */
    struct em_error body_err = {{0}};
    if (body_create(&desc, out_body, &body_err) != EM_OK)
        return em_fail(err, EM_ERROR_RUNTIME, "%s: %s: cannot build the body: %s", clip->path,
                       ev_method_name(method), body_err.message);
    return EM_OK;
}

/* A second, timing-only pass of a fresh body over the same rows: each row's time becomes
 * the faster of the two passes' (from `first` in `timing`). The machine's own hiccups
 * (another process, an interrupt) land on different rows in each pass, the body's own
 * slow rows on the same ones, so the p99 is the body's and not the machine's. */
static enum em_result
time_second_pass(const struct ev_clip *clip, const struct st_stream *stream,
                 enum ev_method method, const struct pr_model *prior, int rows,
                 struct ev_timing *timing, long first, struct em_error *err)
{
    struct body *body = NULL;
    const enum em_result r = ev_clip_make_body(clip, method, prior, &body, err);
    if (r != EM_OK)
        return r;
    for (int row = 0; row < rows && first + row < timing->count; ++row) {
        const int64_t start_ns = u_time_now_ns();
        body_update(body, &stream->frames[row]);
        const double us = (double)(u_time_now_ns() - start_ns) * 1e-3;
        timing->us[first + row] = fmin(timing->us[first + row], us);
    }
    body_destroy(&body);
    return EM_OK;
}

static enum em_result
run_body(const struct ev_clip *clip, const struct st_stream *stream, enum ev_method method,
         const struct pr_model *prior, struct ev_motion *out, struct ev_timing *timing,
         struct ev_checks *checks, struct em_error *err)
{
    struct body *body = NULL;
    enum em_result r = ev_clip_make_body(clip, method, prior, &body, err);
    if (r != EM_OK)
        return r;
    const int rows = out->frame_count < stream->frame_count ? out->frame_count
                                                            : stream->frame_count;
    const long first = timing ? timing->count : 0;
    for (int row = 0; row < rows && r == EM_OK; ++row) {
        const int64_t start_ns = u_time_now_ns();
        body_update(body, &stream->frames[row]);
        const int64_t stop_ns = u_time_now_ns();
        if (timing && ev_timing_add(timing, (double)(stop_ns - start_ns) * 1e-3) != EM_OK)
            r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", clip->path);
        if (r == EM_OK)
            r = copy_pose(body, clip, method, row, out, err);
        if (r == EM_OK && checks) {
            ev_checks_add_frame(checks, body);
            ev_body_checks_add_frame(&checks->body, body, &stream->frames[row]);
        }
    }
    if (checks) {
        ev_checks_finish(checks, rows);
        ev_body_checks_finish(&checks->body);
    }
    body_destroy(&body);
    if (r == EM_OK && timing)
        r = time_second_pass(clip, stream, method, prior, rows, timing, first, err);
    return r;
}

enum em_result
ev_clip_reconstruct_stream(const struct ev_clip *clip, const struct st_stream *stream,
                           enum ev_method method, const struct pr_model *prior,
                           struct ev_motion *out, struct ev_timing *timing,
                           struct ev_checks *checks, struct em_error *err)
{
    if (ev_motion_init(out, clip->truth.frame_count, clip->truth.fps) != EM_OK)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", clip->path);
    switch (method) {
    case EV_KNOWN_BODY:
    case EV_HEIGHT_ONLY:
        return run_body(clip, stream, method, prior, out, timing, checks, err);
    case EV_DO_NOTHING: ev_do_nothing(&clip->truth, stream->frames, out); return EM_OK;
    case EV_METHOD_COUNT: break;
    }
    return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "unknown evaluation method %d", (int)method);
}

enum em_result
ev_clip_reconstruct(const struct ev_clip *clip, enum ev_method method, struct ev_motion *out,
                    struct ev_timing *timing, struct em_error *err)
{
    return ev_clip_reconstruct_prior(clip, method, NULL, out, timing, err);
}

enum em_result
ev_clip_reconstruct_prior(const struct ev_clip *clip, enum ev_method method,
                          const struct pr_model *prior, struct ev_motion *out,
                          struct ev_timing *timing, struct em_error *err)
{
    return ev_clip_reconstruct_stream(clip, &clip->stream, method, prior, out, timing, NULL,
                                      err);
}
