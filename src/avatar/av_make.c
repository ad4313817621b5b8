/*
 * The avatar embody makes itself (no third-party model): a humanoid skeleton dressed in
 * capsules, written as a skinned glTF 2.0 binary (GLB), as VRM 1.0, VRM 0.x or plain glTF.
 *
 * Each bone's body part is a capsule from its joint to its child's, weighted to the bone
 * and blended half-way into the neighbouring bones near the joints so elbows and knees
 * bend smoothly; the head is an ellipsoid; the eyes are a mesh without a skin hung under
 * the head node (a rigid attachment, as many simple VRMs are built). Colours follow the
 * mirror view's palette (centre warm sand, the left side orange, the right side blue) so
 * the skinned avatar reads the same as the capsule figure; the torso has a striped
 * base-colour texture and the eyes an MToon material.
 *
 * Each hand has five fingers of three bones (VRM 1.0's finger bones, and a tip joint at
 * each end): the hand model's default hand (src/hand) sized to the skeleton's knuckles,
 * a capsule of the model's joint radii on each finger bone; the hand's own part is the
 * palm, from the wrist to the knuckles.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>
#include <cjson/cJSON.h>

#include "avatar/av_internal.h"
#include "embody/hand.h"
#include "embody/m_math.h"

enum part_material { MAT_CENTER, MAT_LEFT, MAT_RIGHT, MAT_EYES, MAT_COUNT };

/* ---- Growing arrays ---- */

struct bytes {
    uint8_t *data;
    size_t size, capacity;
};

static bool
bytes_append(struct bytes *b, const void *data, size_t n)
{
    if (b->size + n + 4 > b->capacity) {
        size_t cap = b->capacity ? b->capacity * 2 : 4096;
        while (cap < b->size + n + 4)
            cap *= 2;
        uint8_t *grown = realloc(b->data, cap);
        if (!grown)
            return false;
        b->data = grown;
        b->capacity = cap;
    }
    memcpy(b->data + b->size, data, n);
    b->size += n;
    while (b->size % 4) /* every view starts 4-aligned */
        b->data[b->size++] = 0;
    return true;
}

struct gen_vertex {
    float p[3], n[3], uv[2];
    uint16_t j[4];
    float w[4];
};

struct mesh_builder {
    struct gen_vertex *v;
    int count, capacity;
    uint32_t *idx[MAT_COUNT];
    int idx_count[MAT_COUNT], idx_capacity[MAT_COUNT];
    bool failed;
};

static int
push_vertex(struct mesh_builder *m, const struct gen_vertex *v)
{
    if (m->count == m->capacity) {
        const int cap = m->capacity ? m->capacity * 2 : 1024;
        struct gen_vertex *grown = realloc(m->v, (size_t)cap * sizeof *grown);
        if (!grown) {
            m->failed = true;
            return 0;
        }
        m->v = grown;
        m->capacity = cap;
    }
    m->v[m->count] = *v;
    return m->count++;
}

static void
push_triangle(struct mesh_builder *m, int mat, int a, int b, int c)
{
    if (m->idx_count[mat] + 3 > m->idx_capacity[mat]) {
        const int cap = m->idx_capacity[mat] ? m->idx_capacity[mat] * 2 : 1024;
        uint32_t *grown = realloc(m->idx[mat], (size_t)cap * sizeof *grown);
        if (!grown) {
            m->failed = true;
            return;
        }
        m->idx[mat] = grown;
        m->idx_capacity[mat] = cap;
    }
    uint32_t *t = m->idx[mat] + m->idx_count[mat];
    t[0] = (uint32_t)a, t[1] = (uint32_t)b, t[2] = (uint32_t)c;
    m->idx_count[mat] += 3;
}

static void
builder_fini(struct mesh_builder *m)
{
    free(m->v);
    for (int i = 0; i < MAT_COUNT; ++i)
        free(m->idx[i]);
}

/* ---- Shapes ---- */

/* Weights of a point a fraction t along bone `joint` (from it to `child`): the bone's own,
 * blending half into the parent bone near its start and into the child's near its end. */
static void
segment_weights(int parent, int joint, int child, float t, struct gen_vertex *v)
{
    float wp = parent >= 0 ? 0.5f * (1.0f - m_clampf(t / 0.3f, 0.0f, 1.0f)) : 0.0f;
    float wc = child >= 0 ? 0.5f * m_clampf((t - 0.7f) / 0.3f, 0.0f, 1.0f) : 0.0f;
    wp = wp * wp * 2.0f; /* eased: 0.5 at the joint, falling off smoothly */
    wc = wc * wc * 2.0f;
    v->j[0] = (uint16_t)joint, v->w[0] = 1.0f - wp - wc;
    v->j[1] = (uint16_t)(parent >= 0 ? parent : joint), v->w[1] = wp;
    v->j[2] = (uint16_t)(child >= 0 ? child : joint), v->w[2] = wc;
    v->j[3] = (uint16_t)joint, v->w[3] = 0.0f;
}

struct capsule {
    vec3 a, b;                /* ends (centres of the end caps) */
    float ra[2], rb[2];       /* radii at a and b: across (u) and deep (v) */
    int parent, joint, child; /* for weights; -1 for none */
    int material;
    /* An end joined to the next part of one tube (the torso): no cap there, and its ring
     * square to `joint_dir` (the mean of both parts' directions), so that both parts give
     * the same ring and no two surfaces lie on each other (they flickered on the chest). */
    bool joined[2];
    vec3 joint_dir[2];
};

/* Unit frame around a direction: u across (towards X, or Z for bones along X), v = w x u. */
static void
frame_of(const vec3 w, vec3 u, vec3 v)
{
    const vec3 x = {1.0f, 0.0f, 0.0f}, z = {0.0f, 0.0f, 1.0f};
    const float *ref = fabsf(w[0]) < 0.9f ? x : z;
    vec3 t;
    m_vec3_scale(w, m_vec3_dot(ref, w), t);
    m_vec3_sub(ref, t, u);
    m_vec3_normalize_or(u, x, u);
    m_vec3_cross(w, u, v);
}

/* A capsule as rings: `sides` around, cap rings over each end's hemisphere. The surface
 * point at angle a and height h (-1..0 start cap, 0..1 tube, 1..2 end cap). */
