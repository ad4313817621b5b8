/*
 * Time of one run of the prior's network (a benchmark, not a test): pr_model_infer (the
 * CPU's AVX2 and FMA path where it has them) against pr_model_infer_portable, on model
 * files given on the command line (default: the shipped one), over features of a real
 * player's motion. Prints per model the median and 99th percentile of batches of runs,
 * in microseconds per run, and the largest difference of the two paths' outputs.
 *
 *   build/tests/bench/bench_prior_infer [MODEL.bin ...]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "embody/prior.h"
#include "util/u_time.h"

#define BATCHES 301
#define RUNS_PER_BATCH 200

typedef void (*infer_fn)(const struct pr_model *, const float *, float *);

static int
compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and 99th percentile of BATCHES batches, microseconds per run. */
static void
time_path(infer_fn infer, const struct pr_model *m, const float *features, double *out_median,
          double *out_p99)
{
    static double us[BATCHES];
    float out[PR_OUTPUT_COUNT];
    volatile float sink = 0.0f;
    for (int b = 0; b < BATCHES; ++b) {
        const int64_t start = u_time_now_ns();
        for (int r = 0; r < RUNS_PER_BATCH; ++r) {
            infer(m, features, out);
            sink += out[r % PR_OUTPUT_COUNT];
        }
        us[b] = (double)(u_time_now_ns() - start) * 1e-3 / RUNS_PER_BATCH;
    }
    (void)sink;
    qsort(us, BATCHES, sizeof us[0], compare_double);
    *out_median = us[BATCHES / 2];
    *out_p99 = us[BATCHES * 99 / 100];
}

/* Features of a plausible moment: a standing player's window, from the feature code. */
static void
standing_features(float *features)
{
    struct pr_history h;
    pr_history_reset(&h);
    struct em_tracking_frame frame = {0};
    for (int i = 0; i < PR_HISTORY_FRAMES; ++i) {
        const float t = (float)i / 60.0f;
        for (int d = 0; d < 3; ++d) {
            struct em_device_pose *p = &frame.device[d];
            p->flags = EM_POSE_ALL_VALID;
            p->pose.orientation[3] = 1.0f;
            p->pose.position_m[0] = d == 0 ? 0.0f : (d == 1 ? -0.3f : 0.3f);
            p->pose.position_m[1] = (d == 0 ? 1.65f : 1.0f) + 0.02f * sinf(3.0f * t);
            p->pose.position_m[2] = 0.05f * t;
        }
        frame.time_s = (double)i / 60.0;
        pr_history_push(&h, &frame);
    }
    float yaw = 0.0f;
    pr_features(&h, 1.75f, 0.0f, features, &yaw);
}

int
main(int argc, char **argv)
{
    const char *fallback[] = {EMBODY_SOURCE_DIR "/" PR_DEFAULT_MODEL};
    const char *const *paths = argc > 1 ? (const char *const *)argv + 1 : fallback;
    const int count = argc > 1 ? argc - 1 : 1;
    float features[PR_FEATURE_COUNT];
    standing_features(features);
    printf("| model | hidden | multiply-adds | fast median us | fast p99 | portable median us "
           "| portable p99 | largest difference |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    int status = 0;
    for (int i = 0; i < count; ++i) {
        struct pr_model m;
        struct em_error err = {{0}};
        if (pr_model_load(paths[i], &m, &err) != EM_OK) {
            fprintf(stderr, "bench_prior_infer: %s\n", err.message);
            status = 1;
            continue;
        }
        float fast[PR_OUTPUT_COUNT], portable[PR_OUTPUT_COUNT];
        pr_model_infer(&m, features, fast);
        pr_model_infer_portable(&m, features, portable);
        double diff = 0.0;
        for (int j = 0; j < m.output_count; ++j)
            diff = fmax(diff, fabs((double)fast[j] - (double)portable[j]));
        double fm, fp, pm, pp;
        time_path(pr_model_infer, &m, features, &fm, &fp);
        time_path(pr_model_infer_portable, &m, features, &pm, &pp);
        const long macs = (long)m.feature_count * m.hidden_count +
                          (long)m.hidden_count * m.hidden_count +
                          (long)m.hidden_count * m.output_count;
        printf("| %s | %d | %ld | %.2f | %.2f | %.2f | %.2f | %.2g |\n", paths[i], m.hidden_count,
               macs, fm, fp, pm, pp, diff);
        pr_model_fini(&m);
    }
    return status;
}
