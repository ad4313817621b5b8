/*
 * Tests of the plots (src/plot/plot.h): each kind writes a PNG of the stated size that
 * is not blank, with what it draws where it should be; and `embody eval --plot DIR` (the
 * evaluation with the plot observer) writes its figures for a clip of tests/data/mocap.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cairo.h>
#include <cmocka.h>

#include "plot/plot.h"

#ifndef EMBODY_SOURCE_DIR
#define EMBODY_SOURCE_DIR "."
#endif

static void
temp_dir(char *out, size_t size)
{
    snprintf(out, size, "/tmp/embody_test_plot_XXXXXX");
    assert_non_null(mkdtemp(out));
}

/* The share of pixels of `path` that are not white; fails unless it is a PL_WIDTH x
 * PL_HEIGHT PNG. `region` (x, y, w, h; NULL: all) limits the count. */
static double
inked_share(const char *path, const int *region)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    assert_int_equal(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    assert_int_equal(cairo_image_surface_get_width(s), PL_WIDTH);
    assert_int_equal(cairo_image_surface_get_height(s), PL_HEIGHT);
    const unsigned char *data = cairo_image_surface_get_data(s);
    const int stride = cairo_image_surface_get_stride(s);
    const int x0 = region ? region[0] : 0, y0 = region ? region[1] : 0;
    const int w = region ? region[2] : PL_WIDTH, h = region ? region[3] : PL_HEIGHT;
    long inked = 0;
    for (int y = y0; y < y0 + h; ++y)
        for (int x = x0; x < x0 + w; ++x) {
            const unsigned char *p = data + (size_t)y * (size_t)stride + 4 * (size_t)x;
            inked += p[0] < 240 || p[1] < 240 || p[2] < 240;
        }
    cairo_surface_destroy(s);
    return (double)inked / ((double)w * h);
}

static void
lines_plot_draws_its_series_and_bands(void **state)
{
    (void)state;
    char dir[64], path[128];
    temp_dir(dir, sizeof dir);
    enum { N = 600 };
    static double a[N], b[N];
    static unsigned char band[N];
    for (int i = 0; i < N; ++i) {
        a[i] = 5.0 + 3.0 * sin(i * 0.05);
        b[i] = i < 300 ? 2.0 : (double)NAN;
        band[i] = i % 100 < 50 ? 1 : 0;
    }
    struct pl_lines plot = {.title = "a test",
                            .y_label = "cm",
                            .frame_count = N,
                            .fps = 60.0,
                            .series_count = 2,
                            .band_count = 1};
    plot.series_name[0] = "a";
    plot.series_name[1] = "b";
    plot.value[0] = a;
    plot.value[1] = b;
    plot.band[0] = (struct pl_band){
        .name = "contact", .class_count = 1, .class_name = {"planted"}, .class_of = band};
    struct em_error err = {{0}};
    snprintf(path, sizeof path, "%s/lines.png", dir);
    assert_int_equal(pl_write_lines(path, &plot, &err), EM_OK);
    assert_true(inked_share(path, NULL) > 0.02);
    /* the plotting area holds the lines: ink there, beyond the grid's */
    const int area[4] = {100, 80, 800, 400};
    assert_true(inked_share(path, area) > 0.01);
    unlink(path);
    /* a folder that does not exist: an error naming the file */
    assert_int_equal(pl_write_lines("/nonexistent/x.png", &plot, &err), EM_ERROR_IO);
    assert_non_null(strstr(err.message, "/nonexistent/x.png"));
    rmdir(dir);
}

static void
bars_and_heatmap_fill_their_area(void **state)
{
    (void)state;
    char dir[64], path[128];
    temp_dir(dir, sizeof dir);
    const char *groups[3] = {"walk", "run", "sit"};
    const double values[6] = {3.0, 5.0, 4.0, 8.0, (double)NAN, 2.0};
    const struct pl_bars bars = {.title = "bars",
                                 .y_label = "cm",
                                 .group_count = 3,
                                 .group_name = groups,
                                 .series_count = 2,
                                 .series_name = {"known", "height"},
                                 .value = values};
    struct em_error err = {{0}};
    snprintf(path, sizeof path, "%s/bars.png", dir);
    assert_int_equal(pl_write_bars(path, &bars, &err), EM_OK);
    assert_true(inked_share(path, NULL) > 0.05);
    unlink(path);
    const char *rows[2] = {"4", "6"}, *cols[3] = {"none", "drift", "noise"};
    const double cells[6] = {5.0, 7.0, (double)NAN, 3.0, 6.0, 4.0};
    const struct pl_heatmap heat = {.title = "heat",
                                    .unit = "cm",
                                    .row_count = 2,
                                    .col_count = 3,
                                    .row_name = rows,
                                    .col_name = cols,
                                    .value = cells};
    snprintf(path, sizeof path, "%s/heat.png", dir);
    assert_int_equal(pl_write_heatmap(path, &heat, &err), EM_OK);
    /* the worst cell is coloured: the heat map's cells cover most of the page */
    assert_true(inked_share(path, NULL) > 0.5);
    unlink(path);
    rmdir(dir);
}

