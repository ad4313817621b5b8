/*
 * Synthetic posture streams (src/eval/eval.h, "Postures"): what a headset and two
 * controllers report while a player lies down on the back, the side or the front, sits on
 * the floor (legs crossed or knees up), kneels, sits on a chair or squats, and stands up
 * again. The training clips have none of the floor postures, so the tests and `embody eval
 * --postures` make them here from a small description: a few key poses of the head joint
 * and the two grips (in the player's frame: facing +Z, left at +X, for a 1.75 m player,
 * scaled to the body's height) at times, eased from one to the next as a player moves.
 * The devices follow from the head joint through the protocol's headset offset and grip
 * axes (PROTOCOL.md section 2). Nothing here is copied from a recording.
 *
 * Each posture is then played through a fresh body and measured over its hold (the key
 * poses' middle stretch, from 0.5 s after it starts): the lowest joint over the whole
 * stream, the head joint's and hands' distances from their targets, the pelvis's height
 * and the posture the body shows.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "embody/body.h"
#include "eval/eval.h"
#include "embody/m_math.h"
#include "ev_internal.h"

/* The key poses are written for a player of this height. */
#define KEY_HEIGHT_M 1.75f
#define MAX_KEYS 8
/* The measured hold starts this long after its first key pose (the body settles). */
#define SETTLE_S 0.5

/* Where the player is at one moment: the head joint (skull base) and its yaw, downward
 * pitch and roll (degrees, applied in that order: yaw about +Y, pitch about the turned +X,
 * roll about the face's forward axis), and both grips (left, right) held forward with the
 * palms facing each other, pitched down by hand_pitch_deg. */
struct key_pose {
    float t_s;
    float head_m[3];
    float yaw_deg, pitch_deg, roll_deg;
    float grip_m[2][3];
    float hand_pitch_deg;
};

struct posture_desc {
    const char *name;
    bool on_floor; /* lying or sitting on the floor: the pelvis must come down to it */
    int key_count;
    int hold_from, hold_to; /* the keys the hold runs between */
    struct key_pose keys[MAX_KEYS];
};

#define STAND(t) {(t), {0, 1.556f, 0}, 0, 5, 0, {{0.18f, 1.0f, 0.30f}, {-0.18f, 1.0f, 0.30f}}, 0}
/* Sitting on the floor, knees up, hands in front (the way down to lying on the back or
 * side). */
#define FLOOR_SIT(t)                                                                           \
    {(t), {0, 0.70f, -0.30f}, 0, 10, 0, {{0.20f, 0.45f, 0.05f}, {-0.20f, 0.45f, 0.05f}}, 20}

