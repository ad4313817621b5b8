/*
 * The shared IK benchmark (../shared/bench/README.md): reads problems.json, solves every
 * target set following the protocol (200 warm-up solves; cold mode resets to the rest
 * pose untimed; only the solve is timed with the monotonic clock), and prints the same
 * columns as the published figures. The humanoid problems are then solved again with
 * joint limits on: limits derived from the generator's own joint ranges (the box of Euler
 * angles each joint was sampled from), as a hinge for elbows and knees and the smallest
 * enclosing swing cone and twist range for ball joints, so every target stays reachable.
 *
 *     ik_bench [--problems FILE] [--only ID] [--mode pos|full|limits]... [--solves N]
 *              [--callgrind]
 *
 * --solves N: only the first N target sets of each problem (for slow runs under valgrind).
 * --repeat N: run each problem N times (default 3) and report the run whose median is
 *             the median of the N (this machine's timing moves by 20 % between passes).
 *
 * --callgrind: collect instructions only around solves (run under
 * valgrind --tool=callgrind --collect-atstart=no; tests/bench/callgrind.sh does this).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_TOGGLE_COLLECT
#endif

#include "embody/ik.h"
#include "embody/m_math.h"
#include "embody/skeleton.h"
#include "util/u_text.h"
#include "util/u_time.h"

#define WARMUP_SOLVES 200
/* --side-by-side runs P2_chain1000 on its first 1000 target sets: CCD and the Jacobian
 * methods take milliseconds per solve there. */
#define SIDE_BY_SIDE_BIG_SOLVES 1000

struct problem {
    const char *id;
    const char *kind;
    bool warm;
    struct sk_skeleton skeleton;
    int effector_count;
    int effector[IK_MAX_EFFECTORS];
    float tolerance_m;
    int max_iterations;
    int target_count;
    float (*targets)[IK_MAX_EFFECTORS][3];
};

/* The generator's node names and the humanoid bone names the limits and the solver's
 * choice of main bone go by. */
static const char *const bench_to_vrm[][2] = {
    {"L_shoulder", "leftShoulder"},  {"L_upper_arm", "leftUpperArm"},
    {"L_forearm", "leftLowerArm"},   {"L_hand", "leftHand"},
    {"R_shoulder", "rightShoulder"}, {"R_upper_arm", "rightUpperArm"},
    {"R_forearm", "rightLowerArm"},  {"R_hand", "rightHand"},
    {"L_thigh", "leftUpperLeg"},     {"L_shin", "leftLowerLeg"},
    {"L_foot", "leftFoot"},          {"L_toe", "leftToes"},
    {"R_thigh", "rightUpperLeg"},    {"R_shin", "rightLowerLeg"},
    {"R_foot", "rightFoot"},         {"R_toe", "rightToes"},
};

static const char *
vrm_name(const char *bench_name)
{
    for (size_t i = 0; i < sizeof bench_to_vrm / sizeof bench_to_vrm[0]; ++i)
        if (strcmp(bench_to_vrm[i][0], bench_name) == 0)
            return bench_to_vrm[i][1];
    return bench_name;
}

/* The generator's joint ranges in degrees (gen_problems.mjs, RANGES): per base name,
 * [x lo, x hi, y lo, y hi, z lo, z hi] for the local rotation Rz * Rx * Ry; the right
 * side mirrors y and z. */
struct bench_range {
    const char *base;
    float deg[6];
};
static const struct bench_range bench_ranges[] = {
    {"hips", {-10, 20, -30, 30, -10, 10}},  {"spine", {-15, 30, -15, 15, -15, 15}},
    {"chest", {-10, 25, -20, 20, -10, 10}}, {"neck", {-30, 40, -50, 50, -20, 20}},
    {"shoulder", {-5, 5, -15, 15, -5, 20}}, {"upper_arm", {-120, 40, -60, 60, -10, 90}},
    {"forearm", {-140, 0, 0, 0, 0, 0}},     {"thigh", {-90, 20, -30, 30, -15, 40}},
    {"shin", {0, 120, 0, 0, 0, 0}},         {"foot", {-20, 40, -10, 10, -15, 15}},
};

static bool
range_of(const char *bench_name, float out_deg[6])
{
    const int side = strncmp(bench_name, "L_", 2) == 0   ? 1
                     : strncmp(bench_name, "R_", 2) == 0 ? -1
                                                         : 0;
    const char *base = side ? bench_name + 2 : bench_name;
    for (size_t i = 0; i < sizeof bench_ranges / sizeof bench_ranges[0]; ++i) {
        if (strcmp(bench_ranges[i].base, base) != 0)
            continue;
        memcpy(out_deg, bench_ranges[i].deg, sizeof bench_ranges[i].deg);
        if (side < 0) {
            const float y0 = out_deg[2], z0 = out_deg[4];
            out_deg[2] = -out_deg[3];
            out_deg[3] = -y0;
            out_deg[4] = -out_deg[5];
            out_deg[5] = -z0;
        }
        return true;
    }
    return false;
}

static void
euler_zxy(const float deg[3], float out[4])
{
    const float ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
    float qx[4], qy[4], qz[4];
    m_quat_from_axis_angle(ex, deg[0] * M_DEG_TO_RAD, qx);
    m_quat_from_axis_angle(ey, deg[1] * M_DEG_TO_RAD, qy);
    m_quat_from_axis_angle(ez, deg[2] * M_DEG_TO_RAD, qz);
    m_quat_mul(qx, qy, out);
    m_quat_mul(qz, out, out);
}

/* Hinge for single-axis ranges; otherwise the smallest cone (about the mean direction)
 * and twist range holding every sampled rotation of the box, plus a degree. */
