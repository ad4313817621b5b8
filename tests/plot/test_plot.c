/*
 * Tests of the plots (src/plot/plot.h): each kind writes a PNG of the stated size that
 * is not blank, with what it draws where it should be; and `embody eval --plot DIR` (the
 * evaluation with the plot observer) writes its figures for a clip of tests/data/mocap.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lines_plot_draws_its_series_and_bands),
        cmocka_unit_test(bars_and_heatmap_fill_their_area),
        cmocka_unit_test(eval_plot_writes_the_clip_and_category_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
