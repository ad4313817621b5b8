/*
 * A fold's model through the body on the people it left out (`embody train --folds`):
 * every clip of those people in each training folder, known body and height only, the
 * MPJPE, hips and lower body per folder (PROTOCOL.md section 5: settings are chosen on
 * people left out of the training folders, never on the evaluation clips).
 */
#include <dirent.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "eval/eval.h"

/* True when `dir` holds a *.bvh clip of `people`. */
static bool
has_clips_of(const char *dir, const char *people)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    for (struct dirent *e = readdir(d); e && !found; e = readdir(d)) {
        const size_t n = strlen(e->d_name);
        found = n > 4 && strcasecmp(e->d_name + n - 4, ".bvh") == 0 &&
                ev_clip_of_subjects(e->d_name, people);
    }
    closedir(d);
    return found;
}

static void
take_means(const struct ev_report *r, struct ev_fold_scores *out)
{
    out->clips = r->means.clip_count;
    for (int m = 0; m < EV_DO_NOTHING; ++m) {
        const struct ev_scores *s = &r->means.scores[m];
        out->mpjpe_cm[m] = s->mpjpe_cm[EV_GROUP_ALL];
        out->hips_cm[m] = s->joint_mpjpe_cm[EV_HIPS];
        out->lower_cm[m] = s->mpjpe_cm[EV_GROUP_LOWER];
    }
}

enum em_result
ev_fold_score(const struct pr_model *prior, const char *dir, const char *people,
              struct ev_fold_scores *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    if (!has_clips_of(dir, people))
        return EM_OK;
    const struct ev_options o = {.clip_dir = dir,
                                 .json_path = "-",
                                 .modes = EV_MODE_BOTH,
                                 .quiet = true,
                                 .prior = prior,
                                 .subjects = people};
    struct ev_report r;
    const enum em_result res = ev_run(&o, &r, err);
    if (res == EM_OK)
        take_means(&r, out);
    ev_report_fini(&r);
    return res;
}