static void
eval_plot_writes_the_clip_and_category_figures(void **state)
{
    (void)state;
    char dir[64], path[160];
    temp_dir(dir, sizeof dir);
    char plot_dir[96];
    snprintf(plot_dir, sizeof plot_dir, "%s/figures", dir); /* made by --plot */
    char *argv[] = {"eval",       EMBODY_SOURCE_DIR "/tests/data/mocap",
                    "--subjects", "05",
                    "--frames",   "240",
                    "--body",     "procedural",
                    "--mode",     "known",
                    "--json",     "-",
                    "--quiet",    "--plot",
                    plot_dir};
    const int argc = (int)(sizeof argv / sizeof argv[0]);
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");
    const int status = ev_main_observed(argc, argv, pl_eval_observer());
    fclose(stdout);
    stdout = saved;
    assert_int_equal(status, 0);
    snprintf(path, sizeof path, "%s/clip_cmu_05_04.png", plot_dir);
    assert_true(inked_share(path, NULL) > 0.02);
    unlink(path);
    snprintf(path, sizeof path, "%s/categories.png", plot_dir);
    assert_true(inked_share(path, NULL) > 0.02);
    unlink(path);
    rmdir(plot_dir);
    rmdir(dir);
    /* without an observer --plot is refused */
    assert_int_equal(ev_main(argc, argv), 2);
}

/* Pixel (x, y) of an RGB24 image: inked when not near white, dark as the axis line is
 * (grey or darker: a 1-pixel line between two rows is drawn grey on both). */
static bool
inked_at(const unsigned char *data, int stride, int x, int y)
{
    const unsigned char *p = data + (size_t)y * (size_t)stride + 4 * (size_t)x;
    return p[0] < 240 || p[1] < 240 || p[2] < 240;
}

static bool
dark_at(const unsigned char *data, int stride, int x, int y)
{
    const unsigned char *p = data + (size_t)y * (size_t)stride + 4 * (size_t)x;
    return p[0] < 160 && p[1] < 160 && p[2] < 160;
}

/* Sixteen groups with names as long as the categories' ("exercise_stretch"): the names
 * under the axis keep apart (just under the axis, a blank gap wider than between letters
 * between each two groups' middles), and none is cut off at the page's foot. */
static void
long_group_names_keep_apart(void **state)
{
    (void)state;
    char dir[64], path[128];
    temp_dir(dir, sizeof dir);
    enum { GROUPS = 16, SERIES = 3 };
    const char *groups[GROUPS];
    double values[GROUPS * SERIES];
    for (int g = 0; g < GROUPS; ++g) {
        groups[g] = g % 2 ? "exercise_stretch" : "everyday_manip";
        for (int s = 0; s < SERIES; ++s)
            values[g * SERIES + s] = 5.0 + 2.7 * g + 9.1 * s;
    }
    const struct pl_bars bars = {.title = "long names",
                                 .y_label = "cm",
                                 .group_count = GROUPS,
                                 .group_name = groups,
                                 .series_count = SERIES,
                                 .series_name = {"a", "b", "c"},
                                 .value = values};
    struct em_error err = {{0}};
    snprintf(path, sizeof path, "%s/bars.png", dir);
    assert_int_equal(pl_write_bars(path, &bars, &err), EM_OK);
    cairo_surface_t *img = cairo_image_surface_create_from_png(path);
    assert_int_equal(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
    const unsigned char *data = cairo_image_surface_get_data(img);
    const int stride = cairo_image_surface_get_stride(img);
    /* The plotting area's x range (plot.h's page less the axis labels and the legend). */
    const int left = 90, right = PL_WIDTH - 230;
    int axis_y = -1;
    for (int y = PL_HEIGHT - 1; y > PL_HEIGHT / 2 && axis_y < 0; --y) {
        int dark = 0;
        for (int x = left + 10; x < right - 10; ++x)
            dark += dark_at(data, stride, x, y);
        if (dark > (right - left - 20) * 9 / 10)
            axis_y = y;
    }
    assert_true(axis_y > 0);
    const double group_w = (double)(right - left) / GROUPS;
    /* Between two names, a gap wider than the gaps between a word's letters. */
    const int gap_min = 6;
    int band_ink = 0;
    for (int g = 0; g + 1 < GROUPS; ++g) {
        int blank_run = 0, widest_gap = 0;
        for (int x = (int)(left + group_w * (g + 0.5)); x < (int)(left + group_w * (g + 1.5));
             ++x) {
            bool ink = false;
            for (int y = axis_y + 6; y < axis_y + 22; ++y)
                ink = ink || inked_at(data, stride, x, y);
            band_ink += ink;
            blank_run = ink ? 0 : blank_run + 1;
            widest_gap = blank_run > widest_gap ? blank_run : widest_gap;
        }
        if (widest_gap < gap_min)
            fail_msg("the names of groups %d and %d run into each other (gap %d px)", g, g + 1,
                     widest_gap);
    }
    assert_true(band_ink > 0); /* the names are there */
    for (int x = 0; x < PL_WIDTH; ++x)
        if (inked_at(data, stride, x, PL_HEIGHT - 1))
            fail_msg("a name is cut off at the page's foot (x %d)", x);
    cairo_surface_destroy(img);
    unlink(path);
    rmdir(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lines_plot_draws_its_series_and_bands),
        cmocka_unit_test(bars_and_heatmap_fill_their_area),
        cmocka_unit_test(long_group_names_keep_apart),
        cmocka_unit_test(eval_plot_writes_the_clip_and_category_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