static const struct posture_desc k_postures[EV_POSTURE_COUNT] = {
    [EV_POSTURE_LIE_BACK] = {"lie on the back", true, 7, 3, 4, {
        STAND(0.0f), STAND(1.5f), FLOOR_SIT(3.0f),
        {4.5f, {0, 0.11f, -0.92f}, 0, -90, 0, {{0.12f, 0.17f, -0.45f}, {-0.12f, 0.17f, -0.45f}}, -60},
        {8.5f, {0, 0.11f, -0.92f}, 0, -90, 0, {{0.12f, 0.17f, -0.45f}, {-0.12f, 0.17f, -0.45f}}, -60},
        FLOOR_SIT(10.0f), STAND(11.5f)}},
    /* Lying on the side the head rests on the lower arm: its joint about a shoulder's
     * half-width and the flesh under it above the floor. */
    [EV_POSTURE_LIE_SIDE] = {"lie on the side", true, 7, 3, 4, {
        STAND(0.0f), STAND(1.5f), FLOOR_SIT(3.0f),
        {4.5f, {0, 0.23f, -0.90f}, 90, 0, -90, {{0.30f, 0.10f, -0.80f}, {0.25f, 0.35f, -0.55f}}, 0},
        {8.5f, {0, 0.23f, -0.90f}, 90, 0, -90, {{0.30f, 0.10f, -0.80f}, {0.25f, 0.35f, -0.55f}}, 0},
        FLOOR_SIT(10.0f), STAND(11.5f)}},
    [EV_POSTURE_LIE_FRONT] = {"lie on the front", true, 8, 4, 5, {
        STAND(0.0f), STAND(1.5f),
        {3.0f, {0, 1.00f, 0.25f}, 0, 20, 0, {{0.20f, 0.50f, 0.50f}, {-0.20f, 0.50f, 0.50f}}, 30},
        {4.5f, {0, 0.60f, 0.60f}, 0, 50, 0, {{0.20f, 0.12f, 0.75f}, {-0.20f, 0.12f, 0.75f}}, 60},
        {6.0f, {0, 0.20f, 1.00f}, 0, 90, 0, {{0.22f, 0.10f, 1.30f}, {-0.22f, 0.10f, 1.30f}}, 80},
        {10.0f, {0, 0.20f, 1.00f}, 0, 90, 0, {{0.22f, 0.10f, 1.30f}, {-0.22f, 0.10f, 1.30f}}, 80},
        {11.5f, {0, 0.60f, 0.60f}, 0, 50, 0, {{0.20f, 0.12f, 0.75f}, {-0.20f, 0.12f, 0.75f}}, 60},
        STAND(13.5f)}},
    [EV_POSTURE_SIT_CROSS_LEGGED] = {"sit cross-legged", true, 5, 2, 3, {
        STAND(0.0f), STAND(1.5f),
        {4.0f, {0, 0.70f, -0.20f}, 0, 10, 0, {{0.22f, 0.35f, 0.10f}, {-0.22f, 0.35f, 0.10f}}, 10},
        {8.0f, {0, 0.70f, -0.20f}, 0, 10, 0, {{0.22f, 0.35f, 0.10f}, {-0.22f, 0.35f, 0.10f}}, 10},
        STAND(10.5f)}},
    [EV_POSTURE_SIT_KNEES_UP] = {"sit knees up", true, 5, 2, 3, {
        STAND(0.0f), STAND(1.5f),
        {4.0f, {0, 0.68f, -0.25f}, 0, 5, 0, {{0.15f, 0.48f, 0.15f}, {-0.15f, 0.48f, 0.15f}}, 20},
        {8.0f, {0, 0.68f, -0.25f}, 0, 5, 0, {{0.15f, 0.48f, 0.15f}, {-0.15f, 0.48f, 0.15f}}, 20},
        STAND(10.5f)}},
    [EV_POSTURE_KNEEL] = {"kneel", false, 6, 3, 4, {
        STAND(0.0f), STAND(1.5f),
        {2.5f, {0, 1.30f, 0.12f}, 0, 20, 0, {{0.20f, 0.85f, 0.40f}, {-0.20f, 0.85f, 0.40f}}, 10},
        {3.5f, {0, 1.10f, 0.08f}, 0, 10, 0, {{0.20f, 0.75f, 0.35f}, {-0.20f, 0.75f, 0.35f}}, 0},
        {7.5f, {0, 1.10f, 0.08f}, 0, 10, 0, {{0.20f, 0.75f, 0.35f}, {-0.20f, 0.75f, 0.35f}}, 0},
        STAND(9.5f)}},
    [EV_POSTURE_SIT_CHAIR] = {"sit on a chair", false, 6, 3, 4, {
        STAND(0.0f), STAND(1.5f),
        {2.3f, {0, 1.25f, -0.05f}, 0, 25, 0, {{0.20f, 0.80f, 0.25f}, {-0.20f, 0.80f, 0.25f}}, 10},
        {3.2f, {0, 1.14f, -0.22f}, 0, 5, 0, {{0.18f, 0.65f, 0.10f}, {-0.18f, 0.65f, 0.10f}}, 20},
        {7.2f, {0, 1.14f, -0.22f}, 0, 5, 0, {{0.18f, 0.65f, 0.10f}, {-0.18f, 0.65f, 0.10f}}, 20},
        STAND(9.2f)}},
    [EV_POSTURE_SQUAT] = {"squat", false, 5, 2, 3, {
        STAND(0.0f), STAND(1.5f),
        {2.7f, {0, 0.92f, 0.15f}, 0, 25, 0, {{0.20f, 0.60f, 0.45f}, {-0.20f, 0.60f, 0.45f}}, 10},
        {4.2f, {0, 0.92f, 0.15f}, 0, 25, 0, {{0.20f, 0.60f, 0.45f}, {-0.20f, 0.60f, 0.45f}}, 10},
        STAND(5.5f)}},
};

const char *
ev_posture_name(enum ev_posture posture)
{
    return posture >= 0 && posture < EV_POSTURE_COUNT ? k_postures[posture].name : "unknown";
}