static struct sk_limit
limit_from_range(const float deg[6], const float rest_dir[3])
{
    struct sk_limit limit = {0};
    if (deg[2] == deg[3] && deg[4] == deg[5] && deg[2] == 0 && deg[4] == 0) {
        limit.kind = SK_LIMIT_HINGE;
        m_vec3_set(limit.axis, 1, 0, 0);
        limit.min_rad = deg[0] * M_DEG_TO_RAD;
        limit.max_rad = deg[1] * M_DEG_TO_RAD;
        return limit;
    }
    enum { STEPS = 9 };
    float mean[3] = {0, 0, 0}, twist_lo = 1e9f, twist_hi = -1e9f;
    float dirs[STEPS * STEPS * STEPS][3];
    int n = 0;
    for (int a = 0; a < STEPS; ++a)
        for (int b = 0; b < STEPS; ++b)
            for (int c = 0; c < STEPS; ++c) {
                const float e[3] = {deg[0] + (deg[1] - deg[0]) * (float)a / (STEPS - 1),
                                    deg[2] + (deg[3] - deg[2]) * (float)b / (STEPS - 1),
                                    deg[4] + (deg[5] - deg[4]) * (float)c / (STEPS - 1)};
                float q[4];
                euler_zxy(e, q);
                m_quat_rotate(q, rest_dir, dirs[n]);
                m_vec3_add(mean, dirs[n], mean);
                const float t = m_quat_swing_twist(q, rest_dir, NULL, NULL);
                twist_lo = fminf(twist_lo, t);
                twist_hi = fmaxf(twist_hi, t);
                ++n;
            }
    limit.kind = SK_LIMIT_BALL;
    m_vec3_normalize_or(mean, rest_dir, limit.axis);
    float cone = 0.0f;
    for (int i = 0; i < n; ++i)
        cone = fmaxf(cone, acosf(m_clampf(m_vec3_dot(dirs[i], limit.axis), -1, 1)));
    limit.cone_rad = fminf(cone + M_DEG_TO_RAD, M_PI_F);
    limit.min_rad = fmaxf(twist_lo - M_DEG_TO_RAD, -M_PI_F);
    limit.max_rad = fminf(twist_hi + M_DEG_TO_RAD, M_PI_F);
    if (limit.max_rad - limit.min_rad > 1.5f * M_PI_F) {
        /* The sampled twists wrap around (large swings): leave the twist free. */
        limit.min_rad = -M_PI_F;
        limit.max_rad = M_PI_F;
    }
    return limit;
}

static void
add_bench_limits(struct sk_skeleton *sk, char (*bench_names)[SK_NAME_MAX])
{
    for (int j = 0; j < sk->joint_count; ++j) {
        float deg[6];
        const int c = sk->primary_child[j];
        if (c < 0 || !range_of(bench_names[j], deg))
            continue;
        float dir[3];
        const float up[3] = {0, 1, 0};
        m_vec3_normalize_or(sk->offset_m[c], up, dir);
        sk->limit[j] = limit_from_range(deg, dir);
    }
}

static bool
read_floats(const cJSON *array, int count, float *out)
{
    if (!cJSON_IsArray(array) || cJSON_GetArraySize(array) != count)
        return false;
    for (int i = 0; i < count; ++i) {
        const cJSON *v = cJSON_GetArrayItem(array, i);
        if (!cJSON_IsNumber(v))
            return false;
        out[i] = (float)v->valuedouble;
    }
    return true;
}

static bool
load_problem(const cJSON *p, const char *path, struct problem *out, bool rename_to_vrm)
{
    memset(out, 0, sizeof *out);
    const cJSON *nodes = cJSON_GetObjectItem(p, "nodes");
    const cJSON *effs = cJSON_GetObjectItem(p, "effectors");
    const cJSON *targets = cJSON_GetObjectItem(p, "targets");
    out->id = cJSON_GetStringValue(cJSON_GetObjectItem(p, "id"));
    out->kind = cJSON_GetStringValue(cJSON_GetObjectItem(p, "kind"));
    const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(p, "mode"));
    const cJSON *tol = cJSON_GetObjectItem(p, "tolerance");
    const cJSON *iters = cJSON_GetObjectItem(p, "max_iterations");
    if (!out->id || !out->kind || !mode || !cJSON_IsArray(nodes) || !cJSON_IsArray(effs) ||
        !cJSON_IsArray(targets) || !cJSON_IsNumber(tol) || !cJSON_IsNumber(iters)) {
        fprintf(stderr,
                "%s: a problem lacks id, kind, mode, nodes, effectors, targets, "
                "tolerance or max_iterations\n",
                path);
        return false;
    }
    out->warm = strcmp(mode, "warm") == 0;
    out->tolerance_m = (float)tol->valuedouble;
    out->max_iterations = iters->valueint;
    const int n = cJSON_GetArraySize(nodes);
    struct sk_joint_desc *descs = calloc((size_t)n, sizeof *descs);
    float(*global)[3] = calloc((size_t)n, sizeof *global);
    int *parent = calloc((size_t)n, sizeof *parent);
    bool ok = descs && global && parent;
    for (int i = 0; ok && i < n; ++i) {
        const cJSON *node = cJSON_GetArrayItem(nodes, i);
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(node, "name"));
        const cJSON *par = cJSON_GetObjectItem(node, "parent");
        ok = name && cJSON_IsNumber(par) && par->valueint < i &&
             read_floats(cJSON_GetObjectItem(node, "pos"), 3, global[i]);
        if (!ok)
            break;
        parent[i] = par->valueint;
        descs[i].name = rename_to_vrm ? vrm_name(name) : name;
    }
    for (int i = 0; ok && i < n; ++i) {
        descs[i].parent = parent[i] >= 0 ? descs[parent[i]].name : NULL;
        if (parent[i] >= 0)
            m_vec3_sub(global[i], global[parent[i]], descs[i].offset_m);
        else
            m_vec3_copy(global[i], descs[i].offset_m);
    }
    struct em_error err;
    if (ok && sk_skeleton_create(descs, n, path, &out->skeleton, &err) != EM_OK) {
        fprintf(stderr, "%s: problem %s: %s\n", path, out->id, err.message);
        ok = false;
    }
    if (ok && rename_to_vrm) {
        char(*bench_names)[SK_NAME_MAX] = calloc((size_t)n, sizeof *bench_names);
        for (int i = 0; bench_names && i < n; ++i) {
            const cJSON *node = cJSON_GetArrayItem(nodes, i);
            const int j = sk_skeleton_find(&out->skeleton, descs[i].name);
            snprintf(bench_names[j], SK_NAME_MAX, "%s",
                     cJSON_GetStringValue(cJSON_GetObjectItem(node, "name")));
        }
        if (bench_names)
            add_bench_limits(&out->skeleton, bench_names);
        free(bench_names);
    }
    out->effector_count = cJSON_GetArraySize(effs);
    ok = ok && out->effector_count > 0 && out->effector_count <= IK_MAX_EFFECTORS;
    for (int e = 0; ok && e < out->effector_count; ++e) {
        const int idx = cJSON_GetArrayItem(effs, e)->valueint;
        ok = idx >= 0 && idx < n;
        if (ok)
            out->effector[e] = sk_skeleton_find(&out->skeleton, descs[idx].name);
    }
    out->target_count = cJSON_GetArraySize(targets);
    out->targets = calloc((size_t)out->target_count, sizeof *out->targets);
    ok = ok && out->targets;
    for (int k = 0; ok && k < out->target_count; ++k) {
        const cJSON *set = cJSON_GetArrayItem(targets, k);
        ok = cJSON_IsArray(set) && cJSON_GetArraySize(set) == out->effector_count;
        for (int e = 0; ok && e < out->effector_count; ++e)
            ok = read_floats(cJSON_GetArrayItem(set, e), 3, out->targets[k][e]);
    }
    if (!ok)
        fprintf(stderr, "%s: problem %s is malformed\n", path, out->id ? out->id : "?");
    free(descs);
    free(global);
    free(parent);
    return ok;
}

