/*
 * Writing a humanoid's motion as BVH (include/embody/stream.h): the hierarchy from the
 * skeleton, then one row per pose of the root position and every joint's local rotation
 * as Z, X, Y Euler angles in degrees (local rotation = Rz * Rx * Ry).
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embody/m_math.h"
#include "embody/stream.h"
#include "stream/st_internal.h"
#include "util/u_file.h"

/* Width of the frame count left blank in "Frames:" and filled in on close. */
#define FRAMES_FIELD_WIDTH 10

static enum em_result
write_failed(const struct st_bvh_writer *w, struct em_error *err)
{
    return em_fail(err, EM_ERROR_IO, "%s: write error: %s", w->path, strerror(errno));
}

/* End joints and joints without a humanoid bone become End Sites when they are leaves. */
static bool
is_end_site(const struct sk_skeleton *sk, int j)
{
    if (sk->parent[j] < 0 || sk->child_count[j] > 0)
        return false;
    return sk->bone[j] == SK_BONE_NONE || sk->bone[j] >= SK_HEAD_TOP;
}

static void
indent(FILE *f, int depth)
{
    for (int i = 0; i < depth; ++i)
        fputc('\t', f);
}

static void
write_offset(FILE *f, const float *offset_m, int depth)
{
    char x[ST_NUMBER_MAX], y[ST_NUMBER_MAX], z[ST_NUMBER_MAX];
    st_format_float(offset_m[0], x);
    st_format_float(offset_m[1], y);
    st_format_float(offset_m[2], z);
    indent(f, depth);
    fprintf(f, "OFFSET %s %s %s\n", x, y, z);
}

/* Writes joint `j` and its subtree (children in index order), recording the joints that
 * have channels in file order. */
static void
write_joint(struct st_bvh_writer *w, int j, int depth)
{
    const struct sk_skeleton *sk = w->skeleton;
    FILE *f = w->file;
    indent(f, depth);
    if (is_end_site(sk, j)) {
        fputs("End Site\n", f);
        indent(f, depth);
        fputs("{\n", f);
        write_offset(f, sk->offset_m[j], depth + 1);
        indent(f, depth);
        fputs("}\n", f);
        return;
    }
    const bool root = sk->parent[j] < 0;
    fprintf(f, "%s %s\n", root ? "ROOT" : "JOINT", sk->name[j]);
    indent(f, depth);
    fputs("{\n", f);
    const float zero[3] = {0.0f, 0.0f, 0.0f};
    write_offset(f, root ? zero : sk->offset_m[j], depth + 1);
    indent(f, depth + 1);
    fputs(root ? "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
               : "CHANNELS 3 Zrotation Xrotation Yrotation\n",
          f);
    w->channel_joint[w->channel_joint_count++] = j;
    for (int c = j + 1; c < sk->joint_count; ++c)
        if (sk->parent[c] == j)
            write_joint(w, c, depth + 1);
    if (sk->child_count[j] == 0) {
        /* A humanoid bone that is a leaf keeps its name as a JOINT; BVH wants an End. */
        indent(f, depth + 1);
        fputs("End Site\n", f);
        indent(f, depth + 1);
        fputs("{\n", f);
        write_offset(f, zero, depth + 2);
        indent(f, depth + 1);
        fputs("}\n", f);
    }
    indent(f, depth);
    fputs("}\n", f);
}

static enum em_result
check_names(const struct sk_skeleton *sk, const char *path, struct em_error *err)
{
    for (int j = 0; j < sk->joint_count; ++j) {
        const char *name = sk->name[j];
        bool ok = name[0] != '\0';
        for (const char *c = name; *c && ok; ++c)
            ok = *c != ' ' && *c != '\t' && *c != '\n' && *c != '\r' && *c != '{' && *c != '}';
        if (!ok)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: joint %d name \"%s\" cannot be written in BVH (empty, or has "
                           "blanks or braces)",
                           path, j, name);
    }
    return EM_OK;
}

enum em_result
st_bvh_writer_open(const char *path, const struct sk_skeleton *skeleton, double frame_time_s,
                   struct st_bvh_writer *out_writer, struct em_error *err)
{
    struct st_bvh_writer *w = out_writer;
    memset(w, 0, sizeof *w);
    if (skeleton->joint_count <= 0 || skeleton->parent[0] >= 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: the skeleton has no root joint",
                       path);
    /* What the reader takes back (stream.h), so a written BVH is a usable one. */
    if (!isfinite(frame_time_s) ||
        !(frame_time_s >= ST_BVH_MIN_FRAME_TIME_S && frame_time_s <= ST_BVH_MAX_FRAME_TIME_S))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: frame time must be %g to %g seconds, got %g", path,
                       ST_BVH_MIN_FRAME_TIME_S, ST_BVH_MAX_FRAME_TIME_S, frame_time_s);
    enum em_result r = check_names(skeleton, path, err);
    if (r != EM_OK)
        return r;
    w->skeleton = skeleton;
    w->path = strdup(path);
    w->channel_joint = malloc((size_t)skeleton->joint_count * sizeof *w->channel_joint);
    if (!w->path || !w->channel_joint) {
        st_bvh_writer_abort(w);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    r = u_out_file_open(path, &w->output, err);
    if (r != EM_OK) {
        st_bvh_writer_abort(w);
        return r;
    }
    w->file = w->output->file;
    fputs("HIERARCHY\n", w->file);
    write_joint(w, 0, 0);
    fputs("MOTION\nFrames: ", w->file);
    w->frame_count_offset = ftell(w->file);
    char ft[ST_NUMBER_MAX];
    st_format_double(frame_time_s, ft);
    fprintf(w->file, "%-*d\nFrame Time: %s\n", FRAMES_FIELD_WIDTH, 0, ft);
    if (ferror(w->file) || w->frame_count_offset < 0) {
        r = write_failed(w, err);
        st_bvh_writer_abort(w);
        return r;
    }
    return EM_OK;
}

