/*
 * layer_eval: the accuracy of what the layer serves, on motion-capture clips replayed
 * through the test runtime, next to embody eval's figures for the same streams.
 *
 * Per clip (ev_clip_load: its 3-point stream and the true joints): the stream is written
 * to a file the test runtime replays; an OpenXR application enables the layer through
 * the loader (full-body set, EMBODY_LAYER_HEIGHT_M = the clip's height: the default
 * proportions fitted to it, as eval's "height only") and locates the joints at every row;
 * the 17 scored joints (hips, neck, head, upper and lower arms, wrists, upper and lower
 * legs, ankles, balls of the feet) are scored with eval's MPJPE (PROTOCOL section 4).
 * Beside it, what `embody eval DIR --body prior --mode height` reports for the same clips
 * (run by this program, read from its JSON).
 *
 *   layer_eval [DIR]     (default ../shared/mocap beside the source tree)
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "eval/eval.h"
#include "embody/stream.h"
#include "layer_app.h"

/* The FB / META joint each scored joint is read from. */
static const int k_scored[EV_JOINT_COUNT] = {
    [EV_HIPS] = XR_BODY_JOINT_HIPS_FB,
    [EV_NECK] = XR_BODY_JOINT_NECK_FB,
    [EV_HEAD] = XR_BODY_JOINT_HEAD_FB,
    [EV_LEFT_UPPER_ARM] = XR_BODY_JOINT_LEFT_ARM_UPPER_FB,
    [EV_LEFT_LOWER_ARM] = XR_BODY_JOINT_LEFT_ARM_LOWER_FB,
    [EV_LEFT_HAND] = XR_BODY_JOINT_LEFT_HAND_WRIST_FB,
    [EV_RIGHT_UPPER_ARM] = XR_BODY_JOINT_RIGHT_ARM_UPPER_FB,
    [EV_RIGHT_LOWER_ARM] = XR_BODY_JOINT_RIGHT_ARM_LOWER_FB,
    [EV_RIGHT_HAND] = XR_BODY_JOINT_RIGHT_HAND_WRIST_FB,
    [EV_LEFT_UPPER_LEG] = XR_FULL_BODY_JOINT_LEFT_UPPER_LEG_META,
    [EV_LEFT_LOWER_LEG] = XR_FULL_BODY_JOINT_LEFT_LOWER_LEG_META,
    [EV_LEFT_FOOT] = XR_FULL_BODY_JOINT_LEFT_FOOT_ANKLE_META,
    [EV_LEFT_TOES] = XR_FULL_BODY_JOINT_LEFT_FOOT_BALL_META,
    [EV_RIGHT_UPPER_LEG] = XR_FULL_BODY_JOINT_RIGHT_UPPER_LEG_META,
    [EV_RIGHT_LOWER_LEG] = XR_FULL_BODY_JOINT_RIGHT_LOWER_LEG_META,
    [EV_RIGHT_FOOT] = XR_FULL_BODY_JOINT_RIGHT_FOOT_ANKLE_META,
    [EV_RIGHT_TOES] = XR_FULL_BODY_JOINT_RIGHT_FOOT_BALL_META,
};

static int
compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The layer's reconstruction of the clip's stream, through the loader and the runtime. */
static bool
through_layer(const struct ev_clip *clip, const char *stream_path, struct ev_motion *out)
{
    char script[] = "/tmp/embody-layer-eval-XXXXXX";
    const int fd = mkstemp(script);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return false;
    fprintf(f, "poses %s\n", stream_path);
    fclose(f);
    la_use_layer(script);
    char height[32];
    snprintf(height, sizeof height, "%.9g", (double)clip->height_m);
    setenv("EMBODY_LAYER_HEIGHT_M", height, 1);

    struct la_app app;
    la_create(&app, true, true);
    la_start_session(&app);
    la_pump(&app);
    const XrBodyTrackerCreateInfoFB create = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB,
                                              .bodyJointSet = XR_BODY_JOINT_SET_FULL_BODY_META};
    XrBodyTrackerFB tracker = XR_NULL_HANDLE;
    bool ok = XR_SUCCEEDED(app.create_body_tracker(app.session, &create, &tracker));
    XrBodyJointLocationFB joints[XR_FULL_BODY_JOINT_COUNT_META];
    for (int k = 0; ok && k < clip->stream.frame_count; ++k) {
        la_pump(&app);
        la_sync(&app);
        const XrBodyJointsLocateInfoFB info = {.type = XR_TYPE_BODY_JOINTS_LOCATE_INFO_FB,
                                               .baseSpace = app.stage,
                                               .time = la_time_of(clip->stream.frames[k].time_s)};
        XrBodyJointLocationsFB loc = {.type = XR_TYPE_BODY_JOINT_LOCATIONS_FB,
                                      .jointCount = XR_FULL_BODY_JOINT_COUNT_META,
                                      .jointLocations = joints};
        ok = XR_SUCCEEDED(app.locate_body_joints(tracker, &info, &loc));
        for (int j = 0; ok && j < EV_JOINT_COUNT; ++j) {
            const XrVector3f *p = &joints[k_scored[j]].pose.position;
            out->position_m[k][j][0] = (double)p->x;
            out->position_m[k][j][1] = (double)p->y;
            out->position_m[k][j][2] = (double)p->z;
        }
    }
    la_destroy(&app);
    remove(script);
    return ok;
}

/* The stream as the test runtime reads it: t, then per device position, quaternion and a
 * valid flag, every float printed so that it reads back exact. */