struct result {
    double median_us, mean_us, mean_iterations, median_err, max_err, converged_pct, bone_dev;
    /* Limits rows: failures the solver reaches from another start (should have
     * converged), and failures no start reached (an upper bound on the target sets the
     * limits cannot reach). */
    int missed, unreached;
};

/* ---- Reachability of the failures (limits rows) ----------------------------------- */

#define RETRY_STARTS 8
#define RETRY_ITERATIONS 400

static uint32_t g_rng = 0x2545F491u;

static float
uniform01(void)
{
    g_rng = g_rng * 1664525u + 1013904223u;
    return (float)(g_rng >> 8) / 16777216.0f;
}

/* A random pose within every joint's limit (local rotations up to 90 degrees, then kept
 * within the limit), the root where the rest pose has it. */
static void
random_limited_pose(const struct sk_skeleton *sk, struct sk_pose *pose)
{
    sk_pose_set_rest(pose, sk);
    for (int j = 1; j < sk->joint_count; ++j) {
        float axis[3] = {uniform01() - 0.5f, uniform01() - 0.5f, uniform01() - 0.5f};
        const float up[3] = {0, 1, 0};
        m_vec3_normalize_or(axis, up, axis);
        m_quat_from_axis_angle(axis, uniform01() * 0.5f * M_PI_F, pose->local_rotation[j]);
        const int c = sk->primary_child[j];
        if (c < 0)
            continue;
        float dir[3];
        m_vec3_normalize_or(sk->offset_m[c], up, dir);
        ik_limit_apply(&sk->limit[j], dir, pose->local_rotation[j]);
    }
    sk_pose_forward_kinematics(pose, sk);
}

/* Whether the solver reaches target set `t` from one of RETRY_STARTS random poses within
 * the limits, with RETRY_ITERATIONS iterations. */
static bool
reached_from_another_start(const struct problem *p, const struct ik_solver_desc *base, int t,
                           struct sk_pose *scratch)
{
    struct ik_solver_desc desc = *base;
    desc.max_iterations = RETRY_ITERATIONS;
    desc.predict_warm_start = false;
    struct ik_solver *solver = NULL;
    struct em_error err;
    if (ik_solver_create(&desc, &solver, &err) != EM_OK)
        return false;
    for (int e = 0; e < p->effector_count; ++e)
        ik_solver_set_target(solver, e, p->targets[t][e], NULL);
    bool reached = false;
    for (int i = 0; i < RETRY_STARTS && !reached; ++i) {
        random_limited_pose(&p->skeleton, scratch);
        struct ik_stats stats;
        ik_solver_solve(solver, scratch, &stats);
        reached = stats.max_residual_m <= p->tolerance_m;
    }
    ik_solver_destroy(&solver);
    return reached;
}

static int
compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double
worst_bone_deviation(const struct sk_skeleton *sk, const struct sk_pose *pose)
{
    double worst = 0.0;
    for (int j = 1; j < sk->joint_count; ++j) {
        const float *a = pose->position_m[j], *b = pose->position_m[sk->parent[j]];
        const double dx = (double)a[0] - (double)b[0], dy = (double)a[1] - (double)b[1],
                     dz = (double)a[2] - (double)b[2];
        const double len = sqrt(dx * dx + dy * dy + dz * dz);
        const double dev = fabs(len - (double)sk->length_m[j]) / (double)sk->length_m[j];
        worst = dev > worst ? dev : worst;
    }
    return worst;
}

enum bench_mode {
    MODE_POSITIONS = 0, /* no limits, positions only (as the published positional solvers) */
    MODE_FULL = 1,      /* no limits, positions and rotations (the default solve) */
    MODE_LIMITS = 2,    /* joint limits on: rigid joints, rotations */
};
static const char *const mode_names[] = {"pos", "full", "limits"};

/* How a warm problem starts: from the previous solution (the protocol's warm start), or
 * from it moved on by the solver's prediction (ik_solver_desc.predict_warm_start). */
enum bench_start { START_PLAIN = 0, START_PREDICT = 1 };

/* The solver controls of issue 14, switched on for the controls table (--controls) or
 * every row (--control NAME): stretchy bones (10 % each, stiffness 0.5: the targets are
 * within reach, so this is the cost of checking), stiffness 0.3 on every joint (limits
 * rows only: it acts on rotations), blend weight 0.5 on every effector (nlerp). */
enum bench_control { CONTROL_PLAIN = 0, CONTROL_STRETCH, CONTROL_STIFFNESS, CONTROL_BLEND };
static const char *const control_names[] = {"plain", "stretch", "stiffness", "blend"};
static enum bench_control g_control = CONTROL_PLAIN;

