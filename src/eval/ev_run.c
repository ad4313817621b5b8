/*
 * A whole evaluation run over a folder of clips: the clip files in name order, their
 * categories from MANIFEST.tsv, each clip loaded, reconstructed by every method and
 * scored, then the means over clips, by category, and the timing of body_update.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "eval/eval.h"
#include "prior/pr_training.h"
#include "util/u_path.h"
#include "util/u_text.h"
#include "util/u_time.h"

/* EMBODY_SOURCE_DIR and EMBODY_SHARED_DIR (../shared beside it) are set by the build
 * (src/eval/CMakeLists.txt). */
#define DEFAULT_SHARED_DIR EMBODY_SHARED_DIR "/mocap"
#define DEFAULT_REPO_DIR EMBODY_SOURCE_DIR "/tests/data/mocap"
#define OTHER_CATEGORY "other"

void
ev_options_resolve(const struct ev_options *options, struct ev_options *out_resolved)
{
    *out_resolved = *options;
    if (!out_resolved->clip_dir || !out_resolved->clip_dir[0])
        out_resolved->clip_dir =
            u_path_exists(DEFAULT_SHARED_DIR) ? DEFAULT_SHARED_DIR : DEFAULT_REPO_DIR;
    if (!out_resolved->json_path || !out_resolved->json_path[0])
        out_resolved->json_path = "eval.json";
    if (out_resolved->modes == 0)
        out_resolved->modes = EV_MODE_BOTH;
    if (out_resolved->frame_limit < 0)
        out_resolved->frame_limit = 0;
}

/* ---- The clip files ---- */

bool
ev_clip_of_subjects(const char *file, const char *subjects)
{
    if (!subjects || !subjects[0])
        return true;
    char person[PR_PERSON_MAX], token[PR_PERSON_MAX];
    pr_person_of_file(file, person, sizeof person);
    if (!person[0])
        return false;
    for (const char *p = subjects; *p;) {
        const size_t len = strcspn(p, ",");
        if (pr_person_token(p, len, token, sizeof token) && pr_person_matches(person, token))
            return true;
        p += p[len] ? len + 1 : len;
    }
    return false;
}

struct name_list {
    int count;
    char **names;
};

static void
name_list_fini(struct name_list *list)
{
    for (int i = 0; i < list->count; ++i)
        free(list->names[i]);
    free(list->names);
    memset(list, 0, sizeof *list);
}

static bool
is_bvh_name(const char *name)
{
    const size_t n = strlen(name);
    return n > 4 && strcasecmp(name + n - 4, ".bvh") == 0;
}

static int
compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular *.bvh files of `dir`, sorted by name. */
static enum em_result
list_clips(const char *dir, const char *subjects, struct name_list *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d)
        return em_fail(err, EM_ERROR_IO, "%s: cannot open the clip folder", dir);
    int capacity = 0;
    enum em_result r = EM_OK;
    for (struct dirent *e = readdir(d); e && r == EM_OK; e = readdir(d)) {
        if (!is_bvh_name(e->d_name) || !ev_clip_of_subjects(e->d_name, subjects))
            continue;
        char path[2048];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (out->count == capacity) {
            capacity = capacity ? capacity * 2 : 32;
            char **grown = realloc(out->names, (size_t)capacity * sizeof *grown);
            if (!grown) {
                r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", dir);
                break;
            }
            out->names = grown;
        }
        out->names[out->count] = strdup(e->d_name);
        if (!out->names[out->count])
            r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", dir);
        else
            out->count++;
    }
    closedir(d);
    if (r == EM_OK && out->count == 0)
        r = em_fail(err, EM_ERROR_IO, "%s: no clips (*.bvh files) in the folder", dir);
    if (r != EM_OK) {
        name_list_fini(out);
        return r;
    }
    qsort(out->names, (size_t)out->count, sizeof *out->names, compare_names);
    return EM_OK;
}

/* ---- Categories from MANIFEST.tsv ---- */

/* file -> category, in the manifest's order. */
struct manifest {
    int count;
    char (*file)[256];
    char (*category)[64];
};

