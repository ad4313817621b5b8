/*
 * embody proportions (app_commands.h): the mean body proportions of the people in folders
 * of BVH clips (default ../shared/mocap-train) beside the default humanoid's, as a
 * markdown table, so the default humanoid's proportions can be measured again by anyone.
 *
 * Each person is measured once: a subject's clips share a skeleton (cmu_SUBJECT_TRIAL.bvh),
 * so only the subject's first clip is read; other names count one per file. Every
 * skeleton is read as `embody eval` reads a clip's (st_bvh_to_humanoid, unit scale guessed,
 * its naming convention guessed from the one name map) and measured by
 * sk_humanoid_proportions. Clips retargeted to one figure (the Daz-friendly and iClone
 * conversions put several subjects on one skeleton) repeat a body: a skeleton whose
 * measures all equal an earlier one's is counted once.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/app_args.h"
#include "app/app_commands.h"
#include "embody/skeleton.h"
#include "embody/stream.h"
#include "util/u_path.h"
#include "util/u_time.h"


#define HELP_HINT "embody proportions --help"
#define PREFIX "embody proportions: "
#define DEFAULT_DIR EMBODY_SHARED_DIR "/mocap-train" /* set by src/app/CMakeLists.txt */
#define DEFAULT_REPO_DIR EMBODY_SOURCE_DIR "/tests/data/mocap-train"
#define DEFAULT_SKELETON "config/humanoid.json"
#define MAX_DIRS 8
#define PATH_MAX_LEN 4096
/* The height the table's differences are given at, metres (the default player's). */
#define REFERENCE_HEIGHT_M 1.75
/* Two skeletons whose every fraction agrees this closely, and head heights within
 * SAME_HEAD_M, are one body (a figure several subjects were retargeted to). */
#define SAME_FRACTION 1e-4f
#define SAME_HEAD_M 1e-3f
/* Progress lines on stderr only for runs this long (most take well under it). */
#define PROGRESS_AFTER_S 2.0

enum { OPT_SKELETON = 1, OPT_PEOPLE, OPT_HELP };

static const struct app_arg_spec k_specs[] = {
    {OPT_SKELETON, "skeleton", 0, APP_ARG_VALUE},
    {OPT_PEOPLE, "people", 0, APP_ARG_FLAG},
    {OPT_HELP, "help", 'h', APP_ARG_FLAG},
};
#define SPEC_COUNT ((int)(sizeof k_specs / sizeof k_specs[0]))

static void
print_help(void)
{
    fputs("usage: embody proportions [DIR...] [--skeleton FILE.json] [--people]\n"
          "\n"
          "Measures the body proportions of the people in folders of BVH clips (every\n"
          "*.bvh in each DIR and its subfolders; default ../shared/mocap-train beside the\n"
          "source tree) and prints, as a markdown table, their mean, min and max beside the\n"
          "default humanoid's, each as a fraction of the head joint's height above the floor\n"
          "(the lowest foot or toes joint), in the rest pose (T-pose). One skeleton per\n"
          "person: the first clip of each subject (cmu_SUBJECT_TRIAL.bvh), one per file for\n"
          "other names; a skeleton equal to an earlier one (clips retargeted to one figure)\n"
          "counts once. Skeletons are read as `embody eval` reads them, on any naming\n"
          "convention embody knows (CMU, Daz, 3ds Max, CC3/iClone, Mixamo, ...); files that\n"
          "cannot be measured (unreadable, no toe joints, a rest pose not standing on its\n"
          "feet) are skipped, each with its reason on stderr.\n"
          "\n"
          "  DIR                 a folder of clips (up to 8)\n"
          "  --skeleton FILE     the humanoid to compare with (default config/humanoid.json\n"
          "                      where the program finds its data)\n"
          "  --people            also list every person measured\n"
          "  -h, --help          this help\n"
          "\n"
          "Exit status: 0 done, 2 bad options, a folder that cannot be read or holds no\n"
          "*.bvh, a bad --skeleton, or no skeleton that could be measured.\n",
          stdout);
}

