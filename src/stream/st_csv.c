/*
 * The 3-point tracking stream (include/embody/stream.h; PROTOCOL.md section 1): a header
 * naming the columns, then one CSV row per sample of the head and both hands.
 *
 * Reading finds the columns by name, in any order, ignores column groups it does not know
 * and checks every value; the first problem is reported with the file, the line and the
 * column. Writing prints each float in the fewest digits that read back as the same float
 * and t as the double it is, so a file read and written again is the same text.
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
#include "util/u_text.h"
#include "util/u_file.h"
#include "util/u_time.h"

/* The seven pose fields and the flag of a device group, in file order. */
enum field {
    FIELD_PX = 0,
    FIELD_PY,
    FIELD_PZ,
    FIELD_QX,
    FIELD_QY,
    FIELD_QZ,
    FIELD_QW,
    FIELD_VALID,
    FIELD_COUNT,
};

static const char *const field_suffix[FIELD_COUNT] = {"px", "py", "pz", "qx",
                                                      "qy", "qz", "qw", "valid"};

/* A hand's finger group (PROTOCOL.md section 1b): "<hand>_fingers_" and, per finger,
 * its three flexions and its abduction in degrees, then the flag. */
#define FINGER_VALID (HD_FINGER_COUNT * ST_FINGER_ANGLES)
#define FINGER_FIELD_COUNT (FINGER_VALID + 1)

static const char *const finger_group[HD_HAND_COUNT] = {"left_fingers", "right_fingers"};

static const char *const finger_field_names[FINGER_FIELD_COUNT] = {
    "thumb_flex1_deg",  "thumb_flex2_deg",  "thumb_flex3_deg",  "thumb_abduct_deg",
    "index_flex1_deg",  "index_flex2_deg",  "index_flex3_deg",  "index_abduct_deg",
    "middle_flex1_deg", "middle_flex2_deg", "middle_flex3_deg", "middle_abduct_deg",
    "ring_flex1_deg",   "ring_flex2_deg",   "ring_flex3_deg",   "ring_abduct_deg",
    "little_flex1_deg", "little_flex2_deg", "little_flex3_deg", "little_abduct_deg",
    "valid",
};

static const char *
finger_field_name(int field)
{
    return finger_field_names[field];
}

/* A finger angle's slot in st_fingers, and its value. */
static float *
finger_angle(struct st_fingers *f, int hand, int field)
{
    return &f->angle_deg[hand][field / ST_FINGER_ANGLES][field % ST_FINGER_ANGLES];
}

static float
finger_angle_value(const struct st_fingers *f, int hand, int field)
{
    return f->angle_deg[hand][field / ST_FINGER_ANGLES][field % ST_FINGER_ANGLES];
}

/* Within the joint's limits, with room for the rounding of a conversion from radians. */
#define FINGER_LIMIT_SLACK_DEG 0.01f

static bool
finger_angle_ok(int field, float v)
{
    float lo, hi;
    hd_joint_limits_deg(field / ST_FINGER_ANGLES, field % ST_FINGER_ANGLES, &lo, &hi);
    return v >= lo - FINGER_LIMIT_SLACK_DEG && v <= hi + FINGER_LIMIT_SLACK_DEG;
}

void
st_fingers_set_pose(struct st_fingers *fingers, enum hd_hand hand, const struct hd_pose *pose)
{
    fingers->valid[hand] = true;
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            fingers->angle_deg[hand][f][j] = pose->flex_rad[f][j] * M_RAD_TO_DEG;
        fingers->angle_deg[hand][f][HD_FINGER_JOINTS] = pose->abduct_rad[f] * M_RAD_TO_DEG;
    }
}

void
st_fingers_get_pose(const struct st_fingers *fingers, enum hd_hand hand,
                    struct hd_pose *out_pose)
{
    for (int f = 0; f < HD_FINGER_COUNT; ++f) {
        for (int j = 0; j < HD_FINGER_JOINTS; ++j)
            out_pose->flex_rad[f][j] = fingers->angle_deg[hand][f][j] * M_DEG_TO_RAD;
        out_pose->abduct_rad[f] = fingers->angle_deg[hand][f][HD_FINGER_JOINTS] * M_DEG_TO_RAD;
    }
}

/* How far |q| of a valid device may be from 1. */
#define UNIT_QUAT_TOLERANCE 1e-3

/* Most columns a header may have (further groups included). */
#define MAX_COLUMNS 1024

/* A column group: the three required devices, then the optional body trackers
 * (PROTOCOL.md section 2b). */
#define SLOT_COUNT (EM_DEVICE_COUNT + EM_TRACKER_COUNT)

static const char *
slot_name(int slot)
{
    return slot < EM_DEVICE_COUNT ? em_device_name((enum em_device)slot)
                                  : em_tracker_name((enum em_tracker)(slot - EM_DEVICE_COUNT));
}

static struct em_device_pose *
slot_pose(struct em_tracking_frame *frame, int slot)
{
    return slot < EM_DEVICE_COUNT ? &frame->device[slot] : &frame->tracker[slot - EM_DEVICE_COUNT];
}

