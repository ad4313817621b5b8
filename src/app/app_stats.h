/*
 * Run statistics for the summary at the end of a live run: frames, wall time, the body
 * update's time (mean, median, max, from a histogram so that a long run needs no memory
 * per frame), and how many frames the body spent in each posture.
 */
#ifndef EMBODY_APP_STATS_H
#define EMBODY_APP_STATS_H

#include <stdint.h>

#include "embody/body.h"

/* Histogram bins of APP_STATS_BIN_US each; slower updates go into the last bin. */
#define APP_STATS_BIN_US 0.5
#define APP_STATS_BINS 20000

struct app_stats {
    long frames;
    int64_t first_frame_ns; /* monotonic clock at the first and last frame */
    int64_t last_frame_ns;
    double update_us_sum;
    float update_us_max;
    uint32_t update_hist[APP_STATS_BINS];
    long posture[BODY_POSTURE_COUNT];
};

/* Counts one frame at `now_ns` whose body update took `update_us`. */
void app_stats_add(struct app_stats *stats, int64_t now_ns, float update_us,
                   enum body_posture posture);

float app_stats_mean_us(const struct app_stats *stats);

/* The median update time (to the bin width), or 0 without frames. */
float app_stats_median_us(const struct app_stats *stats);

/* Seconds from the first frame to the last (0 with fewer than two frames). */
double app_stats_seconds(const struct app_stats *stats);

#endif