struct proportions_args {
    const char *dirs[MAX_DIRS];
    int dir_count;
    const char *skeleton;
    bool people, help;
};

static enum em_result
apply(void *context, int id, const char *name, const char *value, struct em_error *err)
{
    (void)name;
    struct proportions_args *a = context;
    switch (id) {
    case 0:
        if (a->dir_count == MAX_DIRS)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "at most %d folders (\"%s\" is one more; see %s)", MAX_DIRS, value,
                           HELP_HINT);
        a->dirs[a->dir_count++] = value;
        return EM_OK;
    case OPT_SKELETON: a->skeleton = value; return EM_OK;
    case OPT_PEOPLE: a->people = true; return EM_OK;
    default: a->help = true; return EM_OK;
    }
}

/* ---- The clip files ---- */

struct file_list {
    int count, capacity;
    char **path;
};

static void
file_list_fini(struct file_list *l)
{
    for (int i = 0; i < l->count; ++i)
        free(l->path[i]);
    free(l->path);
    memset(l, 0, sizeof *l);
}

static bool
file_list_add(struct file_list *l, const char *dir, const char *name)
{
    if (l->count == l->capacity) {
        const int cap = l->capacity ? 2 * l->capacity : 256;
        char **grown = realloc(l->path, (size_t)cap * sizeof *grown);
        if (!grown)
            return false;
        l->path = grown;
        l->capacity = cap;
    }
    const size_t size = strlen(dir) + strlen(name) + 2;
    if (!(l->path[l->count] = malloc(size)))
        return false;
    snprintf(l->path[l->count++], size, "%s/%s", dir, name);
    return true;
}

/* True when dir/name is a folder (`folder`) or a regular file (not `folder`); hidden
 * names are left out. */
