/*
 * Internals of the ik module shared with its tests: joint limits compiled for the solver's
 * hot path. The public ik_limit_apply() is the reference (clear, with trigonometry); the
 * compiled form gives the same results without trigonometry, using half-angle vectors:
 * a rotation by angle a about an axis has quaternion (axis sin(a/2), cos(a/2)), so with
 * w >= 0 its half-angle lies in (-90, 90] degrees and comparing it with a bound b/2 is the
 * sign of sin(a/2 - b/2) = s cos(b/2) - w sin(b/2).
 */
#ifndef EMBODY_IK_INTERNAL_H
#define EMBODY_IK_INTERNAL_H

#include <stdbool.h>

#include "embody/skeleton.h"

struct ik_fast_limit {
    enum sk_limit_kind kind;
    float axis[3];     /* hinge axis, or cone axis */
    float rest_dir[3]; /* the joint's primary bone at rest, unit */
    float cos_cone, sin_cone;
    /* Half-angles of the range's ends (hinge angle or twist): sine and cosine. */
    float lo_sin, lo_cos, hi_sin, hi_cos;
};

/* Compiles a limit for a joint whose primary bone points along unit `rest_dir`. */
void
ik_fast_limit_init(struct ik_fast_limit *out, const struct sk_limit *limit,
                   const float *rest_dir);

/* The same as ik_limit_apply() on the compiled limit; returns whether q changed. */
bool
ik_fast_limit_apply(const struct ik_fast_limit *limit, float *q);

#endif
