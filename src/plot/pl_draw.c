/*
 * Drawing the plots (src/plot/plot.h) with cairo: a white page, a title, axes with
 * round ticks, then lines, bars or a heat map, and a legend; written as PNG.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cairo.h>

#include "plot/plot.h"

/* The plotting area within the page. */
#define LEFT 90.0
#define RIGHT 230.0 /* room for the legend */
#define TOP 60.0
#define BOTTOM 70.0
#define BAND_H 16.0

static const double k_palette[PL_MAX_SERIES][3] = {
    {0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
    {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.50, 0.50, 0.50},
};

struct page {
    cairo_surface_t *surface;
    cairo_t *cr;
};

static enum em_result
page_open(struct page *p, const char *path, const char *title, struct em_error *err)
{
    p->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, PL_WIDTH, PL_HEIGHT);
    p->cr = cairo_create(p->surface);
    if (cairo_status(p->cr) != CAIRO_STATUS_SUCCESS) {
        cairo_destroy(p->cr);
        cairo_surface_destroy(p->surface);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: cannot draw (%s)", path,
                       cairo_status_to_string(cairo_status(p->cr)));
    }
    cairo_set_source_rgb(p->cr, 1, 1, 1);
    cairo_paint(p->cr);
    cairo_select_font_face(p->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(p->cr, 18);
    cairo_set_source_rgb(p->cr, 0, 0, 0);
    cairo_move_to(p->cr, LEFT, 32);
    cairo_show_text(p->cr, title);
    cairo_select_font_face(p->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(p->cr, 12);
    cairo_set_line_width(p->cr, 1.0);
    return EM_OK;
}

static enum em_result
page_close(struct page *p, const char *path, struct em_error *err)
{
    cairo_surface_flush(p->surface);
    const cairo_status_t s = cairo_surface_write_to_png(p->surface, path);
    cairo_destroy(p->cr);
    cairo_surface_destroy(p->surface);
    if (s != CAIRO_STATUS_SUCCESS)
        return em_fail(err, EM_ERROR_IO, "%s: cannot write the PNG (%s)", path,
                       cairo_status_to_string(s));
    return EM_OK;
}

static void
text_at(cairo_t *cr, double x, double y, const char *s, double align_x)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_move_to(cr, x - align_x * e.x_advance, y);
    cairo_show_text(cr, s);
}

/* A round step giving about `ticks` ticks over [0, hi]. */
static double
tick_step(double hi, int ticks)
{
    const double raw = hi / ticks;
    const double p = pow(10.0, floor(log10(raw)));
    const double m = raw / p;
    return p * (m < 1.5 ? 1.0 : m < 3.5 ? 2.0 : m < 7.5 ? 5.0 : 10.0);
}

/* The y axis from 0 to `hi` (rounded up to a tick) in the box; returns the axis' top. */
static double
y_axis(cairo_t *cr, double x0, double y0, double x1, double y1, double hi, const char *label)
{
    if (!(hi > 0.0) || !isfinite(hi))
        hi = 1.0;
    const double step = tick_step(hi, 6);
    const double top = ceil(hi / step - 1e-9) * step;
    char s[32];
    for (double v = 0.0; v <= top + step * 0.5; v += step) {
        const double y = y0 - (y0 - y1) * v / top;
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, x0, y);
        cairo_line_to(cr, x1, y);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        snprintf(s, sizeof s, "%g", v);
        text_at(cr, x0 - 6, y + 4, s, 1.0);
    }
    cairo_save(cr);
    cairo_translate(cr, 24, (y0 + y1) / 2);
    cairo_rotate(cr, -1.57079632679489662);
    text_at(cr, 0, 0, label, 0.5);
    cairo_restore(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_move_to(cr, x0, y1);
    cairo_line_to(cr, x0, y0);
    cairo_line_to(cr, x1, y0);
    cairo_stroke(cr);
    return top;
}

