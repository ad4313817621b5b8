/* Run statistics (app_stats.h). */
#include <math.h>

#include "app/app_stats.h"

void
app_stats_add(struct app_stats *stats, int64_t now_ns, float update_us, enum body_posture posture)
{
    if (stats->frames == 0)
        stats->first_frame_ns = now_ns;
    stats->last_frame_ns = now_ns;
    stats->frames++;
    if (!isfinite(update_us) || update_us < 0.0f)
        update_us = 0.0f;
    stats->update_us_sum += (double)update_us;
    if (update_us > stats->update_us_max)
        stats->update_us_max = update_us;
    double bin = (double)update_us / APP_STATS_BIN_US;
    if (bin > APP_STATS_BINS - 1)
        bin = APP_STATS_BINS - 1;
    stats->update_hist[(int)bin]++;
    if (posture >= 0 && posture < BODY_POSTURE_COUNT)
        stats->posture[posture]++;
}

float
app_stats_mean_us(const struct app_stats *stats)
{
    return stats->frames > 0 ? (float)(stats->update_us_sum / (double)stats->frames) : 0.0f;
}

float
app_stats_median_us(const struct app_stats *stats)
{
    if (stats->frames == 0)
        return 0.0f;
    /* The middle sample's bin (the lower middle for an even count), reported at the
     * bin's centre. */
    const long middle = (stats->frames - 1) / 2;
    long seen = 0;
    for (int i = 0; i < APP_STATS_BINS; ++i) {
        seen += stats->update_hist[i];
        if (seen > middle)
            return (float)(((double)i + 0.5) * APP_STATS_BIN_US);
    }
    return stats->update_us_max;
}

double
app_stats_seconds(const struct app_stats *stats)
{
    return stats->frames > 1 ? (double)(stats->last_frame_ns - stats->first_frame_ns) * 1e-9 : 0.0;
}