/* The solver's method (--solver), and DLS's damping (--damping; 0: the solver's default). */
static const char *const solver_names[] = {"fabrik", "ccd", "jt", "dls"};
static enum ik_method g_method = IK_METHOD_FABRIK;
static float g_damping = 0.0f;

static bool
parse_solver(const char *text, enum ik_method *out)
{
    for (int m = 0; m < 4; ++m)
        if (strcmp(text, solver_names[m]) == 0) {
            *out = (enum ik_method)m;
            return true;
        }
    return false;
}

static void
apply_control(struct ik_solver *solver, const struct problem *p)
{
    for (int j = 1; j < p->skeleton.joint_count; ++j) {
        if (g_control == CONTROL_STRETCH)
            ik_solver_set_stretch(solver, j, 0.1f, 0.5f);
        else if (g_control == CONTROL_STIFFNESS)
            ik_solver_set_stiffness(solver, j, 0.3f);
    }
    if (g_control == CONTROL_BLEND)
        for (int e = 0; e < p->effector_count; ++e)
            ik_solver_set_blend(solver, e, 0.5f);
}

static bool
run_problem(const struct problem *p, enum bench_mode mode, enum bench_start start, bool callgrind,
            struct result *out)
{
    struct ik_solver_desc desc = {
        .skeleton = &p->skeleton,
        .effector_count = p->effector_count,
        .tolerance_m = p->tolerance_m,
        .max_iterations = p->max_iterations,
        .ignore_limits = mode != MODE_LIMITS,
        .positions_only = mode == MODE_POSITIONS,
        .root_mode = IK_ROOT_PINNED,
        .predict_warm_start = start == START_PREDICT,
        .blend_mode = g_control == CONTROL_BLEND ? IK_BLEND_NLERP : IK_BLEND_LINEAR,
        .method = g_method,
        .damping = g_damping,
    };
    for (int e = 0; e < p->effector_count; ++e)
        desc.effector[e].joint = p->effector[e];
    struct ik_solver *solver = NULL;
    struct em_error err;
    if (ik_solver_create(&desc, &solver, &err) != EM_OK) {
        fprintf(stderr, "%s: %s\n", p->id, err.message);
        return false;
    }
    apply_control(solver, p);
    struct sk_pose pose, scratch;
    if (sk_pose_init(&pose, &p->skeleton) != EM_OK)
        return false;
    if (sk_pose_init(&scratch, &p->skeleton) != EM_OK) {
        sk_pose_fini(&pose);
        return false;
    }
    out->missed = out->unreached = 0;
    g_rng = 0x2545F491u;
    const int n = p->target_count;
    double *times = calloc((size_t)n, sizeof *times);
    double *errs = calloc((size_t)n, sizeof *errs);
    double sum_us = 0, sum_iter = 0, max_err = 0, bone_dev = 0;
    int converged = 0;
    for (int k = -WARMUP_SOLVES; k < n; ++k) {
        const int t = k < 0 ? (k + WARMUP_SOLVES) % n : k;
        if (k == 0 && p->warm)
            sk_pose_set_rest(&pose, &p->skeleton);
        if (!p->warm)
            sk_pose_set_rest(&pose, &p->skeleton);
        for (int e = 0; e < p->effector_count; ++e)
            ik_solver_set_target(solver, e, p->targets[t][e], NULL);
        struct ik_stats stats;
        if (callgrind && k >= 0)
            CALLGRIND_TOGGLE_COLLECT;
        const int64_t t0 = u_time_now_ns();
        ik_solver_solve(solver, &pose, &stats);
        const int64_t t1 = u_time_now_ns();
        if (callgrind && k >= 0)
            CALLGRIND_TOGGLE_COLLECT;
        if (k < 0)
            continue;
        times[k] = (double)(t1 - t0) * 1e-3;
        sum_us += times[k];
        sum_iter += stats.iterations;
        double worst = 0;
        for (int e = 0; e < p->effector_count; ++e) {
            const double d =
                (double)m_vec3_distance(pose.position_m[p->effector[e]], p->targets[t][e]);
            worst = d > worst ? d : worst;
        }
        errs[k] = worst;
        max_err = worst > max_err ? worst : max_err;
        converged += worst <= (double)p->tolerance_m;
        if (mode == MODE_LIMITS && !callgrind && g_control == CONTROL_PLAIN &&
            worst > (double)p->tolerance_m) {
            if (reached_from_another_start(p, &desc, t, &scratch))
                ++out->missed;
            else
                ++out->unreached;
        }
        const double dev = worst_bone_deviation(&p->skeleton, &pose);
        bone_dev = dev > bone_dev ? dev : bone_dev;
    }
    out->mean_us = sum_us / (double)n;
    out->median_us = median(times, n);
    out->mean_iterations = sum_iter / n;
    out->median_err = median(errs, n);
    out->max_err = max_err;
    out->converged_pct = 100.0 * converged / n;
    out->bone_dev = bone_dev;
    free(times);
    free(errs);
    sk_pose_fini(&pose);
    sk_pose_fini(&scratch);
    ik_solver_destroy(&solver);
    return true;
}

/* Runs the protocol `repeat` times and keeps the run with the median of the medians (the
 * machine's own noise from one pass to the next is as large as the differences that
 * matter here). The other columns come from the same run. */
static bool
run_repeated(const struct problem *p, enum bench_mode mode, enum bench_start start, bool callgrind,
             int repeat, struct result *out)
{
    struct result runs[100];
    for (int i = 0; i < repeat; ++i)
        if (!run_problem(p, mode, start, callgrind, &runs[i]))
            return false;
    for (int i = 1; i < repeat; ++i) /* insertion sort by median */
        for (int k = i; k > 0 && runs[k].median_us < runs[k - 1].median_us; --k) {
            const struct result t = runs[k];
            runs[k] = runs[k - 1];
            runs[k - 1] = t;
        }
    *out = runs[repeat / 2];
    return true;
}