static void
legend(cairo_t *cr, int count, const char *const *names, const double (*colours)[3], double y)
{
    const double x = PL_WIDTH - RIGHT + 20;
    for (int i = 0; i < count; ++i) {
        cairo_set_source_rgb(cr, colours[i][0], colours[i][1], colours[i][2]);
        cairo_rectangle(cr, x, y + 20 * i - 10, 14, 12);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, x + 20, y + 20 * i, names[i], 0.0);
    }
}

/* ---- lines ---- */

static const double k_band_colours[6][3] = {
    {0.30, 0.30, 0.30}, {0.62, 0.76, 0.90}, {0.95, 0.65, 0.20},
    {0.80, 0.30, 0.30}, {0.40, 0.40, 0.85}, {0.55, 0.75, 0.45},
};

enum em_result
pl_write_lines(const char *path, const struct pl_lines *plot, struct em_error *err)
{
    struct page p;
    enum em_result r = page_open(&p, path, plot->title, err);
    if (r != EM_OK)
        return r;
    cairo_t *cr = p.cr;
    const double x0 = LEFT, x1 = PL_WIDTH - RIGHT, y1 = TOP;
    const double y0 = PL_HEIGHT - BOTTOM - BAND_H * plot->band_count - 10;
    double hi = 0.0;
    for (int s = 0; s < plot->series_count; ++s)
        for (int f = 0; f < plot->frame_count; ++f)
            if (isfinite(plot->value[s][f]))
                hi = fmax(hi, plot->value[s][f]);
    const double top = y_axis(cr, x0, y0, x1, y1, hi, plot->y_label);
    const double seconds = plot->frame_count > 1 ? (plot->frame_count - 1) / plot->fps : 1.0;
    const double step = tick_step(seconds, 10);
    char s[32];
    for (double t = 0.0; t <= seconds + 1e-9; t += step) {
        const double x = x0 + (x1 - x0) * t / seconds;
        snprintf(s, sizeof s, "%g", t);
        text_at(cr, x, PL_HEIGHT - BOTTOM + 28, s, 0.5);
    }
    text_at(cr, (x0 + x1) / 2, PL_HEIGHT - 14, "time (s)", 0.5);
    cairo_rectangle(cr, x0, y1, x1 - x0, y0 - y1);
    cairo_clip(cr);
    cairo_set_line_width(cr, 1.5);
    for (int si = 0; si < plot->series_count; ++si) {
        cairo_set_source_rgb(cr, k_palette[si][0], k_palette[si][1], k_palette[si][2]);
        bool pen = false;
        for (int f = 0; f < plot->frame_count; ++f) {
            const double v = plot->value[si][f];
            if (!isfinite(v)) {
                pen = false;
                continue;
            }
            const double x = x0 + (x1 - x0) * f / fmax(1.0, plot->frame_count - 1.0);
            const double y = y0 - (y0 - y1) * v / top;
            if (pen)
                cairo_line_to(cr, x, y);
            else
                cairo_move_to(cr, x, y);
            pen = true;
        }
        cairo_stroke(cr);
    }
    cairo_reset_clip(cr);
    cairo_set_line_width(cr, 1.0);
    /* the bands: one row each under the axis, a colour per class */
    for (int b = 0; b < plot->band_count; ++b) {
        const struct pl_band *band = &plot->band[b];
        const double by = y0 + 8 + BAND_H * b;
        for (int f = 0; f < plot->frame_count; ++f) {
            const int c = band->class_of[f];
            if (c < 1 || c > band->class_count)
                continue;
            const double xa = x0 + (x1 - x0) * f / fmax(1.0, plot->frame_count - 1.0);
            const double w = (x1 - x0) / fmax(1.0, plot->frame_count - 1.0);
            const double *rgb = k_band_colours[(band->first_colour + c - 1) % 6];
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
            cairo_rectangle(cr, xa, by, w + 1.0, BAND_H - 4);
            cairo_fill(cr);
        }
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, x1 + 8, by + 11, band->name, 0.0);
    }
    legend(cr, plot->series_count, plot->series_name, k_palette, TOP + 10);
    /* the bands' classes under the series */
    double ly = TOP + 10 + 20 * plot->series_count + 20;
    for (int b = 0; b < plot->band_count; ++b) {
        if (b > 0 && plot->band[b].class_count == plot->band[b - 1].class_count &&
            plot->band[b].class_name[0] == plot->band[b - 1].class_name[0])
            continue; /* the same classes as the band above */
        legend(cr, plot->band[b].class_count, plot->band[b].class_name,
               k_band_colours + plot->band[b].first_colour % 6, ly);
        ly += 20 * plot->band[b].class_count + 10;
    }
    return page_close(&p, path, err);
}

