/*
 * The prior module's pieces that more than one of its files use (features, inference,
 * training, the model check): each written once here. Not part of the contract
 * (include/embody/prior.h).
 *
 * The inline functions compile with the flags of the file that calls them (training's
 * reassociation in pr_train.c, strict IEEE order in pr_model.c and pr_features.c), as
 * their own static copies did.
 */
#ifndef EMBODY_PR_INTERNAL_H
#define EMBODY_PR_INTERNAL_H

#include "embody/prior.h"

/* The network's input: each raw feature minus the model's mean for it, over its
 * deviation. `features` and `out_x` hold m->feature_count floats (may be one array). */
static inline void
pr_normalise_features(const struct pr_model *m, const float *features, float *out_x)
{
    for (int i = 0; i < m->feature_count; ++i)
        out_x[i] = (features[i] - m->in_mean[i]) / m->in_std[i];
}

#endif