static void
print_row(const struct problem *p, enum bench_mode mode, enum bench_start start,
          const struct result *r, bool callgrind)
{
    const char *how = !p->warm ? "cold" : start == START_PREDICT ? "warm+p" : "warm";
    printf(
        "| %-16s | %-6s | %-6s | %6d | %9.3f | %9.3f | %9.2f | %10.2e | %9.2e | %7.2f%% | %9.1e |",
        p->id, how, mode_names[mode], p->target_count, r->median_us, r->mean_us, r->mean_iterations,
        r->median_err, r->max_err, r->converged_pct, r->bone_dev);
    if (mode == MODE_LIMITS && !callgrind && g_control == CONTROL_PLAIN) {
        const int reachable = p->target_count - r->unreached;
        printf(" %6d | %9d | %9.2f%% |", r->missed, r->unreached,
               reachable > 0 ? 100.0 * (reachable - r->missed) / reachable : 100.0);
    } else {
        printf("        |           |            |");
    }
    printf("\n");
}

static bool
parse_control(const char *text, enum bench_control *out)
{
    for (int c = 0; c < 4; ++c)
        if (strcmp(text, control_names[c]) == 0) {
            *out = (enum bench_control)c;
            return true;
        }
    return false;
}

/* The controls table: P1_chain10 and P3_human3, without and with limits, each control
 * beside the plain solve, the ratio of medians. */
static int
print_controls_table(const cJSON *problems, const char *path, int repeat)
{
    printf("controls: stretch = every bone may stretch 10 %% (stiffness 0.5; targets in reach); "
           "stiffness = 0.3 on every joint (limits only); blend = weight 0.5 on every effector "
           "(nlerp), so effectors end between pose and target by design\n\n");
    printf("| problem          | solve  | control   | median us |   mean us | mean iter | "
           "median err | converged | x plain |\n");
    printf("|------------------|--------|-----------|-----------|-----------|-----------|"
           "------------|-----------|---------|\n");
    static const char *const ids[] = {"P1_chain10", "P3_human3"};
    int failures = 0;
    for (size_t i = 0; i < 2; ++i) {
        const cJSON *item = NULL, *it;
        cJSON_ArrayForEach(it, problems)
        {
            const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(it, "id"));
            if (id && strcmp(id, ids[i]) == 0)
                item = it;
        }
        if (!item)
            continue;
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(item, "kind"));
        struct problem p;
        if (!load_problem(item, path, &p, kind && strcmp(kind, "tree") == 0)) {
            ++failures;
            continue;
        }
        for (int mode = MODE_FULL; mode <= MODE_LIMITS; ++mode) {
            double plain_median = 0.0;
            for (int c = 0; c < 4; ++c) {
                if (c == CONTROL_STIFFNESS && mode != MODE_LIMITS)
                    continue;
                g_control = (enum bench_control)c;
                struct result r;
                if (!run_repeated(&p, (enum bench_mode)mode, START_PLAIN, false, repeat, &r)) {
                    ++failures;
                    continue;
                }
                if (c == CONTROL_PLAIN)
                    plain_median = r.median_us;
                printf(
                    "| %-16s | %-6s | %-9s | %9.3f | %9.3f | %9.2f | %10.2e | %8.2f%% | %7.2f |\n",
                    p.id, mode_names[mode], control_names[c], r.median_us, r.mean_us,
                    r.mean_iterations, r.median_err, r.converged_pct,
                    plain_median > 0.0 ? r.median_us / plain_median : 0.0);
                fflush(stdout);
            }
        }
        g_control = CONTROL_PLAIN;
        sk_skeleton_fini(&p.skeleton);
        free(p.targets);
    }
    return failures;
}

/* ---- The solvers side by side (--side-by-side) ----------------------------------- */

/* Published medians (us per solve) of peer solvers on the same problems and protocol
 * (../shared/bench/README.md), in the order of peer_names, for the side-by-side table. */
static const char *const peer_names[] = {"plain C FABRIK", "TheComet/ik", "three-ik (JS)",
                                         "closed-chain-ik (DLS)"};
static const struct {
    const char *id;
    double median_us[4];
} peer_medians[] = {
    {"P1_chain10", {1.5, 20, 100, 384}},
    {"P2_chain100", {82, 672, 18340, 4082}},
    {"P2_chain1000", {2372, 6720, 5005000, 77760}},
    {"P3_human3", {5.7, 88, 247, 743}},
    {"P3_human5", {7.3, 127, 340, 425}},
    {"P3_human3_track", {0.6, 18, 47, 112}},
};

static bool
load_by_id(const cJSON *problems, const char *path, const char *id, struct problem *out)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, problems)
    {
        const char *pid = cJSON_GetStringValue(cJSON_GetObjectItem(it, "id"));
        if (!pid || strcmp(pid, id) != 0)
            continue;
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(it, "kind"));
        if (load_problem(it, path, out, kind && strcmp(kind, "tree") == 0))
            return true;
        sk_skeleton_fini(&out->skeleton);
        free(out->targets);
        return false;
    }
    fprintf(stderr, "ik_bench: %s: no problem %s\n", path, id);
    return false;
}

static void
free_problem(struct problem *p)
{
    sk_skeleton_fini(&p->skeleton);
    free(p->targets);
}

static struct ik_solver *
bench_solver(const struct problem *p, bool limits, int max_iterations)
{
    struct ik_solver_desc desc = {.skeleton = &p->skeleton,
                                  .effector_count = p->effector_count,
                                  .tolerance_m = p->tolerance_m,
                                  .max_iterations = max_iterations,
                                  .ignore_limits = !limits,
                                  .method = g_method,
                                  .damping = g_damping};
    for (int e = 0; e < p->effector_count; ++e)
        desc.effector[e].joint = p->effector[e];
    struct ik_solver *solver = NULL;
    struct em_error err;
    if (ik_solver_create(&desc, &solver, &err) != EM_OK)
        fprintf(stderr, "%s: %s\n", p->id, err.message);
    return solver;
}

static bool
pose_is_finite(const struct sk_skeleton *sk, const struct sk_pose *pose)
{
    for (int j = 0; j < sk->joint_count; ++j)
        if (!m_vec3_is_finite(pose->position_m[j]) || !m_quat_is_finite(pose->rotation[j]))
            return false;
    return true;
}