bool
ev_posture_on_floor(enum ev_posture posture)
{
    return posture >= 0 && posture < EV_POSTURE_COUNT && k_postures[posture].on_floor;
}

static void
yaw_pitch_roll(float yaw_deg, float pitch_deg, float roll_deg, float *out)
{
    const float x[3] = {1, 0, 0}, y[3] = {0, 1, 0}, z[3] = {0, 0, 1};
    float qy[4], qx[4], qz[4], t[4];
    m_quat_from_axis_angle(y, yaw_deg * M_DEG_TO_RAD, qy);
    m_quat_from_axis_angle(x, pitch_deg * M_DEG_TO_RAD, qx);
    m_quat_from_axis_angle(z, roll_deg * M_DEG_TO_RAD, qz);
    m_quat_mul(qy, qx, t);
    m_quat_mul(t, qz, out);
    m_quat_normalize(out);
}

/* The head joint's and hands' rotations of a key pose. A hand held forward, the palms
 * facing each other: the left hand's bone (+X at rest) turned to +Z, its palm (-Y at rest)
 * rolled to face -X; the right mirrored. */
static void
key_rotations(const struct key_pose *k, float *out_head, float (*out_hand)[4])
{
    yaw_pitch_roll(k->yaw_deg, k->pitch_deg, k->roll_deg, out_head);
    for (int s = 0; s < 2; ++s) {
        const float sign = s == 0 ? 1.0f : -1.0f;
        float base[4], pitch[4], a[4], b[4];
        yaw_pitch_roll(-90.0f * sign, 0.0f, 0.0f, a);
        yaw_pitch_roll(0.0f, 0.0f, -90.0f * sign, b);
        m_quat_mul(b, a, base);
        yaw_pitch_roll(k->yaw_deg, k->hand_pitch_deg, 0.0f, pitch);
        m_quat_mul(pitch, base, out_hand[s]);
        m_quat_normalize(out_hand[s]);
    }
}

/* The devices of one moment: the headset at the head joint's eyes (8 cm up and 9 cm
 * forward of it, view axes = head axes turned half about +Y), the grips with PROTOCOL
 * section 2's axes in each hand's frame. */
static void
set_devices(const float *head_m, const float *head_q, const float (*grip_m)[3],
            const float (*hand_q)[4], struct em_tracking_frame *f)
{
    const float eyes[3] = {0.0f, 0.08f, 0.09f};
    const float half_turn[4] = {0, 1, 0, 0};
    float off[3];
    m_quat_rotate(head_q, eyes, off);
    struct em_device_pose *h = &f->device[EM_DEVICE_HEAD];
    m_vec3_add(head_m, off, h->pose.position_m);
    m_quat_mul(head_q, half_turn, h->pose.orientation);
    h->flags = EM_POSE_ALL_VALID;
    for (int s = 0; s < 2; ++s) {
        const float sx = s == 0 ? 1.0f : -1.0f;
        const float x[3] = {0, -sx, 0}, y[3] = {-sx, 0, 0}, z[3] = {0, 0, -1};
        float grip[4];
        m_quat_from_columns(x, y, z, grip);
        struct em_device_pose *d = &f->device[EM_DEVICE_LEFT_HAND + s];
        m_vec3_copy(grip_m[s], d->pose.position_m);
        m_quat_mul(hand_q[s], grip, d->pose.orientation);
        m_quat_normalize(d->pose.orientation);
        d->flags = EM_POSE_ALL_VALID;
    }
}


/* The pose at time t: eased between the two key poses around it. */
static void
pose_at(const struct posture_desc *p, double t, float scale, struct em_tracking_frame *f)
{
    int k = 0;
    while (k + 1 < p->key_count && t > (double)p->keys[k + 1].t_s)
        k++;
    const struct key_pose *a = &p->keys[k];
    const struct key_pose *b = &p->keys[k + 1 < p->key_count ? k + 1 : k];
    const float span = b->t_s - a->t_s;
    const float u = span > 0.0f ? m_ease((float)(t - (double)a->t_s) / span) : 0.0f;
    float qa[4], qb[4], ha[2][4], hb[2][4], head_q[4], hand_q[2][4], head_m[3], grip_m[2][3];
    key_rotations(a, qa, ha);
    key_rotations(b, qb, hb);
    m_quat_slerp(qa, qb, u, head_q);
    m_vec3_lerp(a->head_m, b->head_m, u, head_m);
    m_vec3_scale(head_m, scale, head_m);
    for (int s = 0; s < 2; ++s) {
        m_quat_slerp(ha[s], hb[s], u, hand_q[s]);
        m_vec3_lerp(a->grip_m[s], b->grip_m[s], u, grip_m[s]);
        m_vec3_scale(grip_m[s], scale, grip_m[s]);
    }
    set_devices(head_m, head_q, (const float(*)[3])grip_m, (const float(*)[4])hand_q, f);
}

