/*
 * The trainer's corpus (`embody train`): the clip folders and their MANIFEST.tsv (subject
 * and category of each clip), the data set of feature and target rows every clip adds, the
 * people held out, and the split of the rows into training, validation and seen rows.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pr_learning.h"

static void
dataset_fini(struct dataset *d)
{
    free(d->x);
    free(d->y);
    free(d->scale);
    free(d->clip);
    free(d->plain);
    memset(d, 0, sizeof *d);
}

/* ---- Clips ---- */

static void
clip_list_fini(struct clip_list *l)
{
    for (int i = 0; i < l->count; ++i) {
        free(l->e[i].path);
        free(l->e[i].name);
    }
    free(l->e);
    memset(l, 0, sizeof *l);
}

static int
compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The subject of "cmu_SS_TT.bvh" (SS; TT may be any text), or -1. */
static int
clip_subject(const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    int subject = -1;
    if (sscanf(base, "cmu_%d_", &subject) == 1 && subject >= 0)
        return subject;
    return -1;
}

/* The *.bvh names in `dir` (sorted), with `prefix` ("sub/") before each. */
static enum em_result
list_folder(const char *dir, const char *prefix, char ***out_names, int *out_count,
            struct em_error *err)
{
    *out_names = NULL;
    *out_count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return em_fail(err, EM_ERROR_IO, "%s: cannot open the clip folder", dir);
    int cap = 0, n = 0;
    char **names = NULL;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        const size_t len = strlen(e->d_name);
        if (len < 5 || strcasecmp(e->d_name + len - 4, ".bvh") != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, (size_t)cap * sizeof *grown);
            if (!grown)
                break;
            names = grown;
        }
        const size_t size = strlen(prefix) + len + 1;
        if ((names[n] = malloc(size)) != NULL)
            snprintf(names[n++], size, "%s%s", prefix, e->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(names, (size_t)n, sizeof *names, compare_names);
    *out_names = names;
    *out_count = n;
    return EM_OK;
}

static bool
clip_list_add(struct clip_list *l, const char *dir, char *name)
{
    if (l->count == l->capacity) {
        const int cap = l->capacity ? 2 * l->capacity : 256;
        struct clip_entry *grown = realloc(l->e, (size_t)cap * sizeof *grown);
        if (!grown)
            return false;
        l->e = grown;
        l->capacity = cap;
    }
    struct clip_entry *c = &l->e[l->count];
    memset(c, 0, sizeof *c);
    const size_t size = strlen(dir) + strlen(name) + 2;
    c->path = malloc(size);
    if (!c->path)
        return false;
    snprintf(c->path, size, "%s/%s", dir, name);
    c->name = name;
    c->subject = clip_subject(name);
    snprintf(c->category, sizeof c->category, "%s", "?");
    l->count++;
    return true;
}

/* Fills subject and category from the folder's MANIFEST.tsv (columns named file,
 * subject and category in its first line), where there is one. */
static enum em_result
read_manifest(const char *dir, struct clip_list *l, int first, struct em_error *err)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return EM_OK;
    char line[4096];
    int col_file = -1, col_subject = -1, col_category = -1, line_no = 0;
    enum em_result r = EM_OK;
    while (r == EM_OK && fgets(line, sizeof line, f)) {
        line_no++;
        line[strcspn(line, "\r\n")] = '\0';
        char *field[32];
        int n = 0;
        for (char *p = line; n < 32;) {
            field[n++] = p;
            char *tab = strchr(p, '\t');
            if (!tab)
                break;
            *tab = '\0';
            p = tab + 1;
        }
        if (line_no == 1) {
            for (int i = 0; i < n; ++i) {
                if (strcmp(field[i], "file") == 0)
                    col_file = i;
                else if (strcmp(field[i], "subject") == 0)
                    col_subject = i;
                else if (strcmp(field[i], "category") == 0)
                    col_category = i;
            }
            if (col_file < 0)
                r = em_fail(err, EM_ERROR_PARSE, "%s:1: no column named \"file\"", path);
            continue;
        }
        if (n <= col_file || !field[col_file][0])
            continue;
        for (int i = first; i < l->count; ++i) {
            if (strcmp(l->e[i].name, field[col_file]) != 0)
                continue;
            if (col_subject >= 0 && col_subject < n) {
                char *end = NULL;
                const long v = strtol(field[col_subject], &end, 10);
                if (end == field[col_subject] || *end || v < 0 || v > 100000)
                    r = em_fail(err, EM_ERROR_PARSE,
                                "%s:%d: subject \"%s\" is not a subject number", path, line_no,
                                field[col_subject]);
                else
                    l->e[i].subject = (int)v;
            }
            if (col_category >= 0 && col_category < n && field[col_category][0])
                snprintf(l->e[i].category, sizeof l->e[i].category, "%s", field[col_category]);
        }
    }
    fclose(f);
    return r;
}