struct unreachable_result {
    double worst_point_deg;  /* angle between root->tip and root->target */
    double worst_off_line_m; /* farthest joint from the line root->target */
    int non_finite;          /* solves leaving a NaN or infinity anywhere */
    double within_1deg_pct;  /* solves pointing within a degree */
};

/* P1_chain10's targets moved out along their direction to 1.5 times the chain's reach,
 * each solved cold: the chain should end straight, pointing at the target. */
static bool
measure_unreachable(const struct problem *p, int solves, struct unreachable_result *out)
{
    struct ik_solver *solver = bench_solver(p, false, p->max_iterations);
    struct sk_pose pose;
    if (!solver || sk_pose_init(&pose, &p->skeleton) != EM_OK) {
        ik_solver_destroy(&solver);
        return false;
    }
    const int tip = p->effector[0];
    double reach = 0.0;
    for (int j = tip; p->skeleton.parent[j] >= 0; j = p->skeleton.parent[j])
        reach += (double)p->skeleton.length_m[j];
    memset(out, 0, sizeof *out);
    int counted = 0, within = 0;
    for (int k = 0; k < solves && k < p->target_count; ++k) {
        sk_pose_set_rest(&pose, &p->skeleton);
        const float *root = pose.position_m[0];
        float dir[3], far[3];
        m_vec3_sub(p->targets[k][0], root, dir);
        if (!(m_vec3_normalize_or(dir, dir, dir) > 0.0f))
            continue;
        m_vec3_muladd(root, dir, (float)(1.5 * reach), far);
        ik_solver_set_target(solver, 0, far, NULL);
        ik_solver_solve(solver, &pose, NULL);
        if (!pose_is_finite(&p->skeleton, &pose)) {
            ++out->non_finite;
            continue;
        }
        float to_tip[3];
        m_vec3_sub(pose.position_m[tip], root, to_tip);
        m_vec3_normalize_or(to_tip, dir, to_tip);
        const double angle =
            (double)acosf(m_clampf(m_vec3_dot(to_tip, dir), -1.0f, 1.0f)) / (double)M_DEG_TO_RAD;
        out->worst_point_deg = angle > out->worst_point_deg ? angle : out->worst_point_deg;
        ++counted;
        within += angle <= 1.0;
        for (int j = 1; j < p->skeleton.joint_count; ++j) {
            float rel[3], across[3];
            m_vec3_sub(pose.position_m[j], root, rel);
            m_vec3_cross(rel, dir, across);
            const double off = (double)m_vec3_length(across);
            out->worst_off_line_m = off > out->worst_off_line_m ? off : out->worst_off_line_m;
        }
    }
    out->within_1deg_pct = counted > 0 ? 100.0 * within / counted : 0.0;
    sk_pose_fini(&pose);
    ik_solver_destroy(&solver);
    return true;
}

struct track_result {
    double path_ratio; /* the effectors' path length over their targets' */
    double max_jump_m; /* the largest move of any joint between successive solves */
    double max_target_jump_m;
    double converged_pct;
};

/* P3_human3_track solved warm, as the protocol: how far the effectors and joints travel
 * from solve to solve, against how far the targets do (overshoot and tangling show as a
 * path longer than the targets' and as jumps). */
static bool
measure_track(const struct problem *p, bool limits, struct track_result *out)
{
    struct ik_solver *solver = bench_solver(p, limits, p->max_iterations);
    struct sk_pose pose;
    const int n = p->skeleton.joint_count;
    float(*last)[3] = calloc((size_t)n, sizeof *last);
    if (!solver || !last || sk_pose_init(&pose, &p->skeleton) != EM_OK) {
        ik_solver_destroy(&solver);
        free(last);
        return false;
    }
    memset(out, 0, sizeof *out);
    double path = 0.0, target_path = 0.0;
    int converged = 0;
    for (int k = 0; k < p->target_count; ++k) {
        for (int e = 0; e < p->effector_count; ++e)
            ik_solver_set_target(solver, e, p->targets[k][e], NULL);
        struct ik_stats stats;
        ik_solver_solve(solver, &pose, &stats);
        converged += stats.max_residual_m <= p->tolerance_m;
        if (k > 0) {
            for (int e = 0; e < p->effector_count; ++e) {
                const int j = p->effector[e];
                path += (double)m_vec3_distance(pose.position_m[j], last[j]);
                const double dt = (double)m_vec3_distance(p->targets[k][e], p->targets[k - 1][e]);
                target_path += dt;
                out->max_target_jump_m = fmax(out->max_target_jump_m, dt);
            }
            for (int j = 0; j < n; ++j)
                out->max_jump_m =
                    fmax(out->max_jump_m, (double)m_vec3_distance(pose.position_m[j], last[j]));
        }
        for (int j = 0; j < n; ++j)
            m_vec3_copy(pose.position_m[j], last[j]);
    }
    out->path_ratio = target_path > 0.0 ? path / target_path : 0.0;
    out->converged_pct = 100.0 * converged / p->target_count;
    free(last);
    sk_pose_fini(&pose);
    ik_solver_destroy(&solver);
    return true;
}

/* Every method on the six problems (no limits; the humanoid ones with limits too), the
 * published peers beside them, then how each behaves on unreachable targets and on the
 * tracking problem. P2_chain1000 runs its first `big_solves` target sets. */