static void
add_capsule(struct mesh_builder *m, const struct capsule *c, int sides)
{
    vec3 axis, u, v;
    m_vec3_sub(c->b, c->a, axis);
    const float len = m_vec3_length(axis);
    const vec3 up = {0.0f, 1.0f, 0.0f};
    m_vec3_normalize_or(axis, up, axis);
    frame_of(axis, u, v);
    const int cap_rings = sides / 4 + 1, tube_rings = sides / 2 + 2;
    const int rings = 2 * cap_rings + tube_rings;
    int first = -1;
    for (int r = 0; r <= rings; ++r) {
        /* A joined end has no cap: its rings are left out. */
        if ((c->joined[0] && r < cap_rings) || (c->joined[1] && r > cap_rings + tube_rings))
            continue;
        /* The ring's place: along the axis (metres from a) and its radius scale. */
        float along, scale, t, normal_axial;
        if (r < cap_rings) {
            const float ang = (0.5f * M_PI_F) * (1.0f - (float)r / (float)cap_rings);
            along = -sinf(ang), scale = cosf(ang), t = 0.0f, normal_axial = -sinf(ang);
        } else if (r <= cap_rings + tube_rings) {
            t = (float)(r - cap_rings) / (float)tube_rings;
            along = 0.0f, scale = 1.0f, normal_axial = 0.0f;
        } else {
            const float ang =
                (0.5f * M_PI_F) * (float)(r - cap_rings - tube_rings) / (float)cap_rings;
            along = sinf(ang), scale = cosf(ang), t = 1.0f, normal_axial = sinf(ang);
        }
        const float rx = (c->ra[0] + (c->rb[0] - c->ra[0]) * t);
        const float rz = (c->ra[1] + (c->rb[1] - c->ra[1]) * t);
        vec3 centre;
        m_vec3_muladd(c->a, axis, t * len + along * rx, centre);
        /* The ring's frame: the part's, or at a joined end the joint's. */
        const int end = r == cap_rings ? 0 : r == cap_rings + tube_rings ? 1 : -1;
        vec3 ru, rv, ring_axis;
        m_vec3_copy(u, ru), m_vec3_copy(v, rv), m_vec3_copy(axis, ring_axis);
        if (end >= 0 && c->joined[end]) {
            m_vec3_copy(c->joint_dir[end], ring_axis);
            frame_of(ring_axis, ru, rv);
        }
        for (int s = 0; s <= sides; ++s) {
            const float ang = 2.0f * M_PI_F * (float)s / (float)sides;
            const float ca = cosf(ang), sa = sinf(ang);
            struct gen_vertex gv;
            memset(&gv, 0, sizeof gv);
            vec3 p, n;
            m_vec3_muladd(centre, ru, ca * rx * scale, p);
            m_vec3_muladd(p, rv, sa * rz * scale, p);
            m_vec3_scale(ru, ca / rx * scale, n);
            m_vec3_muladd(n, rv, sa / rz * scale, n);
            m_vec3_muladd(n, ring_axis, normal_axial / rx, n);
            m_vec3_normalize_or(n, axis, n);
            m_vec3_copy(p, gv.p);
            gv.p[1] = fmaxf(gv.p[1], 0.0f); /* flat soles: nothing below the floor */
            m_vec3_copy(n, gv.n);
            gv.uv[0] = (float)s / (float)sides;
            gv.uv[1] = (float)r / (float)rings;
            segment_weights(c->parent, c->joint, c->child, t, &gv);
            const int id = push_vertex(m, &gv);
            if (first < 0)
                first = id;
        }
    }
    const int made = rings - (c->joined[0] ? cap_rings : 0) - (c->joined[1] ? cap_rings : 0);
    for (int r = 0; r < made; ++r)
        for (int s = 0; s < sides; ++s) {
            const int a = first + r * (sides + 1) + s, b = a + sides + 1;
            push_triangle(m, c->material, a, a + 1, b);
            push_triangle(m, c->material, a + 1, b + 1, b);
        }
}

/* An ellipsoid at `centre` with radii `r` (world axes), all weighted to `joint`. */
static void
add_ellipsoid(struct mesh_builder *m, const vec3 centre, const vec3 r, int joint, int material,
              int sides)
{
    const int rings = sides / 2;
    const int first = m->count;
    for (int i = 0; i <= rings; ++i) {
        const float th = M_PI_F * (float)i / (float)rings;
        for (int s = 0; s <= sides; ++s) {
            const float ph = 2.0f * M_PI_F * (float)s / (float)sides;
            const vec3 d = {sinf(th) * cosf(ph), cosf(th), sinf(th) * sinf(ph)};
            struct gen_vertex gv;
            memset(&gv, 0, sizeof gv);
            for (int k = 0; k < 3; ++k) {
                gv.p[k] = centre[k] + r[k] * d[k];
                gv.n[k] = d[k] / r[k];
            }
            m_vec3_normalize_or(gv.n, d, gv.n);
            gv.uv[0] = (float)s / (float)sides;
            gv.uv[1] = (float)i / (float)rings;
            gv.j[0] = gv.j[1] = gv.j[2] = gv.j[3] = (uint16_t)joint;
            gv.w[0] = 1.0f;
            push_vertex(m, &gv);
        }
    }
    for (int i = 0; i < rings; ++i)
        for (int s = 0; s < sides; ++s) {
            const int a = first + i * (sides + 1) + s, b = a + sides + 1;
            push_triangle(m, material, a, a + 1, b);
            push_triangle(m, material, a + 1, b + 1, b);
        }
}

/* The part's radii (across, deep) in metres for a 1.75 m figure, by the bone it hangs from,
 * and its material; false for bones that get no capsule. */
static bool
part_style(enum sk_bone bone, enum sk_bone child, float out_r[2], float out_r_end[2],
           int *out_material)
{
    const bool left = strncmp(sk_bone_name(bone), "left", 4) == 0;
    *out_material = bone == sk_bone_mirror(bone) ? MAT_CENTER : left ? MAT_LEFT : MAT_RIGHT;
    float a0, a1, b0, b1;
    switch (sk_bone_mirror(bone) < bone ? sk_bone_mirror(bone) : bone) {
    case SK_HIPS:
        if (child != SK_SPINE)
            return false; /* the legs hang from the pelvis, drawn by the spine part */
        a0 = 0.15f, a1 = 0.10f, b0 = 0.14f, b1 = 0.09f;
        break;
    case SK_SPINE: a0 = 0.14f, a1 = 0.09f, b0 = 0.15f, b1 = 0.10f; break;
    case SK_CHEST:
    case SK_UPPER_CHEST:
        if (child != SK_NECK && child != SK_UPPER_CHEST)
            return false;
        a0 = 0.15f, a1 = 0.10f, b0 = 0.12f, b1 = 0.08f;
        break;
    case SK_NECK: a0 = a1 = 0.05f, b0 = b1 = 0.05f; break;
    case SK_LEFT_SHOULDER: a0 = a1 = 0.055f, b0 = b1 = 0.055f; break;
    case SK_LEFT_UPPER_ARM: a0 = a1 = 0.05f, b0 = b1 = 0.042f; break;
    case SK_LEFT_LOWER_ARM: a0 = a1 = 0.04f, b0 = b1 = 0.032f; break;
    case SK_LEFT_HAND: a0 = 0.045f, a1 = 0.022f, b0 = 0.04f, b1 = 0.018f; break;
    case SK_LEFT_UPPER_LEG: a0 = a1 = 0.08f, b0 = b1 = 0.056f; break;
    case SK_LEFT_LOWER_LEG: a0 = a1 = 0.055f, b0 = b1 = 0.042f; break;
    case SK_LEFT_FOOT: a0 = a1 = 0.045f, b0 = b1 = 0.042f; break;
    case SK_LEFT_TOES: a0 = a1 = 0.042f, b0 = b1 = 0.03f; break;
    default: return false; /* the head is an ellipsoid */
    }
    out_r[0] = a0, out_r[1] = a1, out_r_end[0] = b0, out_r_end[1] = b1;
    return true;
}

static int
first_child(const struct sk_skeleton *sk, int joint)
{
    for (int i = joint + 1; i < sk->joint_count; ++i)
        if (sk->parent[i] == joint)
            return i;
    return -1;
}