/* Angles (radians) with R = Rz(z) * Rx(x) * Ry(y) for the rotation q. Near gimbal lock
 * (x = +-90 degrees) z is taken as 0; y is always solved from what remains of R after
 * z and x, so the three angles rebuild R to rounding error even there. */
static void
quat_to_zxy(const float *q, double *out_z, double *out_x, double *out_y)
{
    const double qd[4] = {(double)q[0], (double)q[1], (double)q[2], (double)q[3]};
    struct st_mat3 r;
    st_quat_to_mat3(qd, &r);
    /* R = Rz Rx Ry has m21 = sin x, m01 = -sin z cos x, m11 = cos z cos x. */
    const double cos_x = hypot(r.m[0][1], r.m[1][1]);
    const double x = atan2(r.m[2][1], cos_x);
    const double z = cos_x > 1e-9 ? atan2(-r.m[0][1], r.m[1][1]) : 0.0;
    struct st_mat3 undo_z, undo_x, rest;
    st_mat3_axis_rotation(2, -z * (180.0 / ST_PI), &undo_z);
    st_mat3_axis_rotation(0, -x * (180.0 / ST_PI), &undo_x);
    st_mat3_mul(&undo_z, &r, &rest);
    st_mat3_mul(&undo_x, &rest, &rest); /* now Ry(y) = [[c, 0, s], [0, 1, 0], [-s, 0, c]] */
    *out_z = z;
    *out_x = x;
    *out_y = atan2(rest.m[0][2], rest.m[0][0]);
}

static int
append_number(char *out, double v)
{
    return snprintf(out, ST_NUMBER_MAX, " %.9g", v);
}

enum em_result
st_bvh_writer_write(struct st_bvh_writer *w, const struct sk_pose *pose,
                    struct em_error *err)
{
    assert(w->file);
    assert(pose->joint_count == w->skeleton->joint_count);
    if (!m_vec3_is_finite(pose->position_m[0]))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: frame %ld: the root position is not finite", w->path,
                       w->frames_written);
    for (int i = 0; i < w->channel_joint_count; ++i) {
        const int j = w->channel_joint[i];
        if (!m_quat_is_finite(pose->local_rotation[j]))
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: frame %ld: the rotation of joint \"%s\" is not finite", w->path,
                           w->frames_written, w->skeleton->name[j]);
    }
    for (int i = 0; i < w->channel_joint_count; ++i) {
        const int j = w->channel_joint[i];
        char line[6 * (ST_NUMBER_MAX + 1) + 2];
        int n = 0;
        if (i == 0)
            for (int k = 0; k < 3; ++k)
                n += append_number(line + n, (double)pose->position_m[j][k]);
        double z, x, y;
        quat_to_zxy(pose->local_rotation[j], &z, &x, &y);
        n += append_number(line + n, z * (180.0 / ST_PI));
        n += append_number(line + n, x * (180.0 / ST_PI));
        n += append_number(line + n, y * (180.0 / ST_PI));
        /* Rows start without the leading blank. */
        fputs(i == 0 ? line + 1 : line, w->file);
    }
    if (fputc('\n', w->file) == EOF || ferror(w->file))
        return write_failed(w, err);
    w->frames_written++;
    return EM_OK;
}

enum em_result
st_bvh_writer_close(struct st_bvh_writer *w, struct em_error *err)
{
    enum em_result r = EM_OK;
    if (w->file && (fseek(w->file, w->frame_count_offset, SEEK_SET) != 0 ||
                    fprintf(w->file, "%-*ld", FRAMES_FIELD_WIDTH, w->frames_written) < 0 ||
                    fflush(w->file) != 0 || ferror(w->file))) {
        r = write_failed(w, err);
        u_out_file_abort(&w->output);
    }
    const enum em_result committed = u_out_file_commit(&w->output, r == EM_OK ? err : NULL);
    if (r == EM_OK)
        r = committed;
    free(w->path);
    free(w->channel_joint);
    memset(w, 0, sizeof *w);
    return r;
}

void
st_bvh_writer_abort(struct st_bvh_writer *w)
{
    u_out_file_abort(&w->output);
    free(w->path);
    free(w->channel_joint);
    memset(w, 0, sizeof *w);
}