static int
print_side_by_side(const cJSON *problems, const char *path, const char *only, int repeat,
                   long max_solves, int big_solves)
{
    static const char *const ids[] = {"P1_chain10", "P2_chain100", "P2_chain1000",
                                      "P3_human3",  "P3_human5",   "P3_human3_track"};
    const enum ik_method methods[] = {IK_METHOD_FABRIK, IK_METHOD_CCD, IK_METHOD_JACOBIAN_TRANSPOSE,
                                      IK_METHOD_DAMPED_LEAST_SQUARES};
    int failures = 0;
    printf("solvers side by side: fabrik, ccd, jt (Jacobian transpose), dls (damped least "
           "squares); full = no limits, limits = joint limits on; the protocol of "
           "../shared/bench/README.md (cold: from the rest pose; warm: from the previous "
           "solution); published = the peers' figures from that README (median only)\n\n");
    printf("| problem          | solver                | solve   | solves | median us | mean "
           "iter | converged |   max err | bone dev  |\n");
    printf("|------------------|-----------------------|---------|--------|-----------|-------"
           "----|-----------|-----------|-----------|\n");
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; ++i) {
        if (only && strcmp(only, ids[i]) != 0)
            continue;
        struct problem p;
        if (!load_by_id(problems, path, ids[i], &p)) {
            ++failures;
            continue;
        }
        if (strcmp(p.id, "P2_chain1000") == 0 && p.target_count > big_solves)
            p.target_count = big_solves;
        if (max_solves > 0 && p.target_count > max_solves)
            p.target_count = (int)max_solves;
        const bool tree = strcmp(p.kind, "tree") == 0;
        for (int mode = MODE_FULL; mode <= (tree ? MODE_LIMITS : MODE_FULL); ++mode)
            for (size_t m = 0; m < 4; ++m) {
                g_method = methods[m];
                struct result r;
                if (!run_repeated(&p, (enum bench_mode)mode, START_PLAIN, false, repeat, &r)) {
                    ++failures;
                    continue;
                }
                printf("| %-16s | %-21s | %-7s | %6d | %9.3f | %9.2f | %8.2f%% | %9.2e | "
                       "%9.1e |\n",
                       p.id, solver_names[g_method], mode_names[mode], p.target_count, r.median_us,
                       r.mean_iterations, r.converged_pct, r.max_err, r.bone_dev);
                fflush(stdout);
            }
        for (size_t q = 0; q < sizeof peer_medians / sizeof peer_medians[0]; ++q)
            if (strcmp(peer_medians[q].id, p.id) == 0)
                for (int k = 0; k < 4; ++k)
                    printf("| %-16s | %-21s | %-7s | %6s | %9.1f | %9s | %9s | %9s | %9s |\n", p.id,
                           peer_names[k], "publ.", "", peer_medians[q].median_us[k], "", "", "",
                           "");
        free_problem(&p);
    }
    printf("\nunreachable: P1_chain10's targets moved out to 1.5 x the chain's reach, cold, "
           "no limits: the worst angle between root->tip and root->target, the farthest "
           "joint from that line, the solves pointing within 1 degree, solves leaving a NaN. "
           "track: P3_human3_track warm, as the "
           "protocol: the effectors' path over their targets' path (1 = no overshoot), the "
           "largest move of any joint between successive solves (the targets' largest: "
           "in brackets)\n\n");
    printf("| solver | unreach. pointing deg | unreach. off line m | within 1 deg | NaN solves "
           "| track solve | track converged | tip path / target path | largest joint jump mm |\n");
    printf("|--------|-----------------------|---------------------|--------------|----------"
           "--|-------------|-----------------|------------------------|-----------------------"
           "|\n");
    struct problem chain, track;
    const bool have_chain = load_by_id(problems, path, "P1_chain10", &chain);
    const bool have_track = load_by_id(problems, path, "P3_human3_track", &track);
    if (!have_chain || !have_track) {
        if (have_chain)
            free_problem(&chain);
        if (have_track)
            free_problem(&track);
        return failures + 1;
    }
    if (max_solves > 0 && track.target_count > max_solves)
        track.target_count = (int)max_solves;
    for (size_t m = 0; m < 4; ++m) {
        g_method = methods[m];
        struct unreachable_result u;
        if (!measure_unreachable(&chain, max_solves > 0 ? (int)max_solves : 1000, &u)) {
            ++failures;
            continue;
        }
        for (int limits = 0; limits < 2; ++limits) {
            struct track_result tr;
            if (!measure_track(&track, limits, &tr)) {
                ++failures;
                continue;
            }
            printf("| %-6s | %21.3f | %19.2e | %11.2f%% | %10d | %-11s | %14.2f%% | %22.3f | "
                   "%11.2f (%.2f) |\n",
                   solver_names[g_method], u.worst_point_deg, u.worst_off_line_m, u.within_1deg_pct,
                   u.non_finite, limits ? "limits" : "full", tr.converged_pct, tr.path_ratio,
                   1e3 * tr.max_jump_m, 1e3 * tr.max_target_jump_m);
        }
    }
    free_problem(&chain);
    free_problem(&track);
    g_method = IK_METHOD_FABRIK;
    return failures;
}

static bool
parse_mode(const char *text, enum bench_mode *out)
{
    for (int m = 0; m < 3; ++m)
        if (strcmp(text, mode_names[m]) == 0) {
            *out = (enum bench_mode)m;
            return true;
        }
    return false;
}