static const struct em_device_pose *
slot_pose_const(const struct em_tracking_frame *frame, int slot)
{
    return slot < EM_DEVICE_COUNT ? &frame->device[slot] : &frame->tracker[slot - EM_DEVICE_COUNT];
}

/* True when the slot's group is written or read for frames carrying `tracker_mask`. */
static bool
slot_in(int slot, uint32_t tracker_mask)
{
    return slot < EM_DEVICE_COUNT || (tracker_mask & EM_TRACKER_BIT(slot - EM_DEVICE_COUNT)) != 0;
}

/* |q| in double, so the tolerance check does not depend on float rounding. */
static double
quat_length(const float *q)
{
    double sum = 0.0;
    for (int i = 0; i < 4; ++i)
        sum += (double)q[i] * (double)q[i];
    return sqrt(sum);
}

/* ---- stream in memory ------------------------------------------------------------ */

/* A fingers array of `capacity` entries holding the stream's first frame_count (or none,
 * zeroed: no fingers known), or NULL when out of memory. */
static struct st_fingers *
fingers_copy(const struct st_stream *stream, int capacity)
{
    struct st_fingers *f = calloc((size_t)capacity, sizeof *f);
    if (f && stream->fingers && stream->frame_count > 0)
        memcpy(f, stream->fingers, (size_t)stream->frame_count * sizeof *f);
    return f;
}

enum em_result
st_stream_append_fingers(struct st_stream *stream, const struct em_tracking_frame *frame,
                         const struct st_fingers *fingers)
{
    if (stream->frame_count == stream->capacity) {
        const int cap = stream->capacity ? stream->capacity * 2 : 256;
        /* The frames hold 16-byte aligned versors: aligned_alloc and copy, as realloc
         * promises only malloc's alignment. */
        const size_t bytes = (size_t)cap * sizeof *stream->frames;
        struct em_tracking_frame *grown = aligned_alloc(16, (bytes + 15) & ~(size_t)15);
        if (!grown)
            return EM_ERROR_OUT_OF_MEMORY;
        struct st_fingers *grown_fingers = NULL;
        if (stream->fingers && !(grown_fingers = fingers_copy(stream, cap))) {
            free(grown);
            return EM_ERROR_OUT_OF_MEMORY;
        }
        if (stream->frame_count > 0)
            memcpy(grown, stream->frames, (size_t)stream->frame_count * sizeof *grown);
        free(stream->frames);
        stream->frames = grown;
        if (grown_fingers) {
            free(stream->fingers);
            stream->fingers = grown_fingers;
        }
        stream->capacity = cap;
    }
    if (fingers && !stream->fingers && !(stream->fingers = fingers_copy(stream, stream->capacity)))
        return EM_ERROR_OUT_OF_MEMORY;
    if (stream->fingers) {
        const struct st_fingers none = {.valid = {false, false}};
        stream->fingers[stream->frame_count] = fingers ? *fingers : none;
    }
    stream->frames[stream->frame_count++] = *frame;
    return EM_OK;
}

enum em_result
st_stream_append(struct st_stream *stream, const struct em_tracking_frame *frame)
{
    return st_stream_append_fingers(stream, frame, NULL);
}

void
st_stream_fini(struct st_stream *stream)
{
    free(stream->frames);
    free(stream->fingers);
    memset(stream, 0, sizeof *stream);
}

/* ---- reading --------------------------------------------------------------------- */

/* Where each needed value sits in a row: column indices, -1 when absent. */
struct layout {
    int column_count;
    int t;
    int device[SLOT_COUNT][FIELD_COUNT];
    uint32_t tracker_mask; /* the optional groups the header has */
    int finger[HD_HAND_COUNT][FINGER_FIELD_COUNT];
    uint32_t finger_mask;
};

static char *
trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        ++s;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        --e;
    *e = '\0';
    return s;
}

/* Splits `line` at commas in place into at most `max` trimmed fields; returns the field
 * count (max + 1 when there are more). */
static int
split_fields(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (n < max)
            fields[n] = trim(p);
        ++n;
        if (!comma || n > max)
            return n;
        p = comma + 1;
    }
}

static bool
is_blank(const char *line)
{
    for (; *line; ++line)
        if (*line != ' ' && *line != '\t')
            return false;
    return true;
}

/* The device and field a column name stands for; false for names we do not know. */
static bool
known_column(const char *name, int *out_device, int *out_field)
{
    for (int d = 0; d < SLOT_COUNT; ++d) {
        const char *dev = slot_name(d);
        const size_t n = strlen(dev);
        if (strncmp(name, dev, n) != 0 || name[n] != '_')
            continue;
        for (int f = 0; f < FIELD_COUNT; ++f)
            if (strcmp(name + n + 1, field_suffix[f]) == 0) {
                *out_device = d;
                *out_field = f;
                return true;
            }
    }
    return false;
}