/* ---- bars ---- */

/* Bars' text sizes (points) and the slant of group names too wide to stand side by side. */
#define BAR_VALUE_FONT 10.0
#define BAR_GROUP_FONT 12.0
#define GROUP_NAME_SLANT_RAD 0.6 /* about 35 degrees */

static double
text_width(cairo_t *cr, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return e.x_advance;
}

/* The widest of the group names, at the group font. */
static double
widest_group_name(cairo_t *cr, const struct pl_bars *plot)
{
    cairo_set_font_size(cr, BAR_GROUP_FONT);
    double widest = 0.0;
    for (int g = 0; g < plot->group_count; ++g)
        widest = fmax(widest, text_width(cr, plot->group_name[g]));
    return widest;
}

/* The widest value label ("48.8"), at the value font. */
static double
widest_value(cairo_t *cr, const struct pl_bars *plot, double *out_hi)
{
    cairo_set_font_size(cr, BAR_VALUE_FONT);
    double widest = 0.0, hi = 0.0;
    char s[32];
    for (int i = 0; i < plot->group_count * plot->series_count; ++i) {
        if (!isfinite(plot->value[i]))
            continue;
        hi = fmax(hi, plot->value[i]);
        snprintf(s, sizeof s, "%.1f", plot->value[i]);
        widest = fmax(widest, text_width(cr, s));
    }
    *out_hi = hi;
    return widest;
}

/* A group's name under its bars, level, or slanted with its end under the group's middle
 * when names side by side would run into each other. */
static void
group_name(cairo_t *cr, double x, double y, const char *name, bool slanted)
{
    cairo_set_font_size(cr, BAR_GROUP_FONT);
    if (!slanted) {
        text_at(cr, x, y + 20, name, 0.5);
        return;
    }
    cairo_save(cr);
    cairo_translate(cr, x + 4, y + 14);
    cairo_rotate(cr, -GROUP_NAME_SLANT_RAD);
    text_at(cr, 0, 0, name, 1.0);
    cairo_restore(cr);
}

/* A bar's value above it, level, or upright when wider than the bar. */
static void
bar_value(cairo_t *cr, double x, double y, double v, bool upright)
{
    char s[32];
    snprintf(s, sizeof s, "%.1f", v);
    cairo_set_font_size(cr, BAR_VALUE_FONT);
    if (!upright) {
        text_at(cr, x, y - 3, s, 0.5);
        return;
    }
    cairo_save(cr);
    cairo_translate(cr, x + BAR_VALUE_FONT * 0.35, y - 3);
    cairo_rotate(cr, -1.57079632679489662);
    text_at(cr, 0, 0, s, 0.0);
    cairo_restore(cr);
}