static bool
is_kind(const char *dir, const char *name, bool folder)
{
    char path[PATH_MAX_LEN];
    struct stat st;
    if (name[0] == '.' || snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return false;
    if (stat(path, &st) != 0)
        return false;
    return folder ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

/* The entries of `dir` that are regular *.bvh files (`want_dirs` false) or folders (true),
 * sorted by name; appended to `out` (folders as "dir/name"). False when out of memory; a
 * subfolder that cannot be read adds nothing (as `embody train`; the folders named on the
 * command line are checked before). */
static bool
list_entries(const char *dir, bool want_dirs, struct file_list *out)
{
    struct dirent **names = NULL;
    const int n = scandir(dir, &names, NULL, alphasort);
    bool ok = true;
    for (int i = 0; i < n; ++i) {
        const char *name = names[i]->d_name;
        const bool pick = want_dirs ? is_kind(dir, name, true)
                                    : app_has_suffix(name, ".bvh") && is_kind(dir, name, false);
        if (ok && pick)
            ok = file_list_add(out, dir, name);
        free(names[i]);
    }
    free(names);
    return ok;
}

/* The *.bvh files of `dir` and of its subfolders (as `embody train` reads them). Fails
 * naming the folder when it cannot be read or holds none. */
static enum em_result
list_clips(const char *dir, struct file_list *out, struct em_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: cannot open the folder: %s", dir,
                       strerror(errno));
    closedir(d);
    const int before = out->count;
    struct file_list subs = {0};
    bool ok = list_entries(dir, false, out) && list_entries(dir, true, &subs);
    for (int s = 0; ok && s < subs.count; ++s)
        ok = list_entries(subs.path[s], false, out);
    file_list_fini(&subs);
    if (!ok)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory listing the clips", dir);
    if (out->count == before)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: no *.bvh files in the folder or its subfolders", dir);
    return EM_OK;
}

/* The subject of "cmu_SUBJECT_TRIAL.bvh" (TRIAL any text), or -1 for other names. */
static int
clip_subject(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int subject = -1, length = 0;
    if (sscanf(base, "cmu_%d_%n", &subject, &length) == 1 && length > 0 && subject >= 0)
        return subject;
    return -1;
}

/* ---- Measuring ---- */

struct person {
    const char *path; /* the file measured (the file list's) */
    int subject;      /* -1: not a cmu_SUBJECT_TRIAL name */
    enum sk_name_map names;
    double unit_scale;
    float height_m; /* standing height, sk_humanoid_height */
    struct sk_proportions p;
    int same_as; /* the earlier person with this skeleton, or -1 */
};

/* Reads one clip's skeleton as `embody eval` does (the naming convention guessed) and
 * measures it. */
static enum em_result
measure_clip(const char *path, struct person *out, struct em_error *err)
{
    struct st_bvh bvh;
    enum em_result r = st_bvh_load(path, &bvh, err);
    if (r != EM_OK)
        return r;
    out->path = path;
    out->subject = clip_subject(path);
    out->names = st_bvh_guess_name_map(&bvh);
    out->unit_scale = st_bvh_guess_unit_scale(&bvh);
    out->same_as = -1;
    struct sk_skeleton sk;
    r = st_bvh_to_humanoid(&bvh, out->names, out->unit_scale, path, &sk, err);
    st_bvh_fini(&bvh);
    if (r != EM_OK)
        return r;
    r = sk_humanoid_check_size(&sk, path, err);
    if (r == EM_OK)
        r = sk_humanoid_proportions(&sk, path, &out->p, err);
    out->height_m = sk_humanoid_height(&sk);
    sk_skeleton_fini(&sk);
    return r;
}

static bool
same_body(const struct sk_proportions *a, const struct sk_proportions *b)
{
    if (fabsf(a->head_height_m - b->head_height_m) > SAME_HEAD_M)
        return false;
    for (int m = 0; m < SK_MEASURE_COUNT; ++m)
        if (fabsf(a->fraction[m] - b->fraction[m]) > SAME_FRACTION)
            return false;
    return true;
}

/* What the run found: the people, and what became of every file. */
struct survey {
    struct person *person; /* every skeleton measured, repeats included */
    int person_count;
    int *subject_seen; /* the subjects whose first clip was tried */
    int subject_count;
    int files, skipped;
    int more_clips; /* later clips of a subject already tried */
    int bodies;     /* people whose skeleton no earlier one has */
};

/* True when the subject's first clip was tried already; else notes this one as it. */
static bool
subject_tried(struct survey *s, int subject)
{
    if (subject < 0)
        return false;
    for (int i = 0; i < s->subject_count; ++i)
        if (s->subject_seen[i] == subject)
            return true;
    s->subject_seen[s->subject_count++] = subject;
    return false;
}

/* Measures one file into the survey, or says on stderr why it was skipped. */
static void
survey_file(struct survey *s, const char *path)
{
    if (subject_tried(s, clip_subject(path))) {
        s->more_clips++;
        return;
    }
    struct person *p = &s->person[s->person_count];
    struct em_error err = {{0}};
    if (measure_clip(path, p, &err) != EM_OK) {
        fprintf(stderr, PREFIX "skipped %s\n", err.message);
        s->skipped++;
        return;
    }
    for (int i = 0; i < s->person_count && p->same_as < 0; ++i)
        if (s->person[i].same_as < 0 && same_body(&s->person[i].p, &p->p))
            p->same_as = i;
    if (p->same_as >= 0)
        fprintf(stderr,
                PREFIX "%s has the same skeleton as %s (clips retargeted to one figure): "
                       "counted once\n",
                path, s->person[p->same_as].path);
    else
        s->bodies++;
    s->person_count++;
}

static enum em_result
survey_files(const struct file_list *files, struct survey *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    out->files = files->count;
    out->person = calloc((size_t)files->count, sizeof *out->person);
    out->subject_seen = calloc((size_t)files->count, sizeof *out->subject_seen);
    if (!out->person || !out->subject_seen)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "out of memory");
    const int64_t start = u_time_now_ns();
    for (int i = 0; i < files->count; ++i) {
        survey_file(out, files->path[i]);
        const double seconds = (double)(u_time_now_ns() - start) * 1e-9;
        if (seconds > PROGRESS_AFTER_S && (i + 1) % 10 == 0)
            fprintf(stderr, PREFIX "%d of %d files, %d people (%.0f s)\n", i + 1, files->count,
                    out->bodies, seconds);
    }
    if (out->bodies == 0)
        return em_fail(err, EM_ERROR_PARSE,
                       "no skeleton could be measured: %d files, %d skipped (why: above)",
                       out->files, out->skipped);
    return EM_OK;
}