/* The hand and field a finger column's name stands for; false for other names. */
static bool
known_finger_column(const char *name, int *out_hand, int *out_field)
{
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        const size_t n = strlen(finger_group[h]);
        if (strncmp(name, finger_group[h], n) != 0 || name[n] != '_')
            continue;
        for (int f = 0; f < FINGER_FIELD_COUNT; ++f)
            if (strcmp(name + n + 1, finger_field_name(f)) == 0) {
                *out_hand = h;
                *out_field = f;
                return true;
            }
    }
    return false;
}

/* Appends "what" to the list of missing things in `buf`. */
static void
add_missing(char *buf, size_t size, const char *what)
{
    const size_t used = strlen(buf);
    snprintf(buf + used, size - used, "%s%s", used ? "; " : "", what);
}

static enum em_result
check_layout_complete(const struct layout *lay, const char *source, int line,
                      struct em_error *err)
{
    char missing[400] = "";
    if (lay->t < 0)
        add_missing(missing, sizeof missing, "column t");
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        const char *dev = em_device_name((enum em_device)d);
        int absent = 0;
        for (int f = 0; f < FIELD_COUNT; ++f)
            absent += lay->device[d][f] < 0;
        char what[160];
        if (absent == FIELD_COUNT) {
            snprintf(what, sizeof what, "the %s group (%s_px ... %s_valid)", dev, dev, dev);
            add_missing(missing, sizeof missing, what);
            continue;
        }
        for (int f = 0; f < FIELD_COUNT; ++f)
            if (lay->device[d][f] < 0) {
                snprintf(what, sizeof what, "column %s_%s", dev, field_suffix[f]);
                add_missing(missing, sizeof missing, what);
            }
    }
    if (missing[0])
        return em_fail(err, EM_ERROR_PARSE, "%s:%d: the header lacks %s", source, line,
                       missing);
    return EM_OK;
}

/* An optional group is all there or not at all: a part of one is a mistake to report. */
static enum em_result
check_tracker_groups(struct layout *lay, const char *source, int line, struct em_error *err)
{
    lay->tracker_mask = 0;
    for (int d = EM_DEVICE_COUNT; d < SLOT_COUNT; ++d) {
        int absent = 0;
        for (int f = 0; f < FIELD_COUNT; ++f)
            absent += lay->device[d][f] < 0;
        if (absent == FIELD_COUNT)
            continue;
        char missing[200] = "";
        for (int f = 0; f < FIELD_COUNT; ++f)
            if (lay->device[d][f] < 0) {
                char what[64];
                snprintf(what, sizeof what, "column %s_%s", slot_name(d), field_suffix[f]);
                add_missing(missing, sizeof missing, what);
            }
        if (missing[0])
            return em_fail(err, EM_ERROR_PARSE,
                           "%s:%d: the %s tracker's group is incomplete: the header lacks %s",
                           source, line, slot_name(d), missing);
        lay->tracker_mask |= EM_TRACKER_BIT(d - EM_DEVICE_COUNT);
    }
    return EM_OK;
}

/* A finger group, as a tracker's, is all there or not at all. */
static enum em_result
check_finger_groups(struct layout *lay, const char *source, int line, struct em_error *err)
{
    lay->finger_mask = 0;
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        int absent = 0;
        for (int f = 0; f < FINGER_FIELD_COUNT; ++f)
            absent += lay->finger[h][f] < 0;
        if (absent == FINGER_FIELD_COUNT)
            continue;
        char missing[1200] = "";
        for (int f = 0; f < FINGER_FIELD_COUNT; ++f)
            if (lay->finger[h][f] < 0) {
                char what[64];
                snprintf(what, sizeof what, "column %s_%s", finger_group[h], finger_field_name(f));
                add_missing(missing, sizeof missing, what);
            }
        if (missing[0])
            return em_fail(err, EM_ERROR_PARSE,
                           "%s:%d: the %s group is incomplete: the header lacks %s", source,
                           line, finger_group[h], missing);
        lay->finger_mask |= ST_FINGERS_BIT(h);
    }
    return EM_OK;
}