static void
manifest_fini(struct manifest *m)
{
    free(m->file);
    free(m->category);
    memset(m, 0, sizeof *m);
}

#define MANIFEST_MAX_FIELDS 32

/* Splits a line at tabs, in place; returns the field count (at most `max`, and max + 1
 * when there are more). */
static int
split_tabs(char *line, char **fields, int max)
{
    int n = 0;
    for (char *s = line;; ++n) {
        if (n == max)
            return max + 1;
        fields[n] = s;
        char *tab = strchr(s, '\t');
        if (!tab)
            return n + 1;
        *tab = '\0';
        s = tab + 1;
    }
}

static int
find_field(char **fields, int count, const char *name)
{
    for (int i = 0; i < count; ++i)
        if (strcmp(fields[i], name) == 0)
            return i;
    return -1;
}

static enum em_result
manifest_add(struct manifest *m, int *capacity, const char *file, const char *category)
{
    if (m->count == *capacity) {
        const int cap = *capacity ? *capacity * 2 : 32;
        char(*files)[256] = realloc(m->file, (size_t)cap * sizeof *files);
        if (!files)
            return EM_ERROR_OUT_OF_MEMORY;
        m->file = files;
        char(*categories)[64] = realloc(m->category, (size_t)cap * sizeof *categories);
        if (!categories)
            return EM_ERROR_OUT_OF_MEMORY;
        m->category = categories;
        *capacity = cap;
    }
    snprintf(m->file[m->count], sizeof m->file[0], "%s", file);
    snprintf(m->category[m->count], sizeof m->category[0], "%s", category);
    m->count++;
    return EM_OK;
}

static enum em_result
parse_manifest(struct u_text *text, const char *path, struct manifest *out,
               struct em_error *err)
{
    struct u_line_reader lines;
    u_line_reader_init(&lines, text);
    char *fields[MANIFEST_MAX_FIELDS + 1];
    char *line = u_line_next(&lines);
    if (!line)
        return em_fail(err, EM_ERROR_PARSE, "%s: empty; expected a header line naming the "
                                            "columns file and category", path);
    const int columns = split_tabs(line, fields, MANIFEST_MAX_FIELDS);
    if (columns > MANIFEST_MAX_FIELDS)
        return em_fail(err, EM_ERROR_LIMIT, "%s:1: more than %d columns", path,
                       MANIFEST_MAX_FIELDS);
    const int file_col = find_field(fields, columns, "file");
    const int category_col = find_field(fields, columns, "category");
    if (file_col < 0 || category_col < 0)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s:1: expected a tab-separated header with the columns \"file\" and "
                       "\"category\"",
                       path);
    int capacity = 0;
    while ((line = u_line_next(&lines))) {
        if (strspn(line, " \t") == strlen(line))
            continue;
        const int n = split_tabs(line, fields, MANIFEST_MAX_FIELDS);
        if (n != columns)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s:%d: expected %d tab-separated fields (as the header), got %d",
                           path, lines.line_number, columns, n);
        const char *file = fields[file_col], *category = fields[category_col];
        if (!file[0] || !category[0] || strlen(file) >= 256 || strlen(category) >= 64)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s:%d: expected a file name and a category (under 64 characters), "
                           "got \"%.100s\" and \"%.100s\"",
                           path, lines.line_number, file, category);
        if (manifest_add(out, &capacity, file, category) != EM_OK)
            return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    return EM_OK;
}

/* Reads DIR/MANIFEST.tsv (or DESCRIPTIONS.tsv, which has the same two columns); none is
 * fine (every clip is "other"). */
static enum em_result
load_manifest(const char *dir, struct manifest *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    static const char *const names[] = {"MANIFEST.tsv", "DESCRIPTIONS.tsv"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (!u_path_exists(path))
            continue;
        struct u_text text;
        enum em_result r = u_text_read_file(path, &text, err);
        if (r == EM_OK) {
            r = parse_manifest(&text, path, out, err);
            u_text_fini(&text);
        }
        if (r != EM_OK)
            manifest_fini(out);
        return r;
    }
    return EM_OK;
}