static void
survey_fini(struct survey *s)
{
    free(s->person);
    free(s->subject_seen);
    memset(s, 0, sizeof *s);
}

/* ---- The table ---- */

struct stats {
    double mean, min, max;
};

/* Mean, min and max of one measure over the distinct bodies. */
static struct stats
measure_stats(const struct survey *s, enum sk_measure m)
{
    struct stats st = {0.0, (double)INFINITY, -(double)INFINITY};
    double sum = 0.0;
    for (int i = 0; i < s->person_count; ++i) {
        if (s->person[i].same_as >= 0)
            continue;
        const double v = (double)s->person[i].p.fraction[m];
        sum += v;
        st.min = fmin(st.min, v);
        st.max = fmax(st.max, v);
    }
    st.mean = sum / s->bodies;
    return st;
}

static void
print_heading(const struct proportions_args *a, const struct survey *s, const char *skeleton_path,
              double def_head_175_m)
{
    char tidy[PATH_MAX_LEN];
    printf("Body proportions of %d %s, read from", s->bodies, s->bodies == 1 ? "person" : "people");
    for (int i = 0; i < a->dir_count; ++i) {
        app_path_tidy(a->dirs[i], tidy, sizeof tidy);
        printf("%s %s", i ? "," : "", tidy);
    }
    printf(": %d files, %d skeleton%s measured (one per subject: %d other clip%s of the same "
           "subjects not read), %d skipped",
           s->files, s->person_count, s->person_count == 1 ? "" : "s", s->more_clips,
           s->more_clips == 1 ? "" : "s", s->skipped);
    if (s->person_count > s->bodies)
        printf(", %d repeating an earlier skeleton (counted once)", s->person_count - s->bodies);
    app_path_tidy(skeleton_path, tidy, sizeof tidy);
    printf(".\nEach measure is a fraction of the head joint's height above the floor (the "
           "lowest foot or toes joint) in the rest pose; default: %s; difference: (people's "
           "mean - default) x %.3f m (the default's head joint at %.2f m tall), in cm.\n\n",
           tidy, def_head_175_m, REFERENCE_HEIGHT_M);
}

static void
print_table(const struct survey *s, const struct sk_proportions *def, double def_head_175_m)
{
    printf("| measure                     | mean    | min     | max     | default | "
           "difference (cm) |\n");
    printf("|-----------------------------|--------:|--------:|--------:|--------:|"
           "----------------:|\n");
    for (int m = 0; m < SK_MEASURE_COUNT; ++m) {
        const struct stats st = measure_stats(s, (enum sk_measure)m);
        const double d = (double)def->fraction[m];
        printf("| %-27s | %7.4f | %7.4f | %7.4f | %7.4f | %+15.1f |\n",
               sk_measure_name((enum sk_measure)m), st.mean, st.min, st.max, d,
               100.0 * (st.mean - d) * def_head_175_m);
    }
}