/* True for the parts of the torso's one tube: pelvis, spine and chest (to the neck). */
static bool
is_torso_part(const struct sk_skeleton *sk, int joint, int child)
{
    float ra[2], rb[2];
    int material;
    const enum sk_bone b = sk->bone[joint];
    return (b == SK_HIPS || b == SK_SPINE || b == SK_CHEST || b == SK_UPPER_CHEST) &&
           part_style(b, sk->bone[child], ra, rb, &material);
}

/* The torso part that starts at `joint` (its child joint), or -1. */
static int
torso_part_from(const struct sk_skeleton *sk, int joint)
{
    for (int i = joint + 1; i < sk->joint_count; ++i)
        if (sk->parent[i] == joint && is_torso_part(sk, joint, i))
            return i;
    return -1;
}

/* Joins the torso part p -> j to the parts before and after it (see struct capsule). */
static void
join_torso(const struct sk_skeleton *sk, int p, int j, struct capsule *c)
{
    if (!is_torso_part(sk, p, j))
        return;
    vec3 dir, other;
    m_vec3_sub(sk->rest_position_m[j], sk->rest_position_m[p], dir);
    m_vec3_normalize_or(dir, (vec3){0.0f, 1.0f, 0.0f}, dir);
    const int before = sk->parent[p];
    if (before >= 0 && is_torso_part(sk, before, p)) {
        m_vec3_sub(sk->rest_position_m[p], sk->rest_position_m[before], other);
        m_vec3_normalize_or(other, dir, other);
        m_vec3_add(other, dir, c->joint_dir[0]);
        m_vec3_normalize_or(c->joint_dir[0], dir, c->joint_dir[0]);
        c->joined[0] = true;
    }
    const int after = torso_part_from(sk, j);
    if (after >= 0) {
        m_vec3_sub(sk->rest_position_m[after], sk->rest_position_m[j], other);
        m_vec3_normalize_or(other, dir, other);
        m_vec3_add(dir, other, c->joint_dir[1]);
        m_vec3_normalize_or(c->joint_dir[1], dir, c->joint_dir[1]);
        c->joined[1] = true;
    }
}

static void
build_body(const struct sk_skeleton *sk, int sides, struct mesh_builder *m)
{
    const float k = sk_humanoid_height(sk) / 1.75f;
    for (int j = 1; j < sk->joint_count; ++j) {
        const int p = sk->parent[j];
        float ra[2], rb[2];
        int material;
        if (sk->bone[j] == SK_BONE_NONE) /* a finger (build_fingers): the palm is one part */
            continue;
        if (!part_style(sk->bone[p], sk->bone[j], ra, rb, &material))
            continue;
        struct capsule c = {.parent = sk->parent[p],
                            .joint = p,
                            .child = first_child(sk, j) >= 0 ? j : -1,
                            .material = material};
        m_vec3_copy(sk->rest_position_m[p], c.a);
        m_vec3_copy(sk->rest_position_m[j], c.b);
        for (int i = 0; i < 2; ++i)
            c.ra[i] = ra[i] * k, c.rb[i] = rb[i] * k;
        if (sk->bone[p] == SK_HIPS)
            c.parent = -1;
        if (sk->bone[p] == SK_LEFT_HAND || sk->bone[p] == SK_RIGHT_HAND) {
            /* The palm: its rounded end at the knuckles, where the fingers start. */
            vec3 d;
            m_vec3_sub(c.b, c.a, d);
            const float len = m_vec3_length(d);
            m_vec3_lerp(c.a, c.b, fmaxf(0.5f, 1.0f - c.rb[0] / len), c.b);
        }
        join_torso(sk, p, j, &c);
        add_capsule(m, &c, sides);
    }
    const int head = sk->bone_joint[SK_HEAD], top = sk->bone_joint[SK_HEAD_TOP];
    vec3 centre;
    if (top >= 0)
        m_vec3_lerp(sk->rest_position_m[head], sk->rest_position_m[top], 0.45f, centre);
    else
        m_vec3_muladd(sk->rest_position_m[head], (vec3){0.0f, 1.0f, 0.0f}, 0.09f * k, centre);
    const vec3 r = {0.085f * k, 0.115f * k, 0.1f * k};
    add_ellipsoid(m, centre, r, head, MAT_CENTER, sides);
}

/* The eyes, in the head node's frame (a node placed in front of the face). */
static void
build_eyes(float k, int sides, struct mesh_builder *m)
{
    for (int side = -1; side <= 1; side += 2) {
        const vec3 c = {0.034f * k * (float)side, 0.0f, 0.0f};
        const vec3 r = {0.016f * k, 0.016f * k, 0.01f * k};
        add_ellipsoid(m, c, r, 0, MAT_EYES, sides / 2 > 6 ? sides / 2 : 6);
    }
}

/* ---- Fingers ---- */

/* The tip joint's name of a finger: its distal bone's VRM name with "Tip" for "Distal". */
static void
tip_name(int h, int f, char *out, size_t size)
{
    const char *distal = hd_vrm_bone_name((enum hd_hand)h, f * HD_FINGER_JOINTS + 2);
    snprintf(out, size, "%.*sTip", (int)(strlen(distal) - strlen("Distal")), distal);
}

/* Which finger joint a joint of the made skeleton is, by its name: true with the hand,
 * finger and joint (0 to 2, 3 for the tip). */
static bool
finger_of_joint(const char *name, int *out_h, int *out_f, int *out_k)
{
    for (int h = 0; h < HD_HAND_COUNT; ++h)
        for (int f = 0; f < HD_FINGER_COUNT; ++f)
            for (int k = 0; k <= HD_FINGER_JOINTS; ++k) {
                char tip[SK_NAME_MAX];
                tip_name(h, f, tip, sizeof tip);
                const char *own = k < HD_FINGER_JOINTS
                                      ? hd_vrm_bone_name((enum hd_hand)h, f * HD_FINGER_JOINTS + k)
                                      : tip;
                if (strcmp(own, name) == 0) {
                    *out_h = h, *out_f = f, *out_k = k;
                    return true;
                }
            }
    return false;
}

/* The hand model each hand of `sk` wears: the default hand sized so its middle knuckle
 * is where the skeleton's hand end (the knuckles) is. */
static enum em_result
made_hand_model(const struct sk_skeleton *sk, int h, struct hd_model *out, struct em_error *err)
{
    struct hd_model def;
    enum em_result r = hd_model_init(&(struct hd_model_desc){.hand = (enum hd_hand)h}, &def, err);
    if (r != EM_OK)
        return r;
    const int hand = sk->bone_joint[h == HD_RIGHT ? SK_RIGHT_HAND : SK_LEFT_HAND];
    const int end = sk->bone_joint[h == HD_RIGHT ? SK_RIGHT_HAND_END : SK_LEFT_HAND_END];
    float length = HD_DEFAULT_HAND_LENGTH_M;
    if (hand >= 0 && end >= 0)
        length *= m_vec3_distance(sk->rest_position_m[hand], sk->rest_position_m[end]) /
                  m_vec3_length(def.base_m[HD_MIDDLE]);
    length = m_clampf(length, HD_MIN_HAND_LENGTH_M, HD_MAX_HAND_LENGTH_M);
    return hd_model_init(&(struct hd_model_desc){.hand = (enum hd_hand)h, .hand_length_m = length},
                         out, err);
}