static const char *
manifest_category(const struct manifest *m, const char *file)
{
    for (int i = 0; i < m->count; ++i)
        if (strcmp(m->file[i], file) == 0)
            return m->category[i];
    return OTHER_CATEGORY;
}

/* ---- Running the clips ---- */

static void
clip_failed(struct ev_clip_result *out, const struct em_error *err)
{
    out->ok = false;
    snprintf(out->error, sizeof out->error, "%s", err->message);
}

/* Tells the observer of a clip's known-body motion; keeps the first failure. */
static void
observe_clip(const struct ev_options *opt, const struct ev_clip *clip, enum ev_method m,
             const struct ev_motion *ours, char *plot_error)
{
    struct em_error err = {{0}};
    if (m == EV_KNOWN_BODY && opt->observer && opt->observer->clip && opt->plot_dir &&
        opt->observer->clip(opt, clip, ours, &err) != EM_OK && !plot_error[0])
        snprintf(plot_error, EM_ERROR_MESSAGE_MAX, "%s", err.message);
}

static void
run_clip(const char *path, const struct ev_options *opt, struct ev_timing *timing,
         struct ev_clip_result *out, char *plot_error)
{
    struct em_error err = {{0}};
    struct ev_clip clip;
    if (ev_clip_load_for(path, opt, &clip, &err) != EM_OK) {
        clip_failed(out, &err);
        return;
    }
    if (ev_trackers_select(&clip, opt->trackers, &err) != EM_OK ||
        flt_apply_frames(&opt->faults, clip.stream.frames, clip.stream.frame_count, &err) !=
            EM_OK) {
        clip_failed(out, &err);
        ev_clip_fini(&clip);
        return;
    }
    out->ok = true;
    out->source_frames = clip.source_frame_count;
    out->frames = clip.stream.frame_count;
    out->fps = clip.truth.fps;
    out->height_m = clip.height_m;
    out->truth_jitter_m_s3 = ev_jitter_m_s3(&clip.truth);
    for (int m = 0; m < EV_METHOD_COUNT && out->ok; ++m) {
        out->update_median_us[m] = out->update_mean_us[m] = (double)NAN;
        if (m != EV_DO_NOTHING && !(opt->modes & (1u << m)))
            continue;
        struct ev_motion ours;
        const long first = timing[m].count;
        struct ev_checks *checks = m == EV_DO_NOTHING ? NULL : &out->checks[m];
        if (checks)
            ev_checks_init(checks);
        if (ev_clip_reconstruct_stream(&clip, &clip.stream, (enum ev_method)m, opt->prior, &ours,
                                       &timing[m], checks, &err) != EM_OK ||
            (checks && ev_clip_sensitivity(&clip, (enum ev_method)m, opt->prior, &ours, checks,
                                           &err) != EM_OK) ||
            (checks && ev_clip_recovery(&clip, (enum ev_method)m, opt->prior, &ours,
                                        &checks->body, &err) != EM_OK) ||
            (checks && ev_clip_turn_in_place(&clip, (enum ev_method)m, opt->prior,
                                             &checks->body, &err) != EM_OK) ||
            (checks && ev_clip_hand_up(&clip, (enum ev_method)m, opt->prior, &checks->body,
                                       &err) != EM_OK)) {
            clip_failed(out, &err);
        } else {
            ev_score(&ours, &clip.truth, &out->scores[m]);
            out->has[m] = true;
            observe_clip(opt, &clip, (enum ev_method)m, &ours, plot_error);
            const long count = timing[m].count - first;
            out->update_median_us[m] = ev_timing_median_us(&timing[m], first, count);
            out->update_mean_us[m] = ev_timing_mean_us(&timing[m], first, count);
        }
        ev_motion_fini(&ours);
    }
    ev_clip_fini(&clip);
}

/* ---- Means ---- */

/* Running sums of one mean: a value that is NaN (not defined for a clip) is left out. */
struct mean_sum {
    double sum;
    int count;
};

