/*
 * Private helpers of the stream module: exact number printing and fast strict number
 * reading for the file formats, and the double-precision rotation math that BVH
 * forward kinematics, the humanoid rest pose and the mocap-to-stream conversion share.
 *
 * Matrices are 3x3, row-major, double m[row][col]; a rotation matrix maps a joint's
 * local axes to its parent's (its columns are the images of +X, +Y, +Z).
 */
#ifndef EMBODY_ST_INTERNAL_H
#define EMBODY_ST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "embody/stream.h"

/* ---- numbers in text ------------------------------------------------------------- */

/* Room for any number st_format_* writes, with its NUL. */
#define ST_NUMBER_MAX 32

/* Writes the shortest decimal text ("%.Ng", N = 6..9) that strtof reads back as exactly
 * `v` (finite). Returns the length. */
int
st_format_float(float v, char *out);

/* The same for a double (N = 15..17, read back by strtod). */
int
st_format_double(double v, char *out);

/* Reads all of [s, end) as a number into `out`. Plain decimals ("-12.5", "3") take a
 * fast exact path (Clinger's: an integer mantissa below 2^53 and a power of ten up to
 * 1e22 are both exact doubles, so one division rounds correctly); anything else goes
 * through strtod. Returns false when the text is not a whole number; a NaN or infinity
 * is returned as read (the caller rejects it with its own message). */
bool
st_parse_number(const char *s, const char *end, double *out);

/* ---- double rotation math ------------------------------------------------------ */

#define ST_PI 3.14159265358979323846

struct st_mat3 {
    double m[3][3];
};

void
st_mat3_identity(struct st_mat3 *out);

/* out = a * b; out may alias a or b. */
void
st_mat3_mul(const struct st_mat3 *a, const struct st_mat3 *b, struct st_mat3 *out);

/* out = m * v; out may alias v. */
void
st_mat3_apply(const struct st_mat3 *m, const double *v, double *out);

/* Right-handed rotation by `deg` degrees about axis 0 (X), 1 (Y) or 2 (Z). */
void
st_mat3_axis_rotation(int axis, double deg, struct st_mat3 *out);

/* Unit quaternion (x, y, z, w) of a rotation matrix with Shepperd's branches: the trace
 * branch when the trace is positive (then w > 0), else the branch of the largest
 * diagonal element (then that one of x, y, z is positive). The reference streams of
 * PROTOCOL section 2 use exactly this rule, so it fixes every quaternion's sign. */
void
st_mat3_to_quat(const struct st_mat3 *m, double *out_q);

/* Rotation matrix of a quaternion (normalized first; a zero quaternion is identity). */
void
st_quat_to_mat3(const double *q, struct st_mat3 *out);

/* The shortest rotation taking unit vector `from` to unit vector `to`. */
void
st_mat3_from_to(const double *from, const double *to, struct st_mat3 *out);

/* ---- BVH forward kinematics ------------------------------------------------------ */

/* Global positions (file units) and rotation matrices of every joint at `frame`. */
void
st_bvh_frame_matrices(const struct st_bvh *bvh, int frame, double (*out_position)[3],
                      struct st_mat3 *out_rotation);

/* Checks a unit scale (metres per file unit) given for `source`: EM_OK, or an error
 * naming the source and the bad value. */
enum em_result
st_check_unit_scale(double unit_scale, const char *source, struct em_error *err);

#endif