enum em_result
ev_posture_stream(enum ev_posture posture, float height_m, double fps, struct st_stream *out,
                  struct ev_posture_window *out_hold)
{
    memset(out, 0, sizeof *out);
    assert(posture >= 0 && posture < EV_POSTURE_COUNT && fps > 0.0 && height_m > 0.0f);
    const struct posture_desc *p = &k_postures[posture];
    const double end_s = (double)p->keys[p->key_count - 1].t_s + 1.5;
    const int rows = (int)(end_s * fps) + 1;
    const float scale = height_m / KEY_HEIGHT_M;
    for (int k = 0; k < rows; ++k) {
        struct em_tracking_frame f;
        memset(&f, 0, sizeof f);
        f.time_s = k / fps;
        pose_at(p, f.time_s, scale, &f);
        if (st_stream_append(out, &f) != EM_OK) {
            st_stream_fini(out);
            return EM_ERROR_OUT_OF_MEMORY;
        }
    }
    if (out_hold) {
        out_hold->standing_to = (int)((double)p->keys[1].t_s * fps);
        out_hold->hold_from = (int)(((double)p->keys[p->hold_from].t_s + SETTLE_S) * fps);
        out_hold->hold_to = (int)((double)p->keys[p->hold_to].t_s * fps);
    }
    return EM_OK;
}

/* The distance of status effector `e` from its target, m. */
static double
effector_off_m(const struct body_status *st, int e)
{
    return (double)m_vec3_distance(st->target_m[e], st->reached_m[e]);
}

enum em_result
ev_posture_run(struct body *body, enum ev_posture posture, struct ev_posture_result *out,
               struct em_error *err)
{
    memset(out, 0, sizeof *out);
    struct body_desc desc;
    body_get_desc(body, &desc);
    struct st_stream stream;
    struct ev_posture_window hold;
    if (ev_posture_stream(posture, desc.height_m, 60.0, &stream, &hold) != EM_OK)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "posture %s: out of memory",
                       ev_posture_name(posture));
    long shown[BODY_POSTURE_COUNT] = {0};
    double pelvis_sum = 0.0;
    out->lowest_joint_m = out->lowest_hold_m = (double)INFINITY;
    for (int row = 0; row < stream.frame_count; ++row) {
        body_update(body, &stream.frames[row]);
        const struct sk_pose *pose = body_pose(body);
        double lowest = (double)INFINITY;
        for (int j = 0; j < pose->joint_count; ++j)
            lowest = fmin(lowest, (double)(pose->position_m[j][1] - desc.floor_height_m));
        out->lowest_joint_m = fmin(out->lowest_joint_m, lowest);
        struct body_status st;
        body_get_status(body, &st);
        const double hands = fmax(effector_off_m(&st, 1), effector_off_m(&st, 2));
        if (row < hold.standing_to) {
            out->hands_standing_cm = fmax(out->hands_standing_cm, 100.0 * hands);
            continue;
        }
        if (row < hold.hold_from || row > hold.hold_to)
            continue;
        out->lowest_hold_m = fmin(out->lowest_hold_m, lowest);
        out->head_off_cm = fmax(out->head_off_cm, 100.0 * effector_off_m(&st, 0));
        out->hands_off_cm = fmax(out->hands_off_cm, 100.0 * hands);
        const int hips = body_skeleton(body)->bone_joint[SK_HIPS];
        pelvis_sum += (double)(pose->position_m[hips][1] - desc.floor_height_m);
        out->hold_frames++;
        if (st.posture >= 0 && st.posture < BODY_POSTURE_COUNT)
            shown[st.posture]++;
    }
    st_stream_fini(&stream);
    out->pelvis_m = out->hold_frames > 0 ? pelvis_sum / out->hold_frames : (double)NAN;
    int most = 0;
    for (int p = 1; p < BODY_POSTURE_COUNT; ++p)
        if (shown[p] > shown[most])
            most = p;
    out->shown = most;
    out->shown_share = out->hold_frames > 0 ? (double)shown[most] / out->hold_frames : 0.0;
    out->meets = out->lowest_joint_m >= -EV_FLOOR_DEPTH_TARGET_M &&
                 out->head_off_cm <= EV_POSTURE_HEAD_TARGET_CM &&
                 out->hands_off_cm <= out->hands_standing_cm + EV_POSTURE_HANDS_TARGET_CM &&
                 (!ev_posture_on_floor(posture) || out->pelvis_m <= EV_POSTURE_PELVIS_TARGET_M);
    return EM_OK;
}