static void
mean_add(struct mean_sum *s, double v)
{
    if (isfinite(v)) {
        s->sum += v;
        s->count++;
    }
}

static double
mean_of(const struct mean_sum *s)
{
    return s->count > 0 ? s->sum / s->count : (double)NAN;
}

/* The means over the clips that ran, of one category (NULL: all). */
static void
compute_means(const struct ev_report *r, const char *category, struct ev_means *out)
{
    struct mean_sum mpjpe[EV_METHOD_COUNT][EV_GROUP_COUNT], jitter[EV_METHOD_COUNT],
        skate[EV_METHOD_COUNT], joint[EV_METHOD_COUNT][EV_JOINT_COUNT], truth_jitter = {0},
        lag[EV_METHOD_COUNT];
    long planted[EV_METHOD_COUNT] = {0};
    memset(mpjpe, 0, sizeof mpjpe);
    memset(joint, 0, sizeof joint);
    memset(jitter, 0, sizeof jitter);
    memset(skate, 0, sizeof skate);
    memset(lag, 0, sizeof lag);
    memset(out, 0, sizeof *out);
    for (int c = 0; c < r->clip_count; ++c) {
        const struct ev_clip_result *clip = &r->clips[c];
        if (!clip->ok || (category && strcmp(clip->category, category) != 0))
            continue;
        out->clip_count++;
        mean_add(&truth_jitter, clip->truth_jitter_m_s3);
        for (int m = 0; m < EV_METHOD_COUNT; ++m) {
            if (!clip->has[m])
                continue;
            for (int g = 0; g < EV_GROUP_COUNT; ++g)
                mean_add(&mpjpe[m][g], clip->scores[m].mpjpe_cm[g]);
            for (int j = 0; j < EV_JOINT_COUNT; ++j)
                mean_add(&joint[m][j], clip->scores[m].joint_mpjpe_cm[j]);
            mean_add(&jitter[m], clip->scores[m].jitter_m_s3);
            mean_add(&skate[m], clip->scores[m].foot_skate_cm);
            mean_add(&lag[m], clip->scores[m].lag_ms);
            planted[m] += clip->scores[m].planted_count;
        }
    }
    out->truth_jitter_m_s3 = mean_of(&truth_jitter);
    for (int m = 0; m < EV_METHOD_COUNT; ++m) {
        for (int g = 0; g < EV_GROUP_COUNT; ++g)
            out->scores[m].mpjpe_cm[g] = mean_of(&mpjpe[m][g]);
        for (int j = 0; j < EV_JOINT_COUNT; ++j)
            out->scores[m].joint_mpjpe_cm[j] = mean_of(&joint[m][j]);
        out->scores[m].jitter_m_s3 = mean_of(&jitter[m]);
        out->scores[m].foot_skate_cm = mean_of(&skate[m]);
        out->scores[m].lag_ms = mean_of(&lag[m]);
        out->scores[m].planted_count = planted[m];
    }
}

/* Categories in the manifest's order, then any others in clip order. */
static enum em_result
collect_categories(struct ev_report *r, const struct manifest *m)
{
    r->categories = calloc((size_t)r->clip_count, sizeof *r->categories);
    if (!r->categories)
        return EM_ERROR_OUT_OF_MEMORY;
    for (int pass = 0; pass < 2; ++pass) {
        const int n = pass == 0 ? m->count : r->clip_count;
        for (int i = 0; i < n; ++i) {
            const char *name = pass == 0 ? m->category[i] : r->clips[i].category;
            bool used = false, known = false;
            for (int c = 0; c < r->clip_count; ++c)
                used = used || (r->clips[c].ok && strcmp(r->clips[c].category, name) == 0);
            for (int k = 0; k < r->category_count; ++k)
                known = known || strcmp(r->categories[k].name, name) == 0;
            if (!used || known)
                continue;
            struct ev_category *cat = &r->categories[r->category_count++];
            snprintf(cat->name, sizeof cat->name, "%s", name);
            compute_means(r, cat->name, &cat->means);
        }
    }
    return EM_OK;
}


