/*
 * The trainer's corpus (`embody train`): the clip folders and their MANIFEST.tsv (person,
 * as CMU's subject number or HDM05's actor, and category of each clip), the data set of feature and
 * target rows every clip adds, the people held out, and the split of the rows into training,
 * validation and seen rows.
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
    pr_person_of_file(name, c->person, sizeof c->person);
    snprintf(c->category, sizeof c->category, "%s", "?");
    l->count++;
    return true;
}

/* The columns of a MANIFEST.tsv that the trainer reads (-1: none). */
struct manifest_columns {
    int count, file, subject, actor, category, klass; /* klass: HDM05's "class" */
};

/* Splits `line` at its tabs in place; returns the number of fields (at most `max`). */
static int
split_fields(char *line, char **field, int max)
{
    int n = 0;
    for (char *p = line; n < max;) {
        field[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

/* The header line: a "file" column, at most one of "subject" (CMU's numbers) and "actor"
 * (HDM05's names) for the person, and "category" (or HDM05's "class"). */
static enum em_result
read_header(const char *path, char **field, int n, struct manifest_columns *out,
            struct em_error *err)
{
    *out = (struct manifest_columns){n, -1, -1, -1, -1, -1};
    for (int i = 0; i < n; ++i) {
        int *slot = strcmp(field[i], "file") == 0       ? &out->file
                    : strcmp(field[i], "subject") == 0  ? &out->subject
                    : strcmp(field[i], "actor") == 0    ? &out->actor
                    : strcmp(field[i], "category") == 0 ? &out->category
                    : strcmp(field[i], "class") == 0    ? &out->klass
                                                        : NULL;
        if (slot && *slot >= 0)
            return em_fail(err, EM_ERROR_PARSE, "%s:1: column %d: a second column named \"%s\"",
                           path, i + 1, field[i]);
        if (slot)
            *slot = i;
    }
    if (out->file < 0)
        return em_fail(err, EM_ERROR_PARSE, "%s:1: no column named \"file\"", path);
    if (out->category < 0)
        out->category = out->klass; /* HDM05's action classes as categories */
    if (out->subject >= 0 && out->actor >= 0)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s:1: columns \"subject\" and \"actor\" both; expected one of them "
                       "for the person",
                       path);
    return EM_OK;
}

/* The person of one manifest line ("" without a person column): its lab from the clip's
 * file name, its ID from the subject or actor column, checked. */
static enum em_result
row_person(const char *path, int line_no, char **field, const struct manifest_columns *col,
           char *out, size_t size, struct em_error *err)
{
    out[0] = '\0';
    const int c = col->subject >= 0 ? col->subject : col->actor;
    if (c < 0)
        return EM_OK;
    const char *id = field[c];
    const bool number = id[0] && strspn(id, "0123456789") == strlen(id);
    if (col->subject >= 0 && !number)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s:%d: column %d (subject): \"%s\" is not a subject number", path, line_no,
                       c + 1, id);
    char from_name[PR_PERSON_MAX];
    pr_person_of_file(field[col->file], from_name, sizeof from_name);
    char *colon = strchr(from_name, ':');
    if (!colon)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s:%d: column %d (file): \"%s\" is not named LAB_PERSON_... (such as "
                       "cmu_05_01.bvh), so its lab is not known",
                       path, line_no, col->file + 1, field[col->file]);
    *colon = '\0';
    if (!pr_person_make(from_name, id, out, size))
        return em_fail(err, EM_ERROR_PARSE,
                       "%s:%d: column %d (%s): \"%s\" is not a person (1 to 9 letters, digits, "
                       "'-' or '.')",
                       path, line_no, c + 1, col->subject >= 0 ? "subject" : "actor", id);
    return EM_OK;
}

/* One line of the manifest: checked, then its person and category given to the clip of
 * that name (none: a clip that is not in the folder is not used). */