static enum em_result
parse_header(char *line, int line_number, const char *source, struct layout *lay,
             char **fields, struct em_error *err)
{
    const int n = split_fields(line, fields, MAX_COLUMNS);
    if (n > MAX_COLUMNS)
        return em_fail(err, EM_ERROR_LIMIT, "%s:%d: more than %d columns", source,
                       line_number, MAX_COLUMNS);
    double number;
    if (st_parse_number(fields[0], fields[0] + strlen(fields[0]), &number))
        return em_fail(err, EM_ERROR_PARSE,
                       "%s:%d: expected a header line naming the columns (t,head_px,...), "
                       "got a row of numbers",
                       source, line_number);
    lay->column_count = n;
    lay->t = -1;
    for (int d = 0; d < SLOT_COUNT; ++d)
        for (int f = 0; f < FIELD_COUNT; ++f)
            lay->device[d][f] = -1;
    for (int h = 0; h < HD_HAND_COUNT; ++h)
        for (int f = 0; f < FINGER_FIELD_COUNT; ++f)
            lay->finger[h][f] = -1;
    for (int c = 0; c < n; ++c) {
        const char *name = fields[c];
        if (!name[0])
            return em_fail(err, EM_ERROR_PARSE, "%s:%d: column %d of the header has no name",
                           source, line_number, c + 1);
        for (int k = 0; k < c; ++k)
            if (strcmp(fields[k], name) == 0)
                return em_fail(err, EM_ERROR_PARSE,
                               "%s:%d: column %d (%s) repeats column %d of the header",
                               source, line_number, c + 1, name, k + 1);
        int d, f;
        if (strcmp(name, "t") == 0)
            lay->t = c;
        else if (known_column(name, &d, &f))
            lay->device[d][f] = c;
        else if (known_finger_column(name, &d, &f))
            lay->finger[d][f] = c;
        /* Anything else belongs to a group we do not know (hip_px ...): ignored. */
    }
    enum em_result r = check_layout_complete(lay, source, line_number, err);
    if (r == EM_OK)
        r = check_tracker_groups(lay, source, line_number, err);
    return r != EM_OK ? r : check_finger_groups(lay, source, line_number, err);
}

/* The header's name of column `c` (0-based), for messages. */
static void
column_name(const struct layout *lay, int c, char *out, size_t size)
{
    snprintf(out, size, "?");
    if (c == lay->t)
        snprintf(out, size, "t");
    for (int d = 0; d < SLOT_COUNT; ++d)
        for (int f = 0; f < FIELD_COUNT; ++f)
            if (lay->device[d][f] == c)
                snprintf(out, size, "%s_%s", slot_name(d), field_suffix[f]);
    for (int h = 0; h < HD_HAND_COUNT; ++h)
        for (int f = 0; f < FINGER_FIELD_COUNT; ++f)
            if (lay->finger[h][f] == c)
                snprintf(out, size, "%s_%s", finger_group[h], finger_field_name(f));
}

static enum em_result
bad_value(const struct layout *lay, int c, const char *text, const char *expected,
          const char *source, int line, struct em_error *err)
{
    char name[40];
    column_name(lay, c, name, sizeof name);
    return em_fail(err, EM_ERROR_PARSE, "%s:%d: column %d (%s): expected %s, got \"%s\"",
                   source, line, c + 1, name, expected, text);
}

/* A float exactly as strtof reads it (so printed floats come back identical). */
static enum em_result
parse_float_field(const struct layout *lay, int c, const char *text, const char *source,
                  int line, float *out, struct em_error *err)
{
    double probe;
    if (!st_parse_number(text, text + strlen(text), &probe))
        return bad_value(lay, c, text, "a number", source, line, err);
    const float v = strtof(text, NULL);
    if (!isfinite(probe) || !isfinite(v))
        return bad_value(lay, c, text, "a finite number", source, line, err);
    *out = v;
    return EM_OK;
}

static enum em_result
parse_device(const struct layout *lay, int d, char **fields, const char *source, int line,
              struct em_device_pose *out, struct em_error *err)
{
    float v[FIELD_VALID];
    for (int f = 0; f < FIELD_VALID; ++f) {
        const enum em_result r =
            parse_float_field(lay, lay->device[d][f], fields[lay->device[d][f]], source, line,
                              &v[f], err);
        if (r != EM_OK)
            return r;
    }
    const int vc = lay->device[d][FIELD_VALID];
    const char *valid = fields[vc];
    if (strcmp(valid, "0") != 0 && strcmp(valid, "1") != 0)
        return bad_value(lay, vc, valid, "0 or 1", source, line, err);
    out->flags = valid[0] == '1' ? (uint32_t)EM_POSE_ALL_VALID : 0u;
    m_vec3_set(out->pose.position_m, v[FIELD_PX], v[FIELD_PY], v[FIELD_PZ]);
    m_quat_set(out->pose.orientation, v[FIELD_QX], v[FIELD_QY], v[FIELD_QZ], v[FIELD_QW]);
    if (out->flags && (double)m_vec3_length(out->pose.position_m) > ST_STREAM_MAX_M) {
        const char *dev = slot_name(d);
        return em_fail(err, EM_ERROR_PARSE,
                       "%s:%d: %s position (%s_px..%s_pz) is %.3g m from the origin; expected "
                       "within 1 km on a valid device",
                       source, line, dev, dev, dev, (double)m_vec3_length(out->pose.position_m));
    }
    if (out->flags) {
        const double n = quat_length(out->pose.orientation);
        if (fabs(n - 1.0) > UNIT_QUAT_TOLERANCE) {
            const char *dev = slot_name(d);
            return em_fail(err, EM_ERROR_PARSE,
                           "%s:%d: %s orientation (%s_qx..%s_qw) has length %.6g; expected a "
                           "unit quaternion (within %g) on a valid device",
                           source, line, dev, dev, dev, n, UNIT_QUAT_TOLERANCE);
        }
    }
    return EM_OK;
}