static void
summarize_timing(const struct ev_timing *t, struct ev_timing_summary *out)
{
    out->frames = t->count;
    out->median_us = ev_timing_median_us(t, 0, t->count);
    out->mean_us = ev_timing_mean_us(t, 0, t->count);
    out->p99_us = ev_timing_percentile_us(t, 0, t->count, 0.99);
}

/* Every body_update duration of the run, whatever the mode. */
static enum em_result
merge_timings(const struct ev_timing *timing, struct ev_timing *out)
{
    memset(out, 0, sizeof *out);
    for (int m = 0; m < EV_METHOD_COUNT; ++m)
        for (long i = 0; i < timing[m].count; ++i)
            if (ev_timing_add(out, timing[m].us[i]) != EM_OK)
                return EM_ERROR_OUT_OF_MEMORY;
    return EM_OK;
}

static enum em_result
run_clips(const struct name_list *files, const struct manifest *manifest,
          struct ev_timing *timing, struct ev_report *r, struct em_error *err)
{
    r->clips = calloc((size_t)files->count, sizeof *r->clips);
    if (!r->clips)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    r->clip_count = files->count;
    for (int i = 0; i < files->count; ++i) {
        struct ev_clip_result *clip = &r->clips[i];
        snprintf(clip->file, sizeof clip->file, "%s", files->names[i]);
        snprintf(clip->category, sizeof clip->category, "%s",
                 manifest_category(manifest, files->names[i]));
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", r->clip_dir, files->names[i]);
        run_clip(path, &r->options, timing, clip, r->plot_error);
        if (!clip->ok)
            r->failed_count++;
        if (r->options.progress)
            r->options.progress(r->options.progress_user, i, files->count, clip);
    }
    return EM_OK;
}

enum em_result
ev_run(const struct ev_options *options, struct ev_report *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    const int64_t start_ns = u_time_now_ns();
    ev_options_resolve(options, &out->options);
    if (strlen(out->options.clip_dir) >= sizeof out->clip_dir)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%.200s...: folder name too long",
                       out->options.clip_dir);
    snprintf(out->clip_dir, sizeof out->clip_dir, "%s", out->options.clip_dir);
    out->options.clip_dir = out->clip_dir;

    struct name_list files;
    enum em_result r = list_clips(out->clip_dir, out->options.subjects, &files, err);
    if (r != EM_OK)
        return r;
    struct manifest manifest;
    struct em_error manifest_err = {{0}};
    if (load_manifest(out->clip_dir, &manifest, &manifest_err) != EM_OK)
        snprintf(out->manifest_error, sizeof out->manifest_error, "%s", manifest_err.message);

    struct ev_timing timing[EV_METHOD_COUNT], all;
    memset(timing, 0, sizeof timing);
    memset(&all, 0, sizeof all);
    r = run_clips(&files, &manifest, timing, out, err);
    if (r == EM_OK) {
        compute_means(out, NULL, &out->means);
        if (collect_categories(out, &manifest) != EM_OK ||
            merge_timings(timing, &all) != EM_OK)
            r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    if (r == EM_OK) {
        for (int m = 0; m < EV_METHOD_COUNT; ++m)
            summarize_timing(&timing[m], &out->timing[m]);
        summarize_timing(&all, &out->timing_all);
        ev_turn_in_place_check(&out->turn);
    }
    for (int m = 0; m < EV_METHOD_COUNT; ++m)
        ev_timing_fini(&timing[m]);
    ev_timing_fini(&all);
    manifest_fini(&manifest);
    name_list_fini(&files);
    out->elapsed_s = (double)(u_time_now_ns() - start_ns) * 1e-9;
    return r;
}

void
ev_report_fini(struct ev_report *report)
{
    free(report->clips);
    free(report->categories);
    memset(report, 0, sizeof *report);
}

bool
ev_report_exceeds_bound(const struct ev_report *report)
{
    const double bound = report->options.max_mean_mpjpe_cm;
    if (!(bound > 0.0))
        return false;
    const double mean = report->means.scores[EV_KNOWN_BODY].mpjpe_cm[EV_GROUP_ALL];
    return !(mean <= bound);
}
