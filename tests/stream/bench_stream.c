/*
 * bench_stream: how fast the stream module reads the CMU clips and their streams. Prints
 * one row per clip: file size, BVH read (file to memory and parsed), stream made from it,
 * reference stream read. Best of a few runs, milliseconds.
 *
 * Usage: bench_stream [DATA_DIR]   (default: the source tree's tests/data)
 */
#include <stdio.h>
#include <sys/stat.h>

#include "embody/stream.h"
#include "util/u_time.h"

#define RUNS 5

static const char *const clips[] = {
    "cmu_05_04", "cmu_09_12", "cmu_127_17", "cmu_127_31", "cmu_135_07",
    "cmu_14_04", "cmu_14_07", "cmu_14_14",  "cmu_14_21",  "cmu_14_24",
    "cmu_14_27", "cmu_17_10", "cmu_49_03",  "cmu_91_04",  "cmu_91_17",
};

static double
ms_since(int64_t start_ns)
{
    return (double)(u_time_now_ns() - start_ns) / 1e6;
}

static int
bench_clip(const char *dir, const char *clip, double *total)
{
    char bvh_path[1024], csv_path[1024];
    snprintf(bvh_path, sizeof bvh_path, "%s/mocap/%s.bvh", dir, clip);
    snprintf(csv_path, sizeof csv_path, "%s/streams/%s.csv", dir, clip);
    struct stat st;
    if (stat(bvh_path, &st) != 0) {
        fprintf(stderr, "bench_stream: cannot find %s\n", bvh_path);
        return 1;
    }
    double best[3] = {1e9, 1e9, 1e9};
    int frames = 0;
    for (int run = 0; run < RUNS; ++run) {
        struct em_error err;
        struct st_bvh bvh;
        struct st_stream made, ref;
        int64_t t0 = u_time_now_ns();
        if (st_bvh_load(bvh_path, &bvh, &err) != EM_OK) {
            fprintf(stderr, "bench_stream: %s\n", err.message);
            return 1;
        }
        double ms = ms_since(t0);
        best[0] = ms < best[0] ? ms : best[0];
        t0 = u_time_now_ns();
        if (st_mocap_to_stream(&bvh, 0.056444, bvh_path, &made, &err) != EM_OK) {
            fprintf(stderr, "bench_stream: %s\n", err.message);
            st_bvh_fini(&bvh);
            return 1;
        }
        ms = ms_since(t0);
        best[1] = ms < best[1] ? ms : best[1];
        t0 = u_time_now_ns();
        if (st_stream_load(csv_path, &ref, &err) != EM_OK) {
            fprintf(stderr, "bench_stream: %s\n", err.message);
            return 1;
        }
        ms = ms_since(t0);
        best[2] = ms < best[2] ? ms : best[2];
        frames = bvh.frame_count;
        st_bvh_fini(&bvh);
        st_stream_fini(&made);
        st_stream_fini(&ref);
    }
    printf("%-11s %9.2f %7d %10.2f %10.2f %10.2f\n", clip, (double)st.st_size / 1e6, frames,
           best[0], best[1], best[2]);
    for (int i = 0; i < 3; ++i)
        total[i] += best[i];
    return 0;
}

int
main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : EMBODY_SOURCE_DIR "/tests/data";
    printf("%-11s %9s %7s %10s %10s %10s\n", "clip", "size MB", "frames", "bvh ms",
           "stream ms", "csv ms");
    double total[3] = {0, 0, 0};
    for (size_t c = 0; c < sizeof clips / sizeof clips[0]; ++c)
        if (bench_clip(dir, clips[c], total) != 0)
            return 1;
    printf("%-11s %9s %7s %10.2f %10.2f %10.2f\n", "total", "", "", total[0], total[1],
           total[2]);
    return 0;
}