/* One hand's finger group: twenty angles and the flag. The flag is read first: a valid
 * hand's angles must be within their joints' limits; a hand flagged invalid (0) has angles
 * that "are then 0 and mean nothing" (PROTOCOL.md section 1b), so they must still be
 * finite numbers but are not checked against the limits, and are stored as 0. */
static enum em_result
parse_fingers(const struct layout *lay, int h, char **fields, const char *source, int line,
              struct st_fingers *out, struct em_error *err)
{
    const int vc = lay->finger[h][FINGER_VALID];
    if (strcmp(fields[vc], "0") != 0 && strcmp(fields[vc], "1") != 0)
        return bad_value(lay, vc, fields[vc], "0 or 1", source, line, err);
    const bool valid = fields[vc][0] == '1';
    for (int f = 0; f < FINGER_VALID; ++f) {
        const int c = lay->finger[h][f];
        float v;
        const enum em_result r = parse_float_field(lay, c, fields[c], source, line, &v, err);
        if (r != EM_OK)
            return r;
        if (valid && !finger_angle_ok(f, v)) {
            float lo, hi;
            hd_joint_limits_deg(f / ST_FINGER_ANGLES, f % ST_FINGER_ANGLES, &lo, &hi);
            char expected[64];
            snprintf(expected, sizeof expected, "degrees within the joint's limits, %g to %g",
                     (double)lo, (double)hi);
            return bad_value(lay, c, fields[c], expected, source, line, err);
        }
        *finger_angle(out, h, f) = valid ? v : 0.0f;
    }
    out->valid[h] = valid;
    return EM_OK;
}

/* Reading state carried from row to row. */
struct row_context {
    const struct layout *lay;
    const char *source;
    char **fields;
    double previous_t;
    int previous_line;
};

static enum em_result
parse_row(struct row_context *ctx, char *line, int line_number,
          struct em_tracking_frame *out, struct st_fingers *out_fingers, struct em_error *err)
{
    const struct layout *lay = ctx->lay;
    const int n = split_fields(line, ctx->fields, lay->column_count);
    if (n != lay->column_count)
        return em_fail(err, EM_ERROR_PARSE, "%s:%d: %s%d columns, expected %d as in the header",
                       ctx->source, line_number, n > lay->column_count ? "more than " : "",
                       n > lay->column_count ? lay->column_count : n, lay->column_count);
    memset(out, 0, sizeof *out);
    const char *t_text = ctx->fields[lay->t];
    double t;
    if (!st_parse_number(t_text, t_text + strlen(t_text), &t))
        return bad_value(lay, lay->t, t_text, "a number", ctx->source, line_number, err);
    if (!isfinite(t) || fabs(t) > ST_STREAM_MAX_T_S)
        return bad_value(lay, lay->t, t_text, "a finite number of seconds within 1e9", ctx->source,
                         line_number, err);
    if (ctx->previous_line > 0 && t > ctx->previous_t &&
        !(t - ctx->previous_t >= ST_STREAM_MIN_STEP_S && t - ctx->previous_t <= ST_STREAM_MAX_STEP_S)) {
        char now[ST_NUMBER_MAX], before[ST_NUMBER_MAX];
        st_format_double(t, now);
        st_format_double(ctx->previous_t, before);
        return em_fail(err, EM_ERROR_PARSE,
                       "%s:%d: t = %s is %.3g s after t = %s on line %d; expected a step of "
                       "0.1 ms to 1 s between rows",
                       ctx->source, line_number, now, t - ctx->previous_t, before,
                       ctx->previous_line);
    }
    if (ctx->previous_line > 0 && !(t > ctx->previous_t)) {
        char now[ST_NUMBER_MAX], before[ST_NUMBER_MAX];
        st_format_double(t, now);
        st_format_double(ctx->previous_t, before);
        return em_fail(err, EM_ERROR_PARSE,
                       "%s:%d: t = %s is not after t = %s on line %d; expected strictly "
                       "increasing times",
                       ctx->source, line_number, now, before, ctx->previous_line);
    }
    out->time_s = t;
    out->tracker_present = lay->tracker_mask;
    for (int d = 0; d < SLOT_COUNT; ++d) {
        if (!slot_in(d, lay->tracker_mask))
            continue;
        const enum em_result r =
            parse_device(lay, d, ctx->fields, ctx->source, line_number, slot_pose(out, d), err);
        if (r != EM_OK)
            return r;
    }
    memset(out_fingers, 0, sizeof *out_fingers);
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        if (!(lay->finger_mask & ST_FINGERS_BIT(h)))
            continue;
        const enum em_result r =
            parse_fingers(lay, h, ctx->fields, ctx->source, line_number, out_fingers, err);
        if (r != EM_OK)
            return r;
    }
    ctx->previous_t = t;
    ctx->previous_line = line_number;
    return EM_OK;
}

/* Fields in a line: commas + 1. */
static int
count_fields(const char *line)
{
    int n = 1;
    for (; *line; ++line)
        n += *line == ',';
    return n;
}