/* `sk` with five fingers on each hand: three bones each (VRM 1.0's names) and a tip,
 * placed by the hand model's forward kinematics in the humanoid's axes
 * (hd_pose_humanoid_locals) at its rest, or bent and turned as `d` asks for tests. */
static enum em_result
with_fingers(const struct av_make_desc *desc, const struct sk_skeleton *sk, struct sk_skeleton *out,
             struct em_error *err)
{
    enum { PER_HAND = HD_FINGER_COUNT * (HD_FINGER_JOINTS + 1) };
    const int count = sk->joint_count + HD_HAND_COUNT * PER_HAND;
    struct sk_joint_desc *d = calloc((size_t)count, sizeof *d);
    char(*names)[SK_NAME_MAX] = calloc(HD_HAND_COUNT * PER_HAND, sizeof *names);
    if (!d || !names) {
        free(d);
        free(names);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "av_make_glb: out of memory");
    }
    for (int j = 0; j < sk->joint_count; ++j) {
        d[j].name = sk->name[j];
        d[j].parent = sk->parent[j] >= 0 ? sk->name[sk->parent[j]] : NULL;
        m_vec3_copy(sk->offset_m[j], d[j].offset_m);
        d[j].limit = sk->limit[j];
    }
    enum em_result r = EM_OK;
    int n = sk->joint_count;
    for (int h = 0; h < HD_HAND_COUNT && r == EM_OK; ++h) {
        struct hd_model model;
        if ((r = made_hand_model(sk, h, &model, err)) != EM_OK)
            break;
        struct hd_pose rest;
        memset(&rest, 0, sizeof rest);
        for (int f = 0; f < HD_FINGER_COUNT; ++f)
            for (int k = 0; k < HD_FINGER_JOINTS; ++k)
                rest.flex_rad[f][k] = desc->finger_rest_curl_rad;
        float rot[HD_JOINT_COUNT][4], off[HD_JOINT_COUNT][3];
        hd_pose_humanoid_locals(&model, &rest, rot, off);
        /* The hand's turn about the forearm (+X for the left arm, -X for the right). */
        versor turn;
        const vec3 arm = {h == HD_RIGHT ? -1.0f : 1.0f, 0.0f, 0.0f};
        m_quat_from_axis_angle(arm, desc->hand_rest_turn_rad, turn);
        const int hand = sk->bone_joint[h == HD_RIGHT ? SK_RIGHT_HAND : SK_LEFT_HAND];
        for (int f = 0; f < HD_FINGER_COUNT; ++f) {
            versor g; /* the finger's global rotation so far (humanoid axes) */
            m_quat_copy(turn, g);
            for (int k = 0; k <= HD_FINGER_JOINTS; ++k, ++n) {
                const int j = f * HD_FINGER_JOINTS + k;
                char *name = names[n - sk->joint_count];
                vec3 o;
                if (k < HD_FINGER_JOINTS) {
                    snprintf(name, SK_NAME_MAX, "%s", hd_vrm_bone_name((enum hd_hand)h, j));
                    m_vec3_copy(off[j], o);
                } else { /* the tip: the distal bone's length along the finger */
                    tip_name(h, f, name, SK_NAME_MAX);
                    m_vec3_scale(off[j - 1], model.bone_m[f][2] / model.bone_m[f][1], o);
                }
                m_quat_rotate(g, o, d[n].offset_m);
                if (k < HD_FINGER_JOINTS) {
                    versor t;
                    m_quat_mul(g, rot[j], t);
                    m_quat_copy(t, g);
                }
                d[n].name = name;
                d[n].parent = k == 0 ? sk->name[hand] : names[n - 1 - sk->joint_count];
            }
        }
    }
    if (r == EM_OK)
        r = sk_skeleton_create(d, n, "avatar skeleton with fingers", out, err);
    free(d);
    free(names);
    return r;
}

/* A capsule on each finger bone, of the model's radii at its joints. */
static void
build_fingers(const struct sk_skeleton *sk, struct mesh_builder *m)
{
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        struct hd_model model;
        struct em_error err;
        if (made_hand_model(sk, h, &model, &err) != EM_OK)
            continue;
        for (int j = 0; j < sk->joint_count; ++j) {
            int fh, f, k;
            if (!finger_of_joint(sk->name[j], &fh, &f, &k) || fh != h || k == HD_FINGER_JOINTS)
                continue;
            const int child = first_child(sk, j);
            if (child < 0)
                continue;
            struct capsule c = {.parent = sk->parent[j],
                                .joint = j,
                                .child = k + 1 < HD_FINGER_JOINTS ? child : -1,
                                .material = h == HD_RIGHT ? MAT_RIGHT : MAT_LEFT};
            m_vec3_copy(sk->rest_position_m[j], c.a);
            m_vec3_copy(sk->rest_position_m[child], c.b);
            c.ra[0] = c.ra[1] = model.radius_m[f][k];
            c.rb[0] = c.rb[1] = model.radius_m[f][k + 1];
            add_capsule(m, &c, 6); /* thin: six sides are round enough */
        }
    }
}

/* ---- glTF JSON ---- */

struct writer {
    cJSON *root, *accessors, *views;
    struct bytes bin;
    bool failed;
};

static int
add_view(struct writer *w, const void *data, size_t n)
{
    const size_t offset = w->bin.size;
    if (!bytes_append(&w->bin, data, n))
        w->failed = true;
    cJSON *v = cJSON_CreateObject();
    cJSON_AddNumberToObject(v, "buffer", 0);
    cJSON_AddNumberToObject(v, "byteOffset", (double)offset);
    cJSON_AddNumberToObject(v, "byteLength", (double)n);
    cJSON_AddItemToArray(w->views, v);
    return cJSON_GetArraySize(w->views) - 1;
}

static int
add_accessor(struct writer *w, const void *data, size_t n, int component, int count,
             const char *type, const float *min3, const float *max3)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddNumberToObject(a, "bufferView", add_view(w, data, n));
    cJSON_AddNumberToObject(a, "componentType", component);
    cJSON_AddNumberToObject(a, "count", count);
    cJSON_AddStringToObject(a, "type", type);
    if (min3 && max3) {
        cJSON_AddItemToObject(a, "min", cJSON_CreateFloatArray(min3, 3));
        cJSON_AddItemToObject(a, "max", cJSON_CreateFloatArray(max3, 3));
    }
    cJSON_AddItemToArray(w->accessors, a);
    return cJSON_GetArraySize(w->accessors) - 1;
}

#define GL_UNSIGNED_SHORT_ 5123
#define GL_UNSIGNED_INT_ 5125
#define GL_FLOAT_ 5126

/* Vertex attributes of `m` as accessors; positions and normals turned by `flip` (x and z
 * negated: a model facing -Z). Fills attribute indices (position, normal, uv, joints,
 * weights; the last three -1 when `skinned` is false). */