static bool
write_stream(const char *path, const struct st_stream *s)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fputs("t", f);
    static const char *const k_dev[3] = {"head", "left", "right"};
    for (int d = 0; d < 3; ++d)
        fprintf(f, ",%s_px,%s_py,%s_pz,%s_qx,%s_qy,%s_qz,%s_qw,%s_valid", k_dev[d], k_dev[d],
                k_dev[d], k_dev[d], k_dev[d], k_dev[d], k_dev[d], k_dev[d]);
    fputc('\n', f);
    for (int k = 0; k < s->frame_count; ++k) {
        const struct em_tracking_frame *fr = &s->frames[k];
        fprintf(f, "%.17g", fr->time_s);
        for (int d = 0; d < 3; ++d) {
            const struct em_pose *p = &fr->device[d].pose;
            fprintf(f, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d", (double)p->position_m[0],
                    (double)p->position_m[1], (double)p->position_m[2], (double)p->orientation[0],
                    (double)p->orientation[1], (double)p->orientation[2], (double)p->orientation[3],
                    em_device_pose_usable(&fr->device[d]) ? 1 : 0);
        }
        fputc('\n', f);
    }
    return fclose(f) == 0;
}

/* embody eval's height-only figures (the learned prior) for the clips of `dir`, as JSON. */
static cJSON *
run_embody_eval(const char *dir)
{
    char json[64], command[8192];
    snprintf(json, sizeof json, "/tmp/embody-layer-eval-%d.json", (int)getpid());
    snprintf(command, sizeof command,
             "'%s' eval '%s' --body prior --mode height --json '%s' -q >/dev/null", EMBODY_PROGRAM,
             dir, json);
    if (system(command) != 0)
        return NULL;
    FILE *f = fopen(json, "rb");
    char *text = NULL;
    long size = 0;
    if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = calloc((size_t)size + 1, 1)) != NULL &&
        fread(text, 1, (size_t)size, f) != (size_t)size) {
        free(text);
        text = NULL;
    }
    if (f)
        fclose(f);
    remove(json);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    return root;
}

/* The figure `key` (mpjpe_cm, lower_cm) of the height-only run of `file`, or NaN. */
static double
eval_figure(const cJSON *root, const char *file, const char *key)
{
    const cJSON *clip = NULL;
    cJSON_ArrayForEach(clip, cJSON_GetObjectItemCaseSensitive(root, "clips"))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(clip, "file");
        if (!cJSON_IsString(name) || strcmp(name->valuestring, file) != 0)
            continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(clip, "height_only"), key);
        return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
    }
    return (double)NAN;
}

int
main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : EMBODY_SOURCE_DIR "/../shared/mocap";
    setenv("EMBODY_DATA_DIR", EMBODY_SOURCE_DIR, 0);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "layer_eval: cannot open %s\n", dir);
        return 2;
    }
    char *names[256];
    int count = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && count < 256;) {
        const size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".bvh") == 0)
            names[count++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)count, sizeof names[0], compare_names);
    struct em_error err = {{0}};
    cJSON *eval_json = run_embody_eval(dir);
    if (!eval_json) {
        fprintf(stderr, "layer_eval: embody eval %s failed\n", dir);
        return 1;
    }
    printf("The layer's joints (84-joint set, through the loader and the test runtime) against\n"
           "the truth, beside embody eval's height-only figures for the same clips (MPJPE of\n"
           "the 17 scored joints, cm; PROTOCOL.md section 4)\n\n");
    printf("%-14s %7s %11s %11s %12s %12s\n", "clip", "frames", "layer all", "eval all",
           "layer lower", "eval lower");
    double sum_layer = 0.0, sum_eval = 0.0, sum_lower = 0.0, sum_eval_lower = 0.0;
    int done = 0, status = 0;
    char stream_path[64];
    for (int i = 0; i < count; ++i) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct ev_clip clip;
        struct ev_motion layer = {0};
        if (ev_clip_load(path, 0, &clip, &err) != EM_OK) {
            fprintf(stderr, "layer_eval: %s\n", err.message);
            status = 1;
            continue;
        }
        snprintf(stream_path, sizeof stream_path, "/tmp/embody-layer-eval-%d.csv", (int)getpid());
        bool ok = write_stream(stream_path, &clip.stream) &&
                  ev_motion_init(&layer, clip.truth.frame_count, clip.truth.fps) == EM_OK &&
                  through_layer(&clip, stream_path, &layer);
        remove(stream_path);
        if (ok) {
            struct ev_scores ours;
            ev_score(&layer, &clip.truth, &ours);
            const double eval_all = eval_figure(eval_json, names[i], "mpjpe_cm");
            const double eval_lower = eval_figure(eval_json, names[i], "lower_cm");
            printf("%-14.*s %7d %11.2f %11.2f %12.2f %12.2f\n", (int)(strlen(names[i]) - 4),
                   names[i], clip.truth.frame_count, ours.mpjpe_cm[EV_GROUP_ALL], eval_all,
                   ours.mpjpe_cm[EV_GROUP_LOWER], eval_lower);
            sum_layer += ours.mpjpe_cm[EV_GROUP_ALL];
            sum_eval += eval_all;
            sum_lower += ours.mpjpe_cm[EV_GROUP_LOWER];
            sum_eval_lower += eval_lower;
            ++done;
        } else {
            fprintf(stderr, "layer_eval: %s: %s\n", names[i],
                    err.message[0] ? err.message : "the layer failed");
            status = 1;
        }
        ev_motion_fini(&layer);
        ev_clip_fini(&clip);
    }
    if (done > 0)
        printf("%-14s %7d %11.2f %11.2f %12.2f %12.2f\n", "mean", done, sum_layer / done,
               sum_eval / done, sum_lower / done, sum_eval_lower / done);
    for (int i = 0; i < count; ++i)
        free(names[i]);
    cJSON_Delete(eval_json);
    return status;
}