static enum em_result
parse_lines(struct u_line_reader *reader, const char *source, char **fields,
            bool ends_with_newline, struct st_stream *out, struct em_error *err)
{
    char *line;
    while ((line = u_line_next(reader)) && is_blank(line)) {
    }
    if (!line)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: empty file; expected a header line naming the columns, then one "
                       "row per sample",
                       source);
    struct layout lay;
    const int header_line = reader->line_number;
    enum em_result r = parse_header(line, header_line, source, &lay, fields, err);
    if (r != EM_OK)
        return r;
    struct row_context ctx = {.lay = &lay, .source = source, .fields = fields};
    while ((line = u_line_next(reader))) {
        if (is_blank(line))
            continue;
        struct em_tracking_frame frame;
        struct st_fingers fingers;
        /* A last row without its line end is one a crash cut short. */
        const bool cut = reader->cursor >= reader->end && !ends_with_newline;
        const int line_number = reader->line_number;
        const int fields_in_line = cut ? count_fields(line) : 0;
        r = parse_row(&ctx, line, line_number, &frame, &fingers, err);
        if (r != EM_OK && cut && fields_in_line < lay.column_count && out->frame_count > 0) {
            out->cut_line = line_number;
            break;
        }
        if (r != EM_OK)
            return r;
        if (st_stream_append_fingers(out, &frame, lay.finger_mask ? &fingers : NULL) != EM_OK)
            return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s:%d: out of memory", source,
                           reader->line_number);
    }
    if (out->frame_count == 0)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: no samples after the header (line %d); expected at least one row",
                       source, header_line);
    out->finger_mask = lay.finger_mask;
    return EM_OK;
}

enum em_result
st_stream_parse(char *text, const char *source, struct st_stream *out_stream,
                struct em_error *err)
{
    memset(out_stream, 0, sizeof *out_stream);
    if (!source)
        source = "stream";
    if (strncmp(text, "\xEF\xBB\xBF", 3) == 0)
        text += 3; /* a UTF-8 byte order mark some editors write */
    struct u_text t = {.data = text, .size = strlen(text)};
    struct u_line_reader reader;
    u_line_reader_init(&reader, &t);
    char **fields = malloc((MAX_COLUMNS + 1) * sizeof *fields);
    if (!fields)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", source);
    const bool ends_with_newline = t.size > 0 && t.data[t.size - 1] == '\n';
    const enum em_result r =
        parse_lines(&reader, source, fields, ends_with_newline, out_stream, err);
    free(fields);
    if (r != EM_OK)
        st_stream_fini(out_stream);
    return r;
}

enum em_result
st_stream_load(const char *path, struct st_stream *out_stream, struct em_error *err)
{
    memset(out_stream, 0, sizeof *out_stream);
    struct u_text text;
    enum em_result r = u_text_read_file(path, &text, err);
    if (r != EM_OK)
        return r;
    r = st_stream_parse(text.data, path, out_stream, err);
    u_text_fini(&text);
    return r;
}

/* ---- writing --------------------------------------------------------------------- */

#define RECORD_BUFFER_BYTES 65536

static enum em_result
write_failed(const struct st_stream_writer *w, struct em_error *err)
{
    return em_fail(err, EM_ERROR_IO, "%s: write error: %s", w->path, strerror(errno));
}

enum em_result
st_stream_writer_open(const char *path, struct st_stream_writer *out_writer,
                      struct em_error *err)
{
    memset(out_writer, 0, sizeof *out_writer);
    out_writer->path = strdup(path);
    if (!out_writer->path)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    const enum em_result opened = u_out_file_open(path, &out_writer->output, err);
    if (opened != EM_OK) {
        free(out_writer->path);
        out_writer->path = NULL;
        return opened;
    }
    out_writer->file = out_writer->output->file;
    return EM_OK;
}

enum em_result
st_stream_writer_open_recording(const char *path, struct st_stream_writer *out_writer,
                                struct em_error *err)
{
    memset(out_writer, 0, sizeof *out_writer);
    out_writer->path = strdup(path);
    if (!out_writer->path)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    const enum em_result opened = u_out_file_open_partial(path, &out_writer->output, err);
    if (opened != EM_OK) {
        free(out_writer->path);
        out_writer->path = NULL;
        return opened;
    }
    out_writer->file = out_writer->output->file;
    out_writer->recording = true;
    out_writer->last_flush_ns = u_time_now_ns();
    snprintf(out_writer->partial_path, sizeof out_writer->partial_path, "%s",
             out_writer->output->temp);
    snprintf(out_writer->leftover_path, sizeof out_writer->leftover_path, "%s",
             out_writer->output->leftover);
    /* Our own buffer size, so a flush we do not ask for never splits a row. */
    setvbuf(out_writer->file, NULL, _IOFBF, RECORD_BUFFER_BYTES);
    return EM_OK;
}

/* A recording's rows reach the file whole: flushed before a row would overflow the
 * buffer, and at least every ST_RECORD_FLUSH_S. */