void
ev_postures_print(FILE *out, const char *title, const struct ev_posture_result *results)
{
    fprintf(out, "\n## Postures: %s\n\n", title);
    fprintf(out, "| posture           | lowest joint cm: hold, stream | head vs headset cm | hands vs "
                 "controllers cm (standing) | pelvis cm | shown                     | targets |\n");
    fprintf(out, "|-------------------|-------------------------------|--------------------|---------"
                 "--------------------------|-----------|---------------------------|---------|\n");
    for (int p = 0; p < EV_POSTURE_COUNT; ++p) {
        const struct ev_posture_result *r = &results[p];
        char shown[64];
        snprintf(shown, sizeof shown, "%s %.0f%%", body_posture_name((enum body_posture)r->shown),
                 100.0 * r->shown_share);
        fprintf(out, "| %-17s | %13.1f, %15.1f | %18.1f | %20.1f (%5.1f)        | %9.1f | %-25s | %-7s |\n",
                ev_posture_name((enum ev_posture)p), 100.0 * r->lowest_hold_m,
                100.0 * r->lowest_joint_m, r->head_off_cm,
                r->hands_off_cm, r->hands_standing_cm, 100.0 * r->pelvis_m, shown,
                r->meets ? "met" : "NOT MET");
    }
    fprintf(out,
            "\nTargets: no joint more than %.0f cm under the floor; head joint within %.0f cm of "
            "the headset's; hands within %.0f cm of their standing distance from the "
            "controllers; pelvis within %.0f cm of the floor lying or sitting on it. Over the "
            "hold (from %.1f s after it starts), the lowest joint also over the whole stream (which "
            "the targets take).\n",
            100.0 * EV_FLOOR_DEPTH_TARGET_M, EV_POSTURE_HEAD_TARGET_CM, EV_POSTURE_HANDS_TARGET_CM,
            100.0 * EV_POSTURE_PELVIS_TARGET_M, SETTLE_S);
}

/* Every posture through a fresh body of the default proportions at 1.75 m, with `prior`
 * (NULL: procedural), into `out` (EV_POSTURE_COUNT entries). */
static enum em_result
run_all(const struct pr_model *prior, struct ev_posture_result *out, struct em_error *err)
{
    for (int p = 0; p < EV_POSTURE_COUNT; ++p) {
        struct body_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.height_m = KEY_HEIGHT_M;
        desc.prior = prior;
        struct body *body = NULL;
        enum em_result r = body_create(&desc, &body, err);
        if (r == EM_OK)
            r = ev_posture_run(body, (enum ev_posture)p, &out[p], err);
        body_destroy(&body);
        if (r != EM_OK)
            return r;
    }
    return EM_OK;
}

int
ev_postures_main(const struct ev_options *options)
{
    const char *mode = options->body_mode;
    const bool procedural = !mode || strcmp(mode, "prior") != 0;
    struct pr_model model;
    char model_path[1024];
    const bool prior = (!mode || strcmp(mode, "procedural") != 0) &&
                       ev_prior_load(options, &model, model_path, sizeof model_path);
    struct ev_posture_result results[EV_POSTURE_COUNT];
    struct em_error err = {{0}};
    int status = 0;
    printf("# Postures: synthetic streams of a 1.75 m player, the default humanoid "
           "(src/eval/ev_postures.c)\n");
    if (procedural) {
        if (run_all(NULL, results, &err) == EM_OK)
            ev_postures_print(stdout, "the procedural body", results);
        else
            status = 1;
    }
    if (prior && status == 0) {
        char title[1200];
        snprintf(title, sizeof title, "the learned prior %s", model_path);
        if (run_all(&model, results, &err) == EM_OK)
            ev_postures_print(stdout, title, results);
        else
            status = 1;
    }
    if (prior)
        pr_model_fini(&model);
    if (status)
        fprintf(stderr, "embody eval: postures: %s\n", err.message);
    return status;
}