enum em_result
pl_write_bars(const char *path, const struct pl_bars *plot, struct em_error *err)
{
    struct page p;
    enum em_result r = page_open(&p, path, plot->title, err);
    if (r != EM_OK)
        return r;
    cairo_t *cr = p.cr;
    const double x0 = LEFT, x1 = PL_WIDTH - RIGHT;
    const double group_w = (x1 - x0) / fmax(1, plot->group_count);
    const double bar_w = group_w * 0.8 / fmax(1, plot->series_count);
    /* Names that do not fit side by side are slanted, and the plot rises to make room. */
    const double name_w = widest_group_name(cr, plot);
    const bool slanted = name_w > group_w * 0.95;
    const double bottom =
        slanted ? fmax(BOTTOM, 24.0 + BAR_GROUP_FONT + name_w * sin(GROUP_NAME_SLANT_RAD)) : BOTTOM;
    const double y0 = PL_HEIGHT - bottom, y1 = TOP;
    /* Values wider than a bar stand upright above it, with room above the tallest. */
    double hi = 0.0;
    const double value_w = widest_value(cr, plot, &hi);
    const bool upright = value_w > bar_w * 0.92;
    const double room = (upright ? value_w : BAR_VALUE_FONT) + 6.0;
    cairo_set_font_size(cr, 12);
    const double top = y_axis(cr, x0, y0, x1, y1, hi * (y0 - y1) / (y0 - y1 - room), plot->y_label);
    for (int g = 0; g < plot->group_count; ++g) {
        for (int si = 0; si < plot->series_count; ++si) {
            const double v = plot->value[g * plot->series_count + si];
            if (!isfinite(v))
                continue;
            const double x = x0 + group_w * g + group_w * 0.1 + bar_w * si;
            const double h = (y0 - y1) * v / top;
            cairo_set_source_rgb(cr, k_palette[si][0], k_palette[si][1], k_palette[si][2]);
            cairo_rectangle(cr, x, y0 - h, bar_w * 0.92, h);
            cairo_fill(cr);
            cairo_set_source_rgb(cr, 0, 0, 0);
            bar_value(cr, x + bar_w * 0.46, y0 - h, v, upright);
        }
        group_name(cr, x0 + group_w * (g + 0.5), y0, plot->group_name[g], slanted);
    }
    cairo_set_font_size(cr, 12);
    legend(cr, plot->series_count, plot->series_name, k_palette, TOP + 10);
    return page_close(&p, path, err);
}

/* ---- heat map ---- */

/* White through yellow to red as `t` goes 0..1. */
static void
heat_colour(double t, double *rgb)
{
    t = fmin(1.0, fmax(0.0, t));
    rgb[0] = 1.0;
    rgb[1] = t < 0.5 ? 1.0 - 0.1 * t * 2 : 0.9 - 0.8 * (t - 0.5) * 2;
    rgb[2] = t < 0.5 ? 0.85 - 0.75 * t * 2 : 0.1;
}

enum em_result
pl_write_heatmap(const char *path, const struct pl_heatmap *plot, struct em_error *err)
{
    struct page p;
    enum em_result r = page_open(&p, path, plot->title, err);
    if (r != EM_OK)
        return r;
    cairo_t *cr = p.cr;
    const double x0 = LEFT + 40, x1 = PL_WIDTH - 40, y0 = TOP + 40, y1 = PL_HEIGHT - 40;
    double lo = (double)INFINITY, hi = -(double)INFINITY;
    for (int i = 0; i < plot->row_count * plot->col_count; ++i)
        if (isfinite(plot->value[i])) {
            lo = fmin(lo, plot->value[i]);
            hi = fmax(hi, plot->value[i]);
        }
    const double cw = (x1 - x0) / fmax(1, plot->col_count);
    const double ch = (y1 - y0) / fmax(1, plot->row_count);
    char s[48];
    for (int c = 0; c < plot->col_count; ++c)
        text_at(cr, x0 + cw * (c + 0.5), y0 - 10, plot->col_name[c], 0.5);
    for (int row = 0; row < plot->row_count; ++row) {
        text_at(cr, x0 - 10, y0 + ch * (row + 0.5) + 4, plot->row_name[row], 1.0);
        for (int c = 0; c < plot->col_count; ++c) {
            const double v = plot->value[row * plot->col_count + c];
            double rgb[3] = {0.93, 0.93, 0.93};
            if (isfinite(v))
                heat_colour(hi > lo ? (v - lo) / (hi - lo) : 0.0, rgb);
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
            cairo_rectangle(cr, x0 + cw * c + 1, y0 + ch * row + 1, cw - 2, ch - 2);
            cairo_fill(cr);
            cairo_set_source_rgb(cr, 0, 0, 0);
            if (isfinite(v))
                snprintf(s, sizeof s, "%.2f %s", v, plot->unit);
            else
                snprintf(s, sizeof s, "-");
            text_at(cr, x0 + cw * (c + 0.5), y0 + ch * (row + 0.5) + 4, s, 0.5);
        }
    }
    return page_close(&p, path, err);
}
