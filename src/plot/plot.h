/*
 * Plots as PNG images, drawn with cairo (Debian's libcairo2): the figures `embody eval
 * --plot DIR` writes. Three kinds, each one image of PL_WIDTH x PL_HEIGHT pixels:
 *
 *   - lines over time (a clip's error per joint group), with bands under the axis marking
 *     what happened at each frame (the feet's contacts, the posture);
 *   - grouped bars (MPJPE per motion category or per tracker setup, one bar per series);
 *   - a heat map (the cost of each fault on each tracker setup), each cell labelled.
 *
 * Not core: the plot module links cairo. The eval observer (pl_eval_observer) is what
 * `embody eval` hands the evaluation so that its runs are drawn.
 */
#ifndef EMBODY_PLOT_H
#define EMBODY_PLOT_H

#include <stdbool.h>
#include <stdint.h>

#include "eval/eval.h"
#include "embody/result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_WIDTH 1200
#define PL_HEIGHT 700
#define PL_MAX_SERIES 8
#define PL_MAX_BANDS 4

/* A row of marks under the time axis: at each frame a class (0 = nothing drawn, 1.. the
 * label's index + 1, each class its own colour). */
struct pl_band {
    const char *name;              /* "left foot contact" */
    int class_count;               /* classes 1..class_count */
    const char *class_name[4];     /* for the legend ("standing", ...) */
    const unsigned char *class_of; /* [frame_count] */
    int first_colour;              /* the band palette's colour of class 1 (0..5) */
};

struct pl_lines {
    const char *title;
    const char *y_label; /* "error (cm)" */
    int frame_count;
    double fps;
    int series_count;
    const char *series_name[PL_MAX_SERIES];
    const double *value[PL_MAX_SERIES]; /* [frame_count]; NaN leaves a gap */
    int band_count;
    struct pl_band band[PL_MAX_BANDS];
};

struct pl_bars {
    const char *title;
    const char *y_label;
    int group_count;               /* bars are grouped along the x axis */
    const char *const *group_name; /* [group_count] */
    int series_count;              /* bars per group */
    const char *series_name[PL_MAX_SERIES];
    const double *value; /* [group][series], NaN: no bar */
};

struct pl_heatmap {
    const char *title;
    const char *unit; /* shown in each cell after the number */
    int row_count, col_count;
    const char *const *row_name;
    const char *const *col_name;
    const double *value; /* [row][col], NaN: an empty cell */
};

/* Each writes a PNG of PL_WIDTH x PL_HEIGHT at `path`; errors name the file. */
enum em_result pl_write_lines(const char *path, const struct pl_lines *plot, struct em_error *err);

enum em_result pl_write_bars(const char *path, const struct pl_bars *plot, struct em_error *err);

enum em_result pl_write_heatmap(const char *path, const struct pl_heatmap *plot,
                                struct em_error *err);

/* The observer that draws an evaluation's figures into its --plot folder. */
const struct ev_observer *pl_eval_observer(void);

#ifdef __cplusplus
}
#endif

#endif