static void
add_attributes(struct writer *w, const struct mesh_builder *m, bool flip, bool skinned,
               int out_attr[5])
{
    const size_t n = (size_t)m->count;
    float *pos = malloc(n * 3 * sizeof *pos), *nrm = malloc(n * 3 * sizeof *nrm);
    float *uv = malloc(n * 2 * sizeof *uv), *wt = malloc(n * 4 * sizeof *wt);
    uint16_t *jt = malloc(n * 4 * sizeof *jt);
    if (!pos || !nrm || !uv || !wt || !jt) {
        w->failed = true;
    } else {
        float lo[3] = {1e30f, 1e30f, 1e30f}, hi[3] = {-1e30f, -1e30f, -1e30f};
        for (size_t i = 0; i < n; ++i) {
            const struct gen_vertex *v = &m->v[i];
            for (int k = 0; k < 3; ++k) {
                const float s = flip && k != 1 ? -1.0f : 1.0f;
                pos[3 * i + (size_t)k] = s * v->p[k];
                nrm[3 * i + (size_t)k] = s * v->n[k];
                lo[k] = fminf(lo[k], pos[3 * i + (size_t)k]);
                hi[k] = fmaxf(hi[k], pos[3 * i + (size_t)k]);
            }
            for (int k = 0; k < 4; ++k) {
                jt[4 * i + (size_t)k] = v->j[k];
                wt[4 * i + (size_t)k] = v->w[k];
            }
            uv[2 * i] = v->uv[0], uv[2 * i + 1] = v->uv[1];
        }
        out_attr[0] = add_accessor(w, pos, n * 12, GL_FLOAT_, m->count, "VEC3", lo, hi);
        out_attr[1] = add_accessor(w, nrm, n * 12, GL_FLOAT_, m->count, "VEC3", NULL, NULL);
        out_attr[2] = add_accessor(w, uv, n * 8, GL_FLOAT_, m->count, "VEC2", NULL, NULL);
        out_attr[3] = out_attr[4] = -1;
        if (skinned) {
            out_attr[3] =
                add_accessor(w, jt, n * 8, GL_UNSIGNED_SHORT_, m->count, "VEC4", NULL, NULL);
            out_attr[4] = add_accessor(w, wt, n * 16, GL_FLOAT_, m->count, "VEC4", NULL, NULL);
        }
    }
    free(pos), free(nrm), free(uv), free(wt), free(jt);
}

static cJSON *
make_mesh(struct writer *w, const struct mesh_builder *m, bool flip, bool skinned, const char *name)
{
    int attr[5] = {-1, -1, -1, -1, -1};
    add_attributes(w, m, flip, skinned, attr);
    cJSON *mesh = cJSON_CreateObject();
    cJSON_AddStringToObject(mesh, "name", name);
    cJSON *prims = cJSON_AddArrayToObject(mesh, "primitives");
    for (int mat = 0; mat < MAT_COUNT && !w->failed; ++mat) {
        if (m->idx_count[mat] == 0)
            continue;
        cJSON *p = cJSON_CreateObject();
        cJSON *a = cJSON_AddObjectToObject(p, "attributes");
        cJSON_AddNumberToObject(a, "POSITION", attr[0]);
        cJSON_AddNumberToObject(a, "NORMAL", attr[1]);
        cJSON_AddNumberToObject(a, "TEXCOORD_0", attr[2]);
        if (skinned) {
            cJSON_AddNumberToObject(a, "JOINTS_0", attr[3]);
            cJSON_AddNumberToObject(a, "WEIGHTS_0", attr[4]);
        }
        cJSON_AddNumberToObject(p, "indices",
                                add_accessor(w, m->idx[mat], (size_t)m->idx_count[mat] * 4,
                                             GL_UNSIGNED_INT_, m->idx_count[mat], "SCALAR", NULL,
                                             NULL));
        cJSON_AddNumberToObject(p, "material", mat);
        cJSON_AddItemToArray(prims, p);
    }
    return mesh;
}

static float
srgb_to_linear(float c)
{
    return powf(c, 2.2f);
}

static const char *k_material_names[MAT_COUNT] = {"Body", "Left", "Right", "Eyes"};
static const float k_material_srgb[MAT_COUNT][3] = {
    {0.92f, 0.80f, 0.58f}, /* the mirror view's palette (render/r_internal.h) */
    {0.98f, 0.52f, 0.18f},
    {0.20f, 0.58f, 1.00f},
    {0.10f, 0.11f, 0.14f},
};

static void
add_materials(struct writer *w, enum av_make_rig rig, int texture_index)
{
    cJSON *mats = cJSON_AddArrayToObject(w->root, "materials");
    for (int i = 0; i < MAT_COUNT; ++i) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "name", k_material_names[i]);
        cJSON *pbr = cJSON_AddObjectToObject(m, "pbrMetallicRoughness");
        const float c[4] = {srgb_to_linear(k_material_srgb[i][0]),
                            srgb_to_linear(k_material_srgb[i][1]),
                            srgb_to_linear(k_material_srgb[i][2]), 1.0f};
        cJSON_AddItemToObject(pbr, "baseColorFactor", cJSON_CreateFloatArray(c, 4));
        cJSON_AddNumberToObject(pbr, "metallicFactor", 0.0);
        cJSON_AddNumberToObject(pbr, "roughnessFactor", 0.8);
        if (i == MAT_CENTER && texture_index >= 0) {
            cJSON *t = cJSON_AddObjectToObject(pbr, "baseColorTexture");
            cJSON_AddNumberToObject(t, "index", texture_index);
        }
        if (i == MAT_EYES) { /* cut out (they are opaque: the mode is what is shown) */
            cJSON_AddStringToObject(m, "alphaMode", "MASK");
            cJSON_AddNumberToObject(m, "alphaCutoff", 0.25);
        }
        if (i == MAT_EYES && rig == AV_MAKE_VRM1) {
            cJSON *ext = cJSON_AddObjectToObject(m, "extensions");
            cJSON *mt = cJSON_AddObjectToObject(ext, "VRMC_materials_mtoon");
            cJSON_AddStringToObject(mt, "specVersion", "1.0");
            cJSON_AddObjectToObject(ext, "KHR_materials_unlit");
        }
        cJSON_AddItemToArray(mats, m);
    }
}

/* A 16 x 16 texture of faint horizontal stripes (near white: the factor gives the colour). */
static int
add_texture(struct writer *w)
{
    uint8_t rgba[16 * 16 * 4];
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 16; ++x) {
            const uint8_t v = (y / 2) % 2 ? 255 : 246;
            uint8_t *p = rgba + (y * 16 + x) * 4;
            p[0] = p[1] = p[2] = v, p[3] = 255;
        }
    size_t size = 0;
    uint8_t *png = av_image_encode_png(rgba, 16, 16, &size);
    if (!png) {
        w->failed = true;
        return -1;
    }
    cJSON *images = cJSON_AddArrayToObject(w->root, "images");
    cJSON *img = cJSON_CreateObject();
    cJSON_AddNumberToObject(img, "bufferView", add_view(w, png, size));
    cJSON_AddStringToObject(img, "mimeType", "image/png");
    cJSON_AddStringToObject(img, "name", "stripes");
    cJSON_AddItemToArray(images, img);
    free(png);
    cJSON *samplers = cJSON_AddArrayToObject(w->root, "samplers");
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "magFilter", 9729);
    cJSON_AddNumberToObject(s, "minFilter", 9729);
    cJSON_AddItemToArray(samplers, s);
    cJSON *textures = cJSON_AddArrayToObject(w->root, "textures");
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "sampler", 0);
    cJSON_AddNumberToObject(t, "source", 0);
    cJSON_AddItemToArray(textures, t);
    return 0;
}

