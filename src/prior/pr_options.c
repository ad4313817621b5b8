/*
 * The trainer's options with their defaults resolved (zero means default, as every
 * description here), and its progress lines: what every piece of the trainer
 * (pr_learning.h) reads, kept apart from any one of them.
 */
#include <stdarg.h>
#include <stdio.h>

#include "embody/prior.h"
#include "pr_learning.h"

#define DEFAULT_EPOCHS 15
#define DEFAULT_HIDDEN 64
#define DEFAULT_LR 1e-3f
#define DEFAULT_WEIGHT_DECAY 0.1f
#define DEFAULT_BATCH 128
#define DEFAULT_OFFSET_NOISE_M 0.01f
#define DEFAULT_HEIGHT_NOISE 0.02f
#define DEFAULT_PROPORTION_SPREAD 0.06f

void
pr_report_line(const struct pr_train_options *o, const char *fmt, ...)
{
    if (!o->progress)
        return;
    char line[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    o->progress(o->progress_user, line);
}

void
pr_resolve_options(const struct pr_train_options *in, struct pr_train_options *o)
{
    *o = *in;
    if (!o->holdout || !o->holdout[0])
        o->holdout = PR_DEFAULT_HOLDOUT;
    if (o->seed == 0)
        o->seed = 1;
    if (o->epochs <= 0)
        o->epochs = DEFAULT_EPOCHS;
    if (o->epochs > PR_MAX_EPOCHS)
        o->epochs = PR_MAX_EPOCHS;
    if (o->hidden <= 0)
        o->hidden = DEFAULT_HIDDEN;
    if (!(o->learning_rate > 0.0f))
        o->learning_rate = DEFAULT_LR;
    if (o->weight_decay == 0.0f)
        o->weight_decay = DEFAULT_WEIGHT_DECAY;
    if (o->batch <= 0)
        o->batch = DEFAULT_BATCH;
    if (o->offset_noise_m == 0.0f)
        o->offset_noise_m = DEFAULT_OFFSET_NOISE_M;
    if (o->height_noise == 0.0f)
        o->height_noise = DEFAULT_HEIGHT_NOISE;
    if (o->proportion_spread == 0.0f)
        o->proportion_spread = DEFAULT_PROPORTION_SPREAD;
    if (!(o->dropout > 0.0f && o->dropout < 1.0f))
        o->dropout = 0.0f;
}