static enum em_result
flush_rows(struct st_stream_writer *w, struct em_error *err)
{
    if (fflush(w->file) != 0)
        return write_failed(w, err);
    w->pending_bytes = 0;
    w->frames_on_disk = w->frames_written;
    w->last_flush_ns = u_time_now_ns();
    return EM_OK;
}

/* The header: t, the three devices, the tracker groups of `tracker_mask` in PROTOCOL
 * section 2b's order, then the finger groups of `finger_mask`, left first. */
static enum em_result
write_header(struct st_stream_writer *w, struct em_error *err)
{
    w->header_written = true;
    fputs("t", w->file);
    for (int d = 0; d < SLOT_COUNT; ++d)
        if (slot_in(d, w->tracker_mask))
            for (int f = 0; f < FIELD_COUNT; ++f)
                fprintf(w->file, ",%s_%s", slot_name(d), field_suffix[f]);
    for (int h = 0; h < HD_HAND_COUNT; ++h)
        if (w->finger_mask & ST_FINGERS_BIT(h))
            for (int f = 0; f < FINGER_FIELD_COUNT; ++f)
                fprintf(w->file, ",%s_%s", finger_group[h], finger_field_name(f));
    if (fputc('\n', w->file) == EOF)
        return write_failed(w, err);
    return EM_OK;
}

/* Refuses what the reader would refuse, so a recording always reads back. */
static enum em_result
check_frame(const struct st_stream_writer *w, const struct em_tracking_frame *frame,
            double t_s, struct em_error *err)
{
    if (!isfinite(t_s))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s: frame %ld: time is not finite",
                       w->path, w->frames_written);
    if (w->frames_written > 0 && !(t_s > w->last_time_s)) {
        char now[ST_NUMBER_MAX], before[ST_NUMBER_MAX];
        st_format_double(t_s, now);
        st_format_double(w->last_time_s, before);
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: frame %ld: t = %s s is not after the previous frame's t = %s s",
                       w->path, w->frames_written, now, before);
    }
    if (w->frames_written > 0 && t_s - w->last_time_s < ST_STREAM_MIN_STEP_S)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: frame %ld: %.3g s after the previous frame; expected at least 0.1 ms",
                       w->path, w->frames_written, t_s - w->last_time_s);
    for (int d = 0; d < SLOT_COUNT; ++d) {
        if (d >= EM_DEVICE_COUNT && !(frame->tracker_present & EM_TRACKER_BIT(d - EM_DEVICE_COUNT)))
            continue;
        const struct em_device_pose *dp = slot_pose_const(frame, d);
        const char *dev = slot_name(d);
        if (!m_vec3_is_finite(dp->pose.position_m) || !m_quat_is_finite(dp->pose.orientation))
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: frame %ld: the %s pose has a value that is not finite",
                           w->path, w->frames_written, dev);
        if (em_device_pose_usable(dp) && (double)m_vec3_length(dp->pose.position_m) > ST_STREAM_MAX_M)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: frame %ld: the %s is %.3g m from the origin; expected within "
                           "1 km",
                           w->path, w->frames_written, dev,
                           (double)m_vec3_length(dp->pose.position_m));
        const double n = quat_length(dp->pose.orientation);
        if (em_device_pose_usable(dp) && fabs(n - 1.0) > UNIT_QUAT_TOLERANCE)
            return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                           "%s: frame %ld: the %s orientation has length %.6g, expected a "
                           "unit quaternion",
                           w->path, w->frames_written, dev, n);
    }
    return EM_OK;
}

/* A valid hand's angles are within their joints' limits, as the reader wants them. */
static enum em_result
check_fingers(const struct st_stream_writer *w, const struct st_fingers *fingers,
              struct em_error *err)
{
    for (int h = 0; fingers && h < HD_HAND_COUNT; ++h) {
        if (!fingers->valid[h])
            continue;
        for (int f = 0; f < FINGER_VALID; ++f) {
            const float v = finger_angle_value(fingers, h, f);
            if (!finger_angle_ok(f, v))
                return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                               "%s: frame %ld: %s_%s is %g; expected within the joint's limits",
                               w->path, w->frames_written, finger_group[h],
                               finger_field_name(f), (double)v);
        }
    }
    return EM_OK;
}

enum em_result
st_stream_writer_write(struct st_stream_writer *w, const struct em_tracking_frame *frame,
                       struct em_error *err)
{
    return st_stream_writer_write_fingers(w, frame, NULL, err);
}