/* ---- Node names ---- */

static const char *
mixamo_name(enum sk_bone b)
{
    static const char *names[SK_BONE_COUNT] = {
        [SK_HIPS] = "Hips",
        [SK_SPINE] = "Spine",
        [SK_CHEST] = "Spine1",
        [SK_UPPER_CHEST] = "Spine2",
        [SK_NECK] = "Neck",
        [SK_HEAD] = "Head",
        [SK_LEFT_SHOULDER] = "LeftShoulder",
        [SK_LEFT_UPPER_ARM] = "LeftArm",
        [SK_LEFT_LOWER_ARM] = "LeftForeArm",
        [SK_LEFT_HAND] = "LeftHand",
        [SK_RIGHT_SHOULDER] = "RightShoulder",
        [SK_RIGHT_UPPER_ARM] = "RightArm",
        [SK_RIGHT_LOWER_ARM] = "RightForeArm",
        [SK_RIGHT_HAND] = "RightHand",
        [SK_LEFT_UPPER_LEG] = "LeftUpLeg",
        [SK_LEFT_LOWER_LEG] = "LeftLeg",
        [SK_LEFT_FOOT] = "LeftFoot",
        [SK_LEFT_TOES] = "LeftToeBase",
        [SK_RIGHT_UPPER_LEG] = "RightUpLeg",
        [SK_RIGHT_LOWER_LEG] = "RightLeg",
        [SK_RIGHT_FOOT] = "RightFoot",
        [SK_RIGHT_TOES] = "RightToeBase",
        [SK_HEAD_TOP] = "HeadTop_End",
        [SK_LEFT_HAND_END] = "LeftHand_End",
        [SK_RIGHT_HAND_END] = "RightHand_End",
        [SK_LEFT_TOES_END] = "LeftToe_End",
        [SK_RIGHT_TOES_END] = "RightToe_End",
    };
    return b >= 0 && b < SK_BONE_COUNT && names[b] ? names[b] : "Extra";
}

/* VRoid's style: J_Bip_C_Hips, J_Bip_L_UpperArm (the name map knows them, but a VRM
 * file's bones come from its humanBones alone). */
static void
vroid_name(enum sk_bone b, const char *vrm, char *out, size_t size)
{
    char side = 'C';
    const char *rest = vrm;
    if (strncmp(vrm, "left", 4) == 0)
        side = 'L', rest = vrm + 4;
    else if (strncmp(vrm, "right", 5) == 0)
        side = 'R', rest = vrm + 5;
    snprintf(out, size, "J_Bip_%c_%c%s%s", side, (char)(rest[0] & ~0x20), rest + 1,
             b >= SK_HEAD_TOP ? "_Tip" : "");
}

/* A finger joint's node name in the rig's style (k 3: the tip). */
static void
finger_node_name(const struct av_make_desc *d, int h, int f, int k, char *out, size_t size)
{
    static const char *const mixamo[HD_FINGER_COUNT] = {"Thumb", "Index", "Middle", "Ring",
                                                        "Pinky"};
    static const char *const vroid[HD_FINGER_COUNT] = {"Thumb", "Index", "Middle", "Ring",
                                                       "Little"};
    if (d->rig == AV_MAKE_MIXAMO)
        snprintf(out, size, "mixamorig:%sHand%s%d", h == HD_RIGHT ? "Right" : "Left", mixamo[f],
                 k + 1);
    else
        snprintf(out, size, "J_Bip_%c_%s%d%s", h == HD_RIGHT ? 'R' : 'L', vroid[f],
                 k < HD_FINGER_JOINTS ? k + 1 : HD_FINGER_JOINTS,
                 k < HD_FINGER_JOINTS ? "" : "_Tip");
}

static void
node_name(const struct av_make_desc *d, const struct sk_skeleton *sk, int j, char *out, size_t size)
{
    int h, f, k;
    if (d->anonymous_nodes)
        snprintf(out, size, "bone%d", j);
    else if (d->rig != AV_MAKE_PLAIN && finger_of_joint(sk->name[j], &h, &f, &k))
        finger_node_name(d, h, f, k, out, size);
    else if (d->rig == AV_MAKE_MIXAMO)
        snprintf(out, size, "mixamorig:%s", mixamo_name(sk->bone[j]));
    else if (d->rig == AV_MAKE_PLAIN)
        snprintf(out, size, "%s", sk->name[j]);
    else
        vroid_name(sk->bone[j], sk->name[j], out, size);
}

static bool
omitted(const char *list, const char *name)
{
    if (!list)
        return false;
    const size_t n = strlen(name);
    for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return true;
    return false;
}

static void
add_vrm_extension(struct writer *w, const struct av_make_desc *d, const struct sk_skeleton *sk)
{
    cJSON *exts = cJSON_AddObjectToObject(w->root, "extensions");
    cJSON *used = cJSON_AddArrayToObject(w->root, "extensionsUsed");
    const char *title = d->title ? d->title : "embody";
    if (d->rig == AV_MAKE_VRM1) {
        cJSON_AddItemToArray(used, cJSON_CreateString("VRMC_vrm"));
        cJSON_AddItemToArray(used, cJSON_CreateString("VRMC_materials_mtoon"));
        cJSON_AddItemToArray(used, cJSON_CreateString("KHR_materials_unlit"));
        cJSON *vrm = cJSON_AddObjectToObject(exts, "VRMC_vrm");
        cJSON_AddStringToObject(vrm, "specVersion", d->spec_version ? d->spec_version : "1.0");
        cJSON *meta = cJSON_AddObjectToObject(vrm, "meta");
        cJSON_AddStringToObject(meta, "name", title);
        cJSON_AddStringToObject(meta, "version", "1");
        cJSON *authors = cJSON_AddArrayToObject(meta, "authors");
        cJSON_AddItemToArray(authors, cJSON_CreateString("embody (generated)"));
        cJSON_AddStringToObject(meta, "licenseUrl", "https://vrm.dev/licenses/1.0/");
        cJSON_AddStringToObject(meta, "avatarPermission", "everyone");
        cJSON_AddBoolToObject(meta, "allowRedistribution", true);
        cJSON *hb = cJSON_AddObjectToObject(cJSON_AddObjectToObject(vrm, "humanoid"), "humanBones");
        for (int j = 0; j < sk->joint_count; ++j) {
            int h, f, k;
            const bool finger = finger_of_joint(sk->name[j], &h, &f, &k) && k < HD_FINGER_JOINTS;
            if ((!finger && (sk->bone[j] == SK_BONE_NONE || sk->bone[j] >= SK_HEAD_TOP)) ||
                omitted(d->omit_bones, sk->name[j]))
                continue;
            cJSON_AddNumberToObject(cJSON_AddObjectToObject(hb, sk->name[j]), "node", j);
        }
        return;
    }
    cJSON_AddItemToArray(used, cJSON_CreateString("VRM"));
    cJSON *vrm = cJSON_AddObjectToObject(exts, "VRM");
    cJSON_AddStringToObject(vrm, "exporterVersion", "embody make-avatar");
    cJSON_AddStringToObject(vrm, "specVersion", d->spec_version ? d->spec_version : "0.0");
    cJSON *meta = cJSON_AddObjectToObject(vrm, "meta");
    cJSON_AddStringToObject(meta, "title", title);
    cJSON_AddStringToObject(meta, "author", "embody (generated)");
    cJSON_AddStringToObject(meta, "allowedUserName", "Everyone");
    cJSON_AddStringToObject(meta, "licenseName", "CC0");
    cJSON *hb = cJSON_AddArrayToObject(cJSON_AddObjectToObject(vrm, "humanoid"), "humanBones");
    for (int j = 0; j < sk->joint_count; ++j) {
        int h, f, k;
        const bool finger = finger_of_joint(sk->name[j], &h, &f, &k) && k < HD_FINGER_JOINTS;
        if ((!finger && (sk->bone[j] == SK_BONE_NONE || sk->bone[j] >= SK_HEAD_TOP)) ||
            omitted(d->omit_bones, sk->name[j]))
            continue;
        cJSON *b = cJSON_CreateObject();
        /* VRM 0.x names the fingers as Unity does (its thumb one bone further out), in
         * lower camel case. */
        char vrm0[SK_NAME_MAX];
        snprintf(vrm0, sizeof vrm0, "%s",
                 finger ? hd_unity_bone_name((enum hd_hand)h, f * HD_FINGER_JOINTS + k)
                        : sk->name[j]);
        vrm0[0] = (char)(vrm0[0] | 0x20);
        cJSON_AddStringToObject(b, "bone", vrm0);
        cJSON_AddNumberToObject(b, "node", j);
        cJSON_AddBoolToObject(b, "useDefaultValues", true);
        cJSON_AddItemToArray(hb, b);
    }
    cJSON *props = cJSON_AddArrayToObject(vrm, "materialProperties");
    for (int i = 0; i < MAT_COUNT; ++i) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", k_material_names[i]);
        cJSON_AddStringToObject(p, "shader", i == MAT_EYES ? "VRM/MToon" : "VRM_USE_GLTFSHADER");
        cJSON_AddItemToArray(props, p);
    }
}