static void
print_people(const struct survey *s)
{
    printf("\n| file | subject | names | unit scale | height (m) | head joint (m) | counted |\n");
    printf("|------|--------:|-------|-----------:|-----------:|---------------:|---------|\n");
    for (int i = 0; i < s->person_count; ++i) {
        const struct person *p = &s->person[i];
        char subject[16] = "-";
        if (p->subject >= 0)
            snprintf(subject, sizeof subject, "%d", p->subject);
        printf("| %s | %s | %s | %g | %.3f | %.3f | %s%s |\n", p->path, subject,
               sk_name_map_label(p->names), p->unit_scale, (double)p->height_m,
               (double)p->p.head_height_m, p->same_as < 0 ? "yes" : "no, same as ",
               p->same_as < 0 ? "" : s->person[p->same_as].path);
    }
}

/* ---- The command ---- */

/* The humanoid to compare with, measured; its head joint's height at REFERENCE_HEIGHT_M. */
static enum em_result
measure_default(const char *option_path, char *out_path, size_t out_size,
                struct sk_proportions *out, double *out_head_175_m, struct em_error *err)
{
    if (option_path)
        snprintf(out_path, out_size, "%s", option_path);
    else if (!u_path_find_data(DEFAULT_SKELETON, out_path, out_size))
        return em_fail(err, EM_ERROR_IO, "cannot find the default humanoid %s (looked in %s)",
                       DEFAULT_SKELETON, out_path);
    struct sk_skeleton sk;
    enum em_result r = app_check_readable("--skeleton", out_path, err);
    if (r != EM_OK)
        return r;
    r = sk_skeleton_load_json(out_path, &sk, err);
    if (r == EM_OK) {
        r = sk_humanoid_validate(&sk, out_path, err);
        if (r == EM_OK)
            r = sk_humanoid_proportions(&sk, out_path, out, err);
        if (r == EM_OK)
            *out_head_175_m =
                (double)out->head_height_m * REFERENCE_HEIGHT_M / (double)sk_humanoid_height(&sk);
        sk_skeleton_fini(&sk);
    }
    if (r != EM_OK && option_path)
        app_error_prefix(err, "--skeleton");
    return r;
}

static enum em_result
list_all(const struct proportions_args *a, struct file_list *out, struct em_error *err)
{
    enum em_result r = EM_OK;
    for (int i = 0; i < a->dir_count && r == EM_OK; ++i)
        r = list_clips(a->dirs[i], out, err);
    return r;
}

static int
fail(const char *message, enum em_result r)
{
    fprintf(stderr, PREFIX "error: %s\n", message);
    return r == EM_ERROR_OUT_OF_MEMORY ? APP_EXIT_FAILURE : APP_EXIT_USAGE;
}

int
app_cmd_proportions(int argc, char **argv)
{
    struct proportions_args a;
    memset(&a, 0, sizeof a);
    struct em_error err = {{0}};
    enum em_result r =
        app_args_parse(argc, argv, 1, k_specs, SPEC_COUNT, HELP_HINT, apply, &a, &err);
    if (r != EM_OK)
        return fail(err.message, r);
    if (a.help) {
        print_help();
        return APP_EXIT_OK;
    }
    if (a.dir_count == 0) /* as `embody eval`: the shared folder, else the repository's */
        a.dirs[a.dir_count++] = u_path_exists(DEFAULT_DIR) ? DEFAULT_DIR : DEFAULT_REPO_DIR;
    char skeleton_path[PATH_MAX_LEN];
    struct sk_proportions def;
    double def_head_175_m = 0.0;
    r = measure_default(a.skeleton, skeleton_path, sizeof skeleton_path, &def, &def_head_175_m,
                        &err);
    if (r != EM_OK)
        return fail(err.message, r);
    struct file_list files = {0};
    struct survey s = {0};
    r = list_all(&a, &files, &err);
    if (r == EM_OK)
        r = survey_files(&files, &s, &err);
    if (r == EM_OK) {
        print_heading(&a, &s, skeleton_path, def_head_175_m);
        print_table(&s, &def, def_head_175_m);
        if (a.people)
            print_people(&s);
    }
    survey_fini(&s);
    file_list_fini(&files);
    return r == EM_OK ? APP_EXIT_OK : fail(err.message, r);
}
