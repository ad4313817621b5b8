/*
 * Body trackers of a clip (src/eval/eval.h): the --trackers option, the setup's
 * trackers kept in a clip's stream, and the known body's tracker axes and mounts. Below
 * the clip's reconstruction (ev_clip.c); the table of every setup (ev_trackers.c) is
 * above the whole run.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/m_math.h"
#include "embody/stream.h"

enum em_result
ev_trackers_parse(const char *value, struct ev_options *options, struct em_error *err)
{
    if (strcmp(value, "all") == 0) {
        options->tracker_setups = true;
        return EM_OK;
    }
    struct em_error why = {{0}};
    if (st_tracker_setup_parse(value, &options->trackers, &why) != EM_OK)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "--trackers: %s, or all", why.message);
    return EM_OK;
}

enum em_result
ev_trackers_select(struct ev_clip *clip, uint32_t mask, struct em_error *err)
{
    mask &= EM_TRACKER_ALL;
    if (mask && clip->stream.frame_count > 0 &&
        (clip->stream.frames[0].tracker_present & mask) != mask)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "%s: the clip lacks the joints the body trackers are made from (Hips, "
                       "Spine1, LeftFoot, RightFoot, LeftLeg, RightLeg, LeftForeArm, "
                       "RightForeArm)",
                       clip->path);
    for (int i = 0; i < clip->stream.frame_count; ++i)
        clip->stream.frames[i].tracker_present &= mask;
    return EM_OK;
}

/* ---- the known body's mounts --------------------------------------------------------- */

/* The rotation that turned a limb for the humanoid rest pose: from the direction of the
 * clip's bone `top` -> `next` to `direction` (as st_bvh_to_humanoid does). */
static void
limb_turn(const struct st_bvh *bvh, const char *next, const float *direction, float *out)
{
    m_quat_identity(out);
    const int j = st_bvh_find(bvh, next);
    if (j < 0)
        return;
    const double *o = bvh->joints[j].offset;
    float d[3] = {(float)o[0], (float)o[1], (float)o[2]};
    if (!(m_vec3_normalize_or(d, direction, d) > 0.0f))
        return;
    m_quat_from_to(d, direction, out);
}

void
ev_trackers_known_axes(const struct st_bvh *bvh, struct ev_clip *clip)
{
    const float down[3] = {0, -1, 0}, left[3] = {1, 0, 0}, right[3] = {-1, 0, 0};
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        m_quat_identity(clip->tracker_axes[t]);
    /* A joint below the turned bone turned with it: knees and feet with the thigh (CMU
     * LeftUpLeg -> LeftLeg), elbows with the upper arm (LeftArm -> LeftForeArm). */
    float turn[4];
    limb_turn(bvh, "LeftLeg", down, turn);
    m_quat_copy(turn, clip->tracker_axes[EM_TRACKER_LEFT_KNEE]);
    m_quat_copy(turn, clip->tracker_axes[EM_TRACKER_LEFT_FOOT]);
    limb_turn(bvh, "RightLeg", down, turn);
    m_quat_copy(turn, clip->tracker_axes[EM_TRACKER_RIGHT_KNEE]);
    m_quat_copy(turn, clip->tracker_axes[EM_TRACKER_RIGHT_FOOT]);
    limb_turn(bvh, "LeftForeArm", left, clip->tracker_axes[EM_TRACKER_LEFT_ELBOW]);
    limb_turn(bvh, "RightForeArm", right, clip->tracker_axes[EM_TRACKER_RIGHT_ELBOW]);
}

void
ev_trackers_known_mounts(const struct ev_clip *clip, void *out_mounts)
{
    struct body_tracker_mount *mounts = out_mounts;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        float offset[3];
        st_mocap_tracker_mount((enum em_tracker)t, NULL, offset);
        /* tracker = R_clip_joint * offset with R_clip_joint = R_avatar_bone * axes. */
        m_quat_copy(clip->tracker_axes[t], mounts[t].rotation);
        m_quat_rotate(clip->tracker_axes[t], offset, mounts[t].position_m);
    }
}