/* The clips of one folder: its *.bvh files and those of its subfolders, names sorted. */
static enum em_result
list_clips(const char *dir, struct clip_list *out, struct em_error *err)
{
    const int first = out->count;
    char **names = NULL;
    int n = 0;
    enum em_result r = list_folder(dir, "", &names, &n, err);
    for (int i = 0; i < n; ++i)
        if (!clip_list_add(out, dir, names[i]))
            free(names[i]);
    free(names);
    if (r != EM_OK)
        return r;
    DIR *d = opendir(dir);
    char **subs = NULL;
    int sub_count = 0, sub_cap = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        char sub[2048];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *probe = opendir(sub);
        if (!probe)
            continue;
        closedir(probe);
        if (sub_count == sub_cap) {
            sub_cap = sub_cap ? 2 * sub_cap : 16;
            char **grown = realloc(subs, (size_t)sub_cap * sizeof *grown);
            if (!grown)
                break;
            subs = grown;
        }
        subs[sub_count++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    if (sub_count > 1)
        qsort(subs, (size_t)sub_count, sizeof *subs, compare_names);
    for (int s = 0; s < sub_count; ++s) {
        char sub[2048], prefix[1024];
        snprintf(sub, sizeof sub, "%s/%s", dir, subs[s]);
        snprintf(prefix, sizeof prefix, "%s/", subs[s]);
        if (list_folder(sub, prefix, &names, &n, err) == EM_OK) {
            for (int i = 0; i < n; ++i)
                if (!clip_list_add(out, dir, names[i]))
                    free(names[i]);
            free(names);
        }
        free(subs[s]);
    }
    free(subs);
    if (out->count == first)
        return em_fail(err, EM_ERROR_IO, "%s: no clips (*.bvh files) in the folder", dir);
    return read_manifest(dir, out, first, err);
}

enum em_result
pr_parse_holdout(const char *text, struct holdout *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    if (strcmp(text, "none") == 0)
        return EM_OK;
    const char *p = text;
    while (*p) {
        char *end = NULL;
        const long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 100000 || (*end && *end != ','))
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "--holdout: expected subject numbers separated by commas (\"02,07\") "
                           "or none, got \"%s\"",
                           text);
        if (out->count == PR_MAX_HOLDOUT_SUBJECTS)
            return em_fail(err, EM_ERROR_LIMIT, "--holdout: more than %d subjects",
                           PR_MAX_HOLDOUT_SUBJECTS);
        out->subject[out->count++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return EM_OK;
}

static bool
held_out(const struct holdout *h, int subject)
{
    for (int i = 0; i < h->count; ++i)
        if (h->subject[i] == subject)
            return true;
    return false;
}

/* Every clip of every folder, in folder order then name order. */
static enum em_result
list_all_clips(const struct pr_train_options *o, struct clip_list *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    enum em_result r = EM_OK;
    if (o->clip_dir)
        r = list_clips(o->clip_dir, out, err);
    for (int i = 0; i < o->more_clip_dir_count && r == EM_OK; ++i)
        r = list_clips(o->more_clip_dirs[i], out, err);
    if (r == EM_OK && out->count == 0)
        r = em_fail(err, EM_ERROR_INVALID_ARGUMENT, "train: no clip folder given");
    if (r != EM_OK)
        clip_list_fini(out);
    return r;
}

void
pr_corpus_fini(struct corpus *c)
{
    clip_list_fini(&c->list);
    dataset_fini(&c->data);
    free(c->minutes);
    memset(c, 0, sizeof *c);
}

enum em_result
pr_load_corpus(const struct pr_train_options *o, struct rng *r, struct corpus *out,
               struct em_error *err)
{
    memset(out, 0, sizeof *out);
    enum em_result res = list_all_clips(o, &out->list, err);
    if (res != EM_OK)
        return res;
    const int count =
        o->max_clips > 0 && o->max_clips < out->list.count ? o->max_clips : out->list.count;
    out->list.count = count < out->list.count ? count : out->list.count;
    out->minutes = calloc((size_t)out->list.count, sizeof *out->minutes);
    if (!out->minutes)
        res = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
    for (int i = 0; i < out->list.count && res == EM_OK; ++i) {
        const struct clip_entry *e = &out->list.e[i];
        const long before = out->data.count;
        long skipped = 0;
        res = pr_add_clip(o, e, i, r, &out->data, &out->minutes[i], &skipped, err);
        if (res != EM_OK)
            break;
        out->glitch_rows += skipped;
        pr_report_line(o, "[%d/%d] %s: subject %d, %s, %.2f min, %ld samples%s%.0ld%s", i + 1,
                       out->list.count, e->name, e->subject, e->category, out->minutes[i],
                       out->data.count - before, skipped ? "; left out for glitches: " : "",
                       skipped, skipped ? " rows" : "");
    }
    if (res != EM_OK)
        pr_corpus_fini(out);
    return res;
}

void
pr_split_fini(struct split *s)
{
    free(s->train);
    free(s->val);
    free(s->seen);
    memset(s, 0, sizeof *s);
}

enum em_result
pr_make_split(const struct corpus *c, const struct holdout *hold, int row_stride, struct split *out,
              struct pr_train_report *rep, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    const long n = c->data.count > 0 ? c->data.count : 1;
    out->train = malloc((size_t)n * sizeof *out->train);
    out->val = malloc((size_t)n * sizeof *out->val);
    out->seen = malloc((size_t)n * sizeof *out->seen);
    if (!out->train || !out->val || !out->seen) {
        pr_split_fini(out);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "train: out of memory");
    }
    const long stride = row_stride > 1 ? row_stride : 1;
    long augmented = 0;
    for (long i = 0; i < c->data.count; ++i) {
        const bool is_val = held_out(hold, c->list.e[c->data.clip[i]].subject);
        if (is_val && c->data.plain[i])
            out->val[out->val_count++] = i;
        else if (!is_val && !c->data.plain[i]) {
            if (augmented++ % stride == 0)
                out->train[out->train_count++] = i;
        } else if (!is_val)
            out->seen[out->seen_count++] = i;
    }
    for (int k = 0; k < c->list.count; ++k) {
        if (held_out(hold, c->list.e[k].subject)) {
            rep->validation_clips++;
            rep->validation_minutes += c->minutes[k];
        } else {
            rep->train_clips++;
            rep->train_minutes += c->minutes[k];
        }
    }
    rep->train_samples = out->train_count;
    rep->validation_samples = out->val_count;
    rep->glitch_rows = c->glitch_rows;
    return EM_OK;
}