/* For `bone_axes`: every joint node's global rest transform in the file, its +Y along its
 * bone (to its first child; a leaf keeps its parent's axes), and the model turned half a
 * circle about +Y when `flip`. */
static mat4 *
bone_axes_globals(const struct sk_skeleton *sk, bool flip)
{
    mat4 *g = calloc((size_t)sk->joint_count, sizeof *g);
    versor *q = calloc((size_t)sk->joint_count, sizeof *q);
    if (!g || !q) {
        free(g);
        free(q);
        return NULL;
    }
    const vec3 y = {0.0f, 1.0f, 0.0f};
    mat4 turn = GLM_MAT4_IDENTITY_INIT;
    if (flip)
        turn[0][0] = turn[2][2] = -1.0f;
    for (int j = 0; j < sk->joint_count; ++j) {
        const int c = first_child(sk, j);
        vec3 dir;
        if (c >= 0) {
            m_vec3_sub(sk->rest_position_m[c], sk->rest_position_m[j], dir);
            m_vec3_normalize_or(dir, y, dir);
            m_quat_from_to(y, dir, q[j]);
        } else if (sk->parent[j] >= 0) {
            m_quat_copy(q[sk->parent[j]], q[j]);
        } else {
            m_quat_identity(q[j]);
        }
        mat4 r, t;
        glm_quat_mat4(q[j], r);
        glm_translate_make(t, (float *)sk->rest_position_m[j]);
        glm_mat4_mul(t, r, g[j]);
        glm_mat4_mul(turn, g[j], g[j]);
    }
    free(q);
    return g;
}

static void
add_matrix(cJSON *node, const mat4 parent_global, const mat4 global)
{
    mat4 inv, local;
    glm_mat4_inv((vec4 *)parent_global, inv);
    glm_mat4_mul(inv, (vec4 *)global, local);
    cJSON_AddItemToObject(node, "matrix", cJSON_CreateFloatArray((const float *)local, 16));
}

static void
add_nodes(struct writer *w, const struct av_make_desc *d, const struct sk_skeleton *sk, bool flip,
          int body_mesh, int eyes_mesh)
{
    mat4 *g = d->bone_axes ? bone_axes_globals(sk, flip) : NULL;
    if (d->bone_axes && !g) {
        w->failed = true;
        return;
    }
    const mat4 identity = GLM_MAT4_IDENTITY_INIT;
    const float s = flip ? -1.0f : 1.0f;
    const float k = sk_humanoid_height(sk) / 1.75f;
    cJSON *nodes = cJSON_AddArrayToObject(w->root, "nodes");
    for (int j = 0; j < sk->joint_count; ++j) {
        cJSON *n = cJSON_CreateObject();
        char name[96];
        node_name(d, sk, j, name, sizeof name);
        cJSON_AddStringToObject(n, "name", name);
        const float t[3] = {s * sk->offset_m[j][0], sk->offset_m[j][1], s * sk->offset_m[j][2]};
        if (g)
            add_matrix(n, sk->parent[j] >= 0 ? g[sk->parent[j]] : identity, g[j]);
        else
            cJSON_AddItemToObject(n, "translation", cJSON_CreateFloatArray(t, 3));
        cJSON *children = cJSON_CreateArray();
        for (int c = j + 1; c < sk->joint_count; ++c)
            if (sk->parent[c] == j)
                cJSON_AddItemToArray(children, cJSON_CreateNumber(c));
        if (sk->bone[j] == SK_HEAD)
            cJSON_AddItemToArray(children, cJSON_CreateNumber(sk->joint_count + 1));
        if (cJSON_GetArraySize(children) > 0)
            cJSON_AddItemToObject(n, "children", children);
        else
            cJSON_Delete(children);
        cJSON_AddItemToArray(nodes, n);
    }
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "name", "Body");
    cJSON_AddNumberToObject(body, "mesh", body_mesh);
    cJSON_AddNumberToObject(body, "skin", 0);
    cJSON_AddItemToArray(nodes, body);
    cJSON *eyes = cJSON_CreateObject();
    cJSON_AddStringToObject(eyes, "name", "Eyes");
    cJSON_AddNumberToObject(eyes, "mesh", eyes_mesh);
    /* In front of the face, a little above the head joint (the skull base). */
    const float face_z = 0.1f * k + 0.02f * k;
    const float t[3] = {0.0f, 0.085f * k, s * face_z};
    if (g) {
        const int head = sk->bone_joint[SK_HEAD];
        mat4 eyes_global;
        glm_mat4_copy(g[head], eyes_global);
        /* The head's place and the model's turn, without the head bone's axes. */
        eyes_global[0][0] = eyes_global[2][2] = s;
        eyes_global[1][1] = 1.0f;
        eyes_global[0][1] = eyes_global[0][2] = eyes_global[1][0] = 0.0f;
        eyes_global[1][2] = eyes_global[2][0] = eyes_global[2][1] = 0.0f;
        for (int a = 0; a < 3; ++a)
            eyes_global[3][a] += t[a];
        add_matrix(eyes, g[head], eyes_global);
    } else {
        cJSON_AddItemToObject(eyes, "translation", cJSON_CreateFloatArray(t, 3));
        if (flip) {
            const float q[4] = {0.0f, 1.0f, 0.0f, 0.0f}; /* the eyes' mesh is made facing +Z */
            cJSON_AddItemToObject(eyes, "rotation", cJSON_CreateFloatArray(q, 4));
        }
    }
    cJSON_AddItemToArray(nodes, eyes);
    free(g);
}