int
main(int argc, char **argv)
{
    /* ../shared's copy when there is one, else the one the build unpacked from
     * tests/data/bench/problems.tar.xz (a clone without ../shared). */
    const char *path = EMBODY_SOURCE_DIR "/../shared/bench/problems.json";
    if (access(path, R_OK) != 0)
        path = EMBODY_BUNDLED_PROBLEMS;
    const char *only = NULL;
    bool callgrind = false, modes[3] = {false, false, false}, any_mode = false;
    bool starts[2] = {true, true}; /* plain and predicted warm starts */
    bool controls_table = false, side_by_side = false;
    long max_solves = 0, repeat = 3;
    for (int i = 1; i < argc; ++i) {
        enum bench_mode m;
        if (strcmp(argv[i], "--problems") == 0 && i + 1 < argc) {
            path = argv[++i];
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc && parse_mode(argv[i + 1], &m)) {
            modes[m] = any_mode = true;
            ++i;
        } else if (strcmp(argv[i], "--solves") == 0 && i + 1 < argc &&
                   u_parse_int(argv[i + 1], 1, 100000000, &max_solves)) {
            ++i;
        } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc &&
                   u_parse_int(argv[i + 1], 1, 100, &repeat)) {
            ++i;
        } else if (strcmp(argv[i], "--start") == 0 && i + 1 < argc &&
                   (strcmp(argv[i + 1], "plain") == 0 || strcmp(argv[i + 1], "predict") == 0)) {
            starts[START_PLAIN] = strcmp(argv[++i], "plain") == 0;
            starts[START_PREDICT] = !starts[START_PLAIN];
        } else if (strcmp(argv[i], "--solver") == 0 && i + 1 < argc &&
                   parse_solver(argv[i + 1], &g_method)) {
            ++i;
        } else if (strcmp(argv[i], "--damping") == 0 && i + 1 < argc &&
                   u_parse_float(argv[i + 1], &g_damping) && g_damping > 0.0f) {
            ++i;
        } else if (strcmp(argv[i], "--callgrind") == 0) {
            callgrind = true;
        } else if (strcmp(argv[i], "--side-by-side") == 0) {
            side_by_side = true;
        } else if (strcmp(argv[i], "--controls") == 0) {
            controls_table = true;
        } else if (strcmp(argv[i], "--control") == 0 && i + 1 < argc &&
                   parse_control(argv[i + 1], &g_control)) {
            ++i;
        } else {
            fprintf(stderr,
                    "usage: %s [--problems FILE] [--only ID] [--mode pos|full|limits]... "
                    "[--solves N] [--repeat N] [--start plain|predict] [--callgrind] "
                    "[--controls] [--control plain|stretch|stiffness|blend] "
                    "[--solver fabrik|ccd|jt|dls] [--damping X] [--side-by-side]\n"
                    "  --solver: the solver's method (default fabrik); ccd, jt (Jacobian "
                    "transpose) and dls (damped least squares) turn joints, so they have no "
                    "pos rows and no predicted warm starts\n"
                    "  --damping: dls's damping, a share of the reach (default the solver's)\n"
                    "  --side-by-side: every solver on the six problems (--only: one) beside "
                    "the published peers, and their behaviour on unreachable targets and "
                    "tracking\n"
                    "  --controls: only the table of issue 14's controls against plain solves\n"
                    "  --control: every row with that control on\n"
                    "  FILE defaults to ../shared/bench/problems.json beside the source tree,\n"
                    "  else the copy shipped in tests/data/bench (unpacked by the build)\n"
                    "  --start: warm problems only from the previous solution (plain) or "
                    "with the solver's prediction; default both\n",
                    argv[0]);
            return 2;
        }
    }
    if (!any_mode)
        modes[MODE_POSITIONS] = modes[MODE_FULL] = modes[MODE_LIMITS] = true;
    if (g_method != IK_METHOD_FABRIK) { /* they turn joints: no positions-only solve */
        modes[MODE_POSITIONS] = false;
        starts[START_PREDICT] = false;
    }
    struct u_text text;
    struct em_error err;
    if (u_text_read_file(path, &text, &err) != EM_OK) {
        fprintf(stderr, "ik_bench: %s\n", err.message);
        return 1;
    }
    cJSON *root = cJSON_Parse(text.data);
    u_text_fini(&text);
    const cJSON *problems = cJSON_GetObjectItem(root, "problems");
    if (!cJSON_IsArray(problems)) {
        fprintf(stderr, "ik_bench: %s: expected an object with a \"problems\" array\n", path);
        cJSON_Delete(root);
        return 1;
    }
    if (side_by_side) {
        const int failures = print_side_by_side(problems, path, only, (int)repeat, max_solves,
                                                SIDE_BY_SIDE_BIG_SOLVES);
        cJSON_Delete(root);
        return failures ? 1 : 0;
    }
    if (controls_table) {
        const int failures = print_controls_table(problems, path, (int)repeat);
        cJSON_Delete(root);
        return failures ? 1 : 0;
    }
    if (g_method != IK_METHOD_FABRIK)
        printf("solver: %s\n\n", solver_names[g_method]);
    printf("solve: pos = no limits, positions only; full = no limits, positions and rotations; "
           "limits = joint limits on (rigid joints, rotations)\n"
           "mode: warm = from the previous solution (the protocol); warm+p = the same with the "
           "solver's predict_warm_start\n\n");
    printf("limits rows: missed = not converged, but reached from one of %d random starts within "
           "the limits (%d iterations): should have converged; unreached = reached from none "
           "(at most the target sets the limits cannot reach); conv reach = converged share of "
           "the others\n\n",
           RETRY_STARTS, RETRY_ITERATIONS);
    printf("| problem          | mode   | solve  | solves | median us |   mean us | mean iter | "
           "median err |   max err | converged | bone dev  | missed | unreached | conv reach |\n");
    printf("|------------------|--------|--------|--------|-----------|-----------|-----------|----"
           "--------|-----------|-----------|-----------|--------|-----------|------------|\n");
    int failures = 0;
    for (int mode = 0; mode < 3; ++mode) {
        if (!modes[mode])
            continue;
        const cJSON *item;
        cJSON_ArrayForEach(item, problems)
        {
            const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(item, "kind"));
            const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(item, "id"));
            if (only && (!id || strcmp(only, id) != 0))
                continue;
            const bool tree = kind && strcmp(kind, "tree") == 0;
            if (mode == MODE_LIMITS && !tree)
                continue;
            struct problem p;
            if (!load_problem(item, path, &p, tree)) {
                sk_skeleton_fini(&p.skeleton);
                free(p.targets);
                ++failures;
                continue;
            }
            if (max_solves > 0 && p.target_count > max_solves)
                p.target_count = (int)max_solves;
            for (int start = 0; start < 2; ++start) {
                /* Cold problems start from the rest pose: prediction has nothing to act on. */
                if (!starts[start] || (start == START_PREDICT && !p.warm))
                    continue;
                struct result r;
                if (!run_repeated(&p, (enum bench_mode)mode, (enum bench_start)start, callgrind,
                                  callgrind ? 1 : (int)repeat, &r)) {
                    ++failures;
                    break;
                }
                print_row(&p, (enum bench_mode)mode, (enum bench_start)start, &r, callgrind);
                fflush(stdout);
            }
            sk_skeleton_fini(&p.skeleton);
            free(p.targets);
        }
    }
    cJSON_Delete(root);
    return failures ? 1 : 0;
}
