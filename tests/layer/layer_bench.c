/*
 * layer_bench: what xrLocateBodyJointsFB costs an application, through the real Khronos
 * loader and embody's layer, while the test runtime replays a stream (headless session,
 * one xrSyncActions per frame). Per frame it times:
 *
 *   - a locate at the frame's new time: the layer locates the head and grips, updates
 *     the body, maps it to the joints and returns them in the base space;
 *   - a second locate at the same time: the layer's own work beside the body update
 *     (the base space located, the joints copied out);
 *
 * and, in this process, body_update alone on the same frames (the same settings), so the
 * layer's cost beside the body update can be read off. Prints a table of medians and
 * 99th percentiles in microseconds.
 *
 *   layer_bench [--stream FILE.csv] [--full-body 0|1]
 *
 * Needs the build tree (the test runtime, the layer's manifest, config/); run it from a
 * Release build for figures (build-rel/tests/layer/layer_bench).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "embody/body.h"
#include "embody/prior.h"
#include "embody/stream.h"
#include "layer_app.h"

static double
now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int
compare(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double
percentile(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, compare);
    int i = (int)(p * (double)(n - 1) + 0.5);
    return v[i < 0 ? 0 : (i >= n ? n - 1 : i)];
}

/* body_update alone on the stream, with the layer's settings (config/, the prior). */
static void
time_body_update(const struct st_stream *s, double *out_us)
{
    struct sk_skeleton skeleton;
    struct body_desc desc = {0};
    struct pr_model prior;
    struct em_error err = {{0}};
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &skeleton, &err) !=
            EM_OK ||
        body_desc_load_json(EMBODY_SOURCE_DIR "/config/body.json", &desc, &err) != EM_OK ||
        pr_model_load(EMBODY_SOURCE_DIR "/" PR_DEFAULT_MODEL, &prior, &err) != EM_OK) {
        fprintf(stderr, "layer_bench: %s\n", err.message);
        exit(1);
    }
    desc.skeleton = &skeleton;
    desc.prior = &prior;
    desc.height_m = 1.75f;
    struct body *body = NULL;
    if (body_create(&desc, &body, &err) != EM_OK) {
        fprintf(stderr, "layer_bench: %s\n", err.message);
        exit(1);
    }
    for (int k = 0; k < s->frame_count; ++k) {
        const double t0 = now_us();
        body_update(body, &s->frames[k]);
        out_us[k] = now_us() - t0;
    }
    body_destroy(&body);
    pr_model_fini(&prior);
    sk_skeleton_fini(&skeleton);
}

int
main(int argc, char **argv)
{
    const char *stream_path = EMBODY_SOURCE_DIR "/tests/data/streams/cmu_14_14.csv";
    bool full_body = true;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--stream") == 0 && i + 1 < argc)
            stream_path = argv[++i];
        else if (strcmp(argv[i], "--full-body") == 0 && i + 1 < argc)
            full_body = strcmp(argv[++i], "0") != 0;
        else {
            fprintf(stderr, "usage: layer_bench [--stream FILE.csv] [--full-body 0|1]\n");
            return 2;
        }
    }
    struct st_stream s = {0};
    struct em_error err = {{0}};
    if (st_stream_load(stream_path, &s, &err) != EM_OK) {
        fprintf(stderr, "layer_bench: %s\n", err.message);
        return 2;
    }
    char script[] = "/tmp/embody-layer-bench-XXXXXX";
    const int fd = mkstemp(script);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "layer_bench: cannot write a script in /tmp\n");
        return 1;
    }
    fprintf(f, "poses %s\n", stream_path);
    fclose(f);
    la_use_layer(script);
    setenv("EMBODY_DATA_DIR", EMBODY_SOURCE_DIR, 0);
    setenv("EMBODY_LAYER_HEIGHT_M", "1.75", 1);

    struct la_app app;
    la_create(&app, true, full_body);
    la_start_session(&app);
    la_pump(&app);
    const uint32_t count = full_body ? XR_FULL_BODY_JOINT_COUNT_META : XR_BODY_JOINT_COUNT_FB;
    const XrBodyTrackerCreateInfoFB create = {.type = XR_TYPE_BODY_TRACKER_CREATE_INFO_FB,
                                              .bodyJointSet = full_body
                                                                  ? XR_BODY_JOINT_SET_FULL_BODY_META
                                                                  : XR_BODY_JOINT_SET_DEFAULT_FB};
    XrBodyTrackerFB tracker = XR_NULL_HANDLE;
    if (!app.create_body_tracker ||
        XR_FAILED(app.create_body_tracker(app.session, &create, &tracker))) {
        fprintf(stderr, "layer_bench: no body tracker\n");
        return 1;
    }
    const int n = s.frame_count;
    double *fresh = calloc((size_t)n, sizeof *fresh);
    double *again = calloc((size_t)n, sizeof *again);
    double *update = calloc((size_t)n, sizeof *update);
    XrBodyJointLocationFB joints[XR_FULL_BODY_JOINT_COUNT_META];
    int active = 0;
    for (int k = 0; k < n; ++k) {
        la_pump(&app);
        la_sync(&app);
        const XrBodyJointsLocateInfoFB info = {.type = XR_TYPE_BODY_JOINTS_LOCATE_INFO_FB,
                                               .baseSpace = app.stage,
                                               .time = la_time_of(s.frames[k].time_s)};
        XrBodyJointLocationsFB out = {
            .type = XR_TYPE_BODY_JOINT_LOCATIONS_FB, .jointCount = count, .jointLocations = joints};
        double t0 = now_us();
        XrResult r = app.locate_body_joints(tracker, &info, &out);
        fresh[k] = now_us() - t0;
        t0 = now_us();
        r = XR_SUCCEEDED(r) ? app.locate_body_joints(tracker, &info, &out) : r;
        again[k] = now_us() - t0;
        if (XR_FAILED(r)) {
            fprintf(stderr, "layer_bench: xrLocateBodyJointsFB: %d\n", (int)r);
            return 1;
        }
        active += out.isActive ? 1 : 0;
    }
    la_destroy(&app);
    remove(script);
    time_body_update(&s, update);

    const double fresh_med = percentile(fresh, n, 0.5), fresh_p99 = percentile(fresh, n, 0.99);
    const double again_med = percentile(again, n, 0.5), again_p99 = percentile(again, n, 0.99);
    const double update_med = percentile(update, n, 0.5), update_p99 = percentile(update, n, 0.99);
    printf("xrLocateBodyJointsFB through the Khronos loader and embody's layer, test runtime\n"
           "replaying %s: %d frames, %u joints returned, %d frames active\n\n",
           strrchr(stream_path, '/') ? strrchr(stream_path, '/') + 1 : stream_path, n, count,
           active);
    printf("%-58s %10s %10s\n", "call (microseconds)", "median", "p99");
    printf("%-58s %10.1f %10.1f\n", "locate at a new time (devices + body update + joints)",
           fresh_med, fresh_p99);
    printf("%-58s %10.1f %10.1f\n", "locate again at the same time (the layer's own work)",
           again_med, again_p99);
    printf("%-58s %10.1f %10.1f\n", "body_update alone (library, same frames)", update_med,
           update_p99);
    printf("%-58s %10.1f %10s\n", "new time minus body update (medians): beside the update",
           fresh_med - update_med, "");
    free(fresh);
    free(again);
    free(update);
    st_stream_fini(&s);
    return 0;
}