static enum em_result
read_row(const char *path, int line_no, char **field, int n, const struct manifest_columns *col,
         struct clip_list *l, int first, struct em_error *err)
{
    if (n != col->count)
        return em_fail(err, EM_ERROR_PARSE, "%s:%d: %d columns; the header (line 1) has %d", path,
                       line_no, n, col->count);
    if (!field[col->file][0])
        return em_fail(err, EM_ERROR_PARSE, "%s:%d: column %d (file) is empty", path, line_no,
                       col->file + 1);
    char person[PR_PERSON_MAX];
    enum em_result r = row_person(path, line_no, field, col, person, sizeof person, err);
    for (int i = first; i < l->count && r == EM_OK; ++i) {
        if (strcmp(l->e[i].name, field[col->file]) != 0)
            continue;
        if (person[0])
            snprintf(l->e[i].person, sizeof l->e[i].person, "%s", person);
        if (col->category >= 0 && field[col->category][0])
            snprintf(l->e[i].category, sizeof l->e[i].category, "%s", field[col->category]);
    }
    return r;
}

/* Fills each clip's person and category from the folder's MANIFEST.tsv (columns named
 * file, subject or actor, and category in its first line), where there is one; every
 * line is checked, an error naming the file, line and column. */
static enum em_result
read_manifest(const char *dir, struct clip_list *l, int first, struct em_error *err)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return EM_OK;
    char line[4096];
    struct manifest_columns col = {0};
    int line_no = 0;
    enum em_result r = EM_OK;
    while (r == EM_OK && fgets(line, sizeof line, f)) {
        line_no++;
        const size_t len = strcspn(line, "\r\n");
        if (!line[len] && !feof(f)) {
            r = em_fail(err, EM_ERROR_PARSE, "%s:%d: line longer than %d characters", path, line_no,
                        (int)sizeof line - 2);
            break;
        }
        line[len] = '\0';
        if (line_no > 1 && !line[0])
            continue;
        char *field[32];
        const int n = split_fields(line, field, 32);
        r = line_no == 1 ? read_header(path, field, n, &col, err)
                         : read_row(path, line_no, field, n, &col, l, first, err);
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
    for (const char *p = text; *p;) {
        const size_t len = strcspn(p, ",");
        if (out->count == PR_MAX_HOLDOUT_SUBJECTS)
            return em_fail(err, EM_ERROR_LIMIT, "--holdout: more than %d people",
                           PR_MAX_HOLDOUT_SUBJECTS);
        if (!pr_person_token(p, len, out->person[out->count], PR_PERSON_MAX))
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "--holdout: expected people separated by commas: subject numbers "
                           "(\"02,07\"), names (\"bd\") or LAB:PERSON (\"cmu:05,hdm05:bd\"), "
                           "or none, got \"%s\"",
                           text);
        out->count++;
        p += len;
        if (*p == ',' && !*++p)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--holdout: \"%s\" ends with a comma",
                           text);
    }
    return EM_OK;
}

static bool
held_out(const struct holdout *h, const char *person)
{
    for (int i = 0; i < h->count; ++i)
        if (pr_person_matches(person, h->person[i]))
            return true;
    return false;
}

/* Fails when a person named without the lab ("05") is a person of two labs' clips. */
static enum em_result
check_unambiguous(const struct clip_list *l, const struct holdout *h, struct em_error *err)
{
    for (int k = 0; k < h->count; ++k) {
        const char *first = NULL;
        for (int i = 0; i < l->count; ++i) {
            const char *person = l->e[i].person;
            if (!pr_person_matches(person, h->person[k]) || (first && !strcmp(first, person)))
                continue;
            if (first)
                return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                               "--holdout: \"%s\" is both %s and %s; name one as LAB:PERSON",
                               h->person[k], first, person);
            first = person;
        }
    }
    return EM_OK;
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
        pr_report_line(o, "[%d/%d] %s: %s, %s, %.2f min, %ld samples%s%.0ld%s", i + 1,
                       out->list.count, e->name, e->person[0] ? e->person : "person unknown",
                       e->category, out->minutes[i], out->data.count - before,
                       skipped ? "; left out for glitches: " : "", skipped, skipped ? " rows" : "");
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
    enum em_result r = check_unambiguous(&c->list, hold, err);
    if (r != EM_OK)
        return r;
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
        const bool is_val = held_out(hold, c->list.e[c->data.clip[i]].person);
        if (is_val && c->data.plain[i])
            out->val[out->val_count++] = i;
        else if (!is_val && !c->data.plain[i]) {
            if (augmented++ % stride == 0)
                out->train[out->train_count++] = i;
        } else if (!is_val)
            out->seen[out->seen_count++] = i;
    }
    for (int k = 0; k < c->list.count; ++k) {
        if (held_out(hold, c->list.e[k].person)) {
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