enum em_result
st_stream_writer_write_fingers(struct st_stream_writer *w, const struct em_tracking_frame *frame,
                               const struct st_fingers *fingers, struct em_error *err)
{
    assert(w->file);
    if (w->frames_written == 0)
        w->first_time_s = frame->time_s;
    /* A pause in the tracking becomes a step the reader takes. */
    if (w->frames_written > 0 && frame->time_s - w->first_time_s - w->last_time_s > ST_STREAM_MAX_STEP_S)
        w->first_time_s = frame->time_s - w->last_time_s - ST_STREAM_MAX_STEP_S;
    const double t_s = frame->time_s - w->first_time_s;
    enum em_result r = check_frame(w, frame, t_s, err);
    if (r == EM_OK)
        r = check_fingers(w, fingers, err);
    if (r != EM_OK)
        return r;
    if (!w->header_written) {
        w->tracker_mask |= frame->tracker_present & EM_TRACKER_ALL;
        if (fingers)
            w->finger_mask |= ST_FINGERS_ALL;
        r = write_header(w, err);
        if (r != EM_OK)
            return r;
    }
    /* Up to 131 numbers of at most ST_NUMBER_MAX characters, commas and a newline. */
    char row[(ST_NUMBER_MAX + 1) *
                 (1 + SLOT_COUNT * FIELD_COUNT + HD_HAND_COUNT * FINGER_FIELD_COUNT) +
             2];
    int n = st_format_double(t_s, row);
    for (int d = 0; d < SLOT_COUNT; ++d) {
        if (!slot_in(d, w->tracker_mask))
            continue;
        /* A tracker the header has but this frame lacks is written as not tracked. */
        const bool absent =
            d >= EM_DEVICE_COUNT && !(frame->tracker_present & EM_TRACKER_BIT(d - EM_DEVICE_COUNT));
        const struct em_device_pose none = {.flags = 0};
        const struct em_device_pose *dp = absent ? &none : slot_pose_const(frame, d);
        const float v[FIELD_VALID] = {dp->pose.position_m[0],  dp->pose.position_m[1],
                                      dp->pose.position_m[2],  dp->pose.orientation[0],
                                      dp->pose.orientation[1], dp->pose.orientation[2],
                                      dp->pose.orientation[3]};
        for (int f = 0; f < FIELD_VALID; ++f) {
            row[n++] = ',';
            n += st_format_float(v[f], row + n);
        }
        row[n++] = ',';
        row[n++] = em_device_pose_usable(dp) ? '1' : '0';
    }
    for (int h = 0; h < HD_HAND_COUNT; ++h) {
        if (!(w->finger_mask & ST_FINGERS_BIT(h)))
            continue;
        /* A hand not known this frame is written as zeros, not valid. */
        const bool known = fingers && fingers->valid[h];
        for (int f = 0; f < FINGER_VALID; ++f) {
            const float v = known ? finger_angle_value(fingers, h, f) : 0.0f;
            row[n++] = ',';
            n += st_format_float(v, row + n);
        }
        row[n++] = ',';
        row[n++] = known ? '1' : '0';
    }
    row[n++] = '\n';
    /* (less room for the header, written with the first row) */
    if (w->recording && w->pending_bytes + (size_t)n > RECORD_BUFFER_BYTES - 4096 &&
        flush_rows(w, err) != EM_OK)
        return EM_ERROR_IO;
    if (fwrite(row, 1, (size_t)n, w->file) != (size_t)n)
        return write_failed(w, err);
    w->last_time_s = t_s;
    w->frames_written++;
    w->pending_bytes += (size_t)n;
    if (w->recording && u_time_now_ns() - w->last_flush_ns >= (long long)(ST_RECORD_FLUSH_S * 1e9))
        return flush_rows(w, err);
    return EM_OK;
}

enum em_result
st_stream_writer_close(struct st_stream_writer *w, struct em_error *err)
{
    enum em_result r = EM_OK;
    if (w->file && !w->header_written)
        r = write_header(w, err);
    if (r != EM_OK) {
        st_stream_writer_abort(w);
        return r;
    }
    char saved[sizeof w->saved_path];
    r = u_out_file_commit_as(&w->output, saved, sizeof saved, err);
    free(w->path);
    memset(w, 0, sizeof *w);
    if (r == EM_OK)
        memcpy(w->saved_path, saved, sizeof saved);
    return r;
}

void
st_stream_writer_abort(struct st_stream_writer *w)
{
    u_out_file_abort(&w->output);
    free(w->path);
    memset(w, 0, sizeof *w);
}

enum em_result
st_stream_save(const char *path, const struct st_stream *stream, struct em_error *err)
{
    if (stream->frame_count <= 0)
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: no frames to save (a stream file needs at least one row)", path);
    struct st_stream_writer w;
    enum em_result r = st_stream_writer_open(path, &w, err);
    if (r != EM_OK)
        return r;
    for (int i = 0; i < stream->frame_count; ++i)
        w.tracker_mask |= stream->frames[i].tracker_present & EM_TRACKER_ALL;
    w.finger_mask = stream->finger_mask & ST_FINGERS_ALL;
    for (int i = 0; r == EM_OK && i < stream->frame_count; ++i)
        r = st_stream_writer_write_fingers(&w, &stream->frames[i],
                                           stream->fingers ? &stream->fingers[i] : NULL, err);
    if (r != EM_OK) {
        st_stream_writer_abort(&w); /* the target stays as it was */
        return r;
    }
    return st_stream_writer_close(&w, err);
}