static void
add_skin(struct writer *w, const struct sk_skeleton *sk, bool flip, bool bone_axes)
{
    const float s = flip ? -1.0f : 1.0f;
    const size_t n = (size_t)sk->joint_count;
    float *ibm = calloc(n * 16, sizeof *ibm);
    mat4 *g = bone_axes ? bone_axes_globals(sk, flip) : NULL;
    if (!ibm || (bone_axes && !g)) {
        free(ibm);
        free(g);
        w->failed = true;
        return;
    }
    cJSON *skin = cJSON_CreateObject();
    cJSON *joints = cJSON_AddArrayToObject(skin, "joints");
    for (size_t j = 0; j < n; ++j) {
        float *m = ibm + 16 * j; /* column-major: a translation by minus the rest position */
        m[0] = m[5] = m[10] = m[15] = 1.0f;
        m[12] = -s * sk->rest_position_m[j][0];
        m[13] = -sk->rest_position_m[j][1];
        m[14] = -s * sk->rest_position_m[j][2];
        if (g) { /* the inverse of the joint node's global transform */
            mat4 inv;
            glm_mat4_inv(g[j], inv);
            memcpy(m, inv, sizeof inv);
        }
        cJSON_AddItemToArray(joints, cJSON_CreateNumber((double)j));
    }
    cJSON_AddNumberToObject(skin, "inverseBindMatrices",
                            add_accessor(w, ibm, n * 64, GL_FLOAT_, (int)n, "MAT4", NULL, NULL));
    cJSON_AddNumberToObject(skin, "skeleton", 0);
    free(ibm);
    free(g);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(w->root, "skins"), skin);
}

static bool
write_glb(struct writer *w, uint8_t **out_bytes, size_t *out_size)
{
    char *json = cJSON_PrintUnformatted(w->root);
    if (!json)
        return false;
    size_t json_len = strlen(json);
    const size_t json_padded = (json_len + 3) & ~(size_t)3;
    const size_t total = 12 + 8 + json_padded + 8 + w->bin.size;
    uint8_t *b = malloc(total);
    if (!b) {
        free(json);
        return false;
    }
    const uint32_t header[5] = {0x46546C67u, 2u, (uint32_t)total, (uint32_t)json_padded,
                                0x4E4F534Au};
    for (int i = 0; i < 5; ++i)
        for (int k = 0; k < 4; ++k)
            b[4 * i + k] = (uint8_t)(header[i] >> (8 * k));
    memcpy(b + 20, json, json_len);
    memset(b + 20 + json_len, ' ', json_padded - json_len);
    uint8_t *bin = b + 20 + json_padded;
    const uint32_t bin_header[2] = {(uint32_t)w->bin.size, 0x004E4942u};
    for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 4; ++k)
            bin[4 * i + k] = (uint8_t)(bin_header[i] >> (8 * k));
    if (w->bin.size)
        memcpy(bin + 8, w->bin.data, w->bin.size);
    free(json);
    *out_bytes = b;
    *out_size = total;
    return true;
}

enum em_result
av_make_glb(const struct av_make_desc *desc, uint8_t **out_bytes, size_t *out_size,
            struct em_error *err)
{
    *out_bytes = NULL;
    *out_size = 0;
    const struct sk_skeleton *bones = desc->skeleton;
    if (!bones || sk_humanoid_validate(bones, "avatar skeleton", err) != EM_OK)
        return bones ? EM_ERROR_INVALID_ARGUMENT
                     : em_fail(err, EM_ERROR_INVALID_ARGUMENT, "av_make_glb: no skeleton");
    struct sk_skeleton full = {0};
    if (with_fingers(desc, bones, &full, err) != EM_OK)
        return EM_ERROR_INVALID_ARGUMENT;
    const struct sk_skeleton *sk = &full;
    const int sides = desc->detail > 0 ? (desc->detail < 6 ? 6 : desc->detail) : 12;
    const bool flip = desc->rig == AV_MAKE_VRM0;
    const bool vrm = desc->rig == AV_MAKE_VRM0 || desc->rig == AV_MAKE_VRM1;

    struct mesh_builder body = {0}, eyes = {0};
    build_body(sk, sides, &body);
    build_fingers(sk, &body);
    build_eyes(sk_humanoid_height(sk) / 1.75f, sides, &eyes);

    struct writer w = {0};
    w.root = cJSON_CreateObject();
    cJSON *asset = cJSON_AddObjectToObject(w.root, "asset");
    cJSON_AddStringToObject(asset, "version", "2.0");
    cJSON_AddStringToObject(asset, "generator", "embody make-avatar");
    w.accessors = cJSON_AddArrayToObject(w.root, "accessors");
    w.views = cJSON_AddArrayToObject(w.root, "bufferViews");
    cJSON_AddNumberToObject(w.root, "scene", 0);
    cJSON *scene = cJSON_CreateObject();
    cJSON *roots = cJSON_AddArrayToObject(scene, "nodes");
    cJSON_AddItemToArray(roots, cJSON_CreateNumber(0));
    cJSON_AddItemToArray(roots, cJSON_CreateNumber(sk->joint_count));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(w.root, "scenes"), scene);

    cJSON *meshes = cJSON_AddArrayToObject(w.root, "meshes");
    cJSON_AddItemToArray(meshes, make_mesh(&w, &body, flip, true, "Body"));
    cJSON_AddItemToArray(meshes, make_mesh(&w, &eyes, false, false, "Eyes"));
    add_nodes(&w, desc, sk, flip, 0, 1);
    add_skin(&w, sk, flip, desc->bone_axes);
    add_materials(&w, desc->rig, add_texture(&w));
    if (vrm)
        add_vrm_extension(&w, desc, sk);
    cJSON *buffers = cJSON_AddArrayToObject(w.root, "buffers");
    cJSON *buffer = cJSON_CreateObject();
    cJSON_AddNumberToObject(buffer, "byteLength", (double)w.bin.size);
    cJSON_AddItemToArray(buffers, buffer);

    bool ok = !w.failed && !body.failed && !eyes.failed && write_glb(&w, out_bytes, out_size);
    cJSON_Delete(w.root);
    free(w.bin.data);
    builder_fini(&body);
    builder_fini(&eyes);
    sk_skeleton_fini(&full);
    return ok ? EM_OK : em_fail(err, EM_ERROR_OUT_OF_MEMORY, "av_make_glb: out of memory");
}

enum em_result
av_make_file(const struct av_make_desc *desc, const char *path, struct em_error *err)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    enum em_result r = av_make_glb(desc, &bytes, &size, err);
    if (r != EM_OK)
        return r;
    FILE *f = fopen(path, "wb");
    if (!f)
        r = em_fail(err, EM_ERROR_IO, "%s: cannot write", path);
    else if (fwrite(bytes, 1, size, f) != size)
        r = em_fail(err, EM_ERROR_IO, "%s: write failed", path);
    if (f && fclose(f) != 0 && r == EM_OK)
        r = em_fail(err, EM_ERROR_IO, "%s: write failed", path);
    free(bytes);
    return r;
}
