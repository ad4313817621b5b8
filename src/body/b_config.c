/*
 * Reading the body's settings from JSON (config/body.json): device offsets, the jitter
 * filter, the tracking-loss blend, the floor. Every error names the file and the field.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "embody/body.h"
#include "embody/m_math.h"
#include "util/u_text.h"

/* Refuses a field the format does not have (a misspelt setting would otherwise be
 * silently ignored): "body.json: filter.bta: unknown field (expected min_cutoff_hz,
 * beta)". `known` is a comma-separated list. */
static bool
is_known(const char *name, const char *known)
{
    const size_t n = strlen(name);
    for (const char *k = known; *k;) {
        const size_t len = strcspn(k, ",");
        if (len == n && strncmp(k, name, n) == 0)
            return true;
        k += len + (k[len] == ',');
    }
    return false;
}

/* Messages name a field as "SOURCE: a.b.c": `where` is the file alone at the top level
 * and "SOURCE: a.b" below it, so a key follows the file with ": " and a parent with ".". */
static const char *
sep(const char *where)
{
    return strstr(where, ": ") ? "." : ": ";
}

static enum em_result
check_fields(const cJSON *obj, const char *known, const char *where, struct em_error *err)
{
    for (const cJSON *item = obj ? obj->child : NULL; item; item = item->next)
        if (item->string && !is_known(item->string, known))
            return em_fail(err, EM_ERROR_PARSE, "%s%s%s: unknown field (expected one of: %s)",
                           where, sep(where), item->string, known);
    return EM_OK;
}

/* An optional array of `n` finite numbers at obj.key. */
static enum em_result
read_floats(const cJSON *obj, const char *key, int n, const char *where, float *out,
            bool *out_present, struct em_error *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out_present = a != NULL;
    if (!a)
        return EM_OK;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return em_fail(err, EM_ERROR_PARSE, "%s%s%s: expected an array of %d numbers", where,
                       sep(where), key, n);
    for (int i = 0; i < n; ++i) {
        const cJSON *v = cJSON_GetArrayItem(a, i);
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || fabs(v->valuedouble) > 1e6)
            return em_fail(err, EM_ERROR_PARSE, "%s%s%s[%d]: expected a finite number", where,
                           sep(where), key, i);
        out[i] = (float)v->valuedouble;
    }
    return EM_OK;
}

/* An optional number at obj.key within [lo, hi]. */
static enum em_result
read_number(const cJSON *obj, const char *key, double lo, double hi, const char *where,
            float *out, struct em_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return EM_OK;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi)
        return em_fail(err, EM_ERROR_PARSE, "%s%s%s: expected a number from %g to %g", where,
                       sep(where), key, lo, hi);
    *out = (float)v->valuedouble;
    return EM_OK;
}

static const cJSON *
object_or_null(const cJSON *parent, const char *key, const char *where, bool *bad,
               struct em_error *err)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);
    if (o && !cJSON_IsObject(o)) {
        em_fail(err, EM_ERROR_PARSE, "%s%s%s: expected an object", where, sep(where), key);
        *bad = true;
        return NULL;
    }
    return o;
}

static enum em_result
read_rotation(const cJSON *obj, const char *where, float *out, struct em_error *err)
{
    float q[4];
    bool present;
    enum em_result r = read_floats(obj, "rotation_xyzw", 4, where, q, &present, err);
    if (r != EM_OK || !present)
        return r;
    const float n = sqrtf(m_quat_dot(q, q));
    if (fabsf(n - 1.0f) > 1e-3f)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s.rotation_xyzw: expected a unit quaternion (x, y, z, w), its length "
                       "is %g",
                       where, (double)n);
    m_quat_copy(q, out);
    m_quat_normalize(out);
    return EM_OK;
}

/* Grip axes given as the grip's +X, +Y, +Z in the hand's frame: a rotation matrix. */
static enum em_result
read_axes(const cJSON *obj, const char *where, float *out, struct em_error *err)
{
    bool bad = false;
    const cJSON *axes = object_or_null(obj, "axes", where, &bad, err);
    if (bad)
        return EM_ERROR_PARSE;
    if (!axes)
        return EM_OK;
    char inner[400];
    snprintf(inner, sizeof inner, "%s.axes", where);
    if (check_fields(axes, "x,y,z", inner, err) != EM_OK)
        return EM_ERROR_PARSE;
    float col[3][3];
    static const char *const names[3] = {"x", "y", "z"};
    for (int i = 0; i < 3; ++i) {
        bool present;
        enum em_result r = read_floats(axes, names[i], 3, inner, col[i], &present, err);
        if (r != EM_OK)
            return r;
        if (!present)
            return em_fail(err, EM_ERROR_PARSE, "%s: expected x, y and z", inner);
    }
    /* Orthonormal and right-handed, or it is not a rotation. */
    float cross[3];
    m_vec3_cross(col[0], col[1], cross);
    const bool unit = fabsf(m_vec3_length(col[0]) - 1) < 1e-3f &&
                      fabsf(m_vec3_length(col[1]) - 1) < 1e-3f &&
                      fabsf(m_vec3_length(col[2]) - 1) < 1e-3f;
    if (!unit || fabsf(m_vec3_dot(col[0], col[1])) > 1e-3f ||
        m_vec3_distance(cross, col[2]) > 1e-3f)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: expected orthonormal unit axes with z = x cross y", inner);
    m_quat_from_columns(col[0], col[1], col[2], out);
    return EM_OK;
}

static enum em_result
read_devices(const cJSON *devices, const char *src, struct body_desc *d, struct em_error *err)
{
    char where[300];
    bool bad = false, present;
    snprintf(where, sizeof where, "%s: devices", src);
    if (check_fields(devices, "head,grip", where, err) != EM_OK)
        return EM_ERROR_PARSE;
    snprintf(where, sizeof where, "%s: devices.head", src);
    const cJSON *head = object_or_null(devices, "head", where, &bad, err);
    if (bad)
        return EM_ERROR_PARSE;
    enum em_result r = EM_OK;
    if (head) {
        r = check_fields(head, "position_m,rotation_xyzw", where, err);
        if (r == EM_OK)
            r = read_floats(head, "position_m", 3, where, d->offsets.head_position_m, &present,
                            err);
        if (r == EM_OK)
            r = read_rotation(head, where, d->offsets.head_rotation, err);
        if (r != EM_OK)
            return r;
    }
    snprintf(where, sizeof where, "%s: devices", src);
    const cJSON *grip = object_or_null(devices, "grip", where, &bad, err);
    if (bad)
        return EM_ERROR_PARSE;
    if (!grip)
        return EM_OK;
    snprintf(where, sizeof where, "%s: devices.grip", src);
    r = check_fields(grip, "palm_fraction,left,right", where, err);
    if (r == EM_OK)
        r = read_number(grip, "palm_fraction", 0.0, 1.0, where, &d->offsets.grip_palm_fraction,
                        err);
    static const char *const sides[2] = {"left", "right"};
    for (int s = 0; r == EM_OK && s < 2; ++s) {
        char side_where[330];
        snprintf(side_where, sizeof side_where, "%s.%s", where, sides[s]);
        const cJSON *o = object_or_null(grip, sides[s], where, &bad, err);
        if (bad)
            return EM_ERROR_PARSE;
        if (!o)
            continue;
        r = check_fields(o, "offset_m,axes", side_where, err);
        if (r == EM_OK)
            r = read_floats(o, "offset_m", 3, side_where, d->offsets.grip_offset_m[s], &present,
                            err);
        if (r == EM_OK)
            r = read_axes(o, side_where, d->offsets.grip_rotation[s], err);
    }
    return r;
}

/* "trackers": {"pelvis": {"position_m": [x, y, z], "rotation_xyzw": [...]}, ...}: body
 * tracker mounts (include/embody/body.h), by em_tracker_name. */
static enum em_result
read_trackers(const cJSON *trackers, const char *src, struct body_desc *d, struct em_error *err)
{
    for (const cJSON *t = trackers->child; t; t = t->next) {
        const int k = em_tracker_find(t->string ? t->string : "");
        if (k < 0)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: trackers.%s: not a tracker (pelvis, chest, left_foot, "
                           "right_foot, left_knee, right_knee, left_elbow, right_elbow)",
                           src, t->string ? t->string : "?");
        char where[300];
        snprintf(where, sizeof where, "%s: trackers.%s", src, t->string);
        if (!cJSON_IsObject(t))
            return em_fail(err, EM_ERROR_PARSE, "%s: expected an object", where);
        struct body_tracker_mount *m = &d->tracker_mount[k];
        bool present;
        enum em_result r = read_floats(t, "position_m", 3, where, m->position_m, &present, err);
        if (r == EM_OK && m->rotation[3] == 0.0f && m->rotation[0] == 0.0f &&
            m->rotation[1] == 0.0f && m->rotation[2] == 0.0f)
            m_quat_identity(m->rotation); /* a position alone is a mount with the bone's axes */
        if (r == EM_OK)
            r = read_rotation(t, where, m->rotation, err);
        if (r != EM_OK)
            return r;
    }
    return EM_OK;
}

enum em_result
body_desc_parse_json(const char *text, const char *source, struct body_desc *desc,
                     struct em_error *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root)
        return u_json_parse_error(text, source, end, err);
    struct body_desc d = *desc;
    enum em_result r = EM_OK;
    char where[300];
    bool bad = false;
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!cJSON_IsObject(root))
        r = em_fail(err, EM_ERROR_PARSE, "%s: expected a JSON object at the top", source);
    else if (format && !(cJSON_IsString(format) && strcmp(format->valuestring, "embody-body") == 0))
        r = em_fail(err, EM_ERROR_PARSE, "%s: format: expected \"embody-body\"", source);
    else if (version && !(cJSON_IsNumber(version) && version->valuedouble == 1.0))
        r = em_fail(err, EM_ERROR_PARSE,
                    "%s: version: expected 1 (the version this embody reads)", source);
    else
        r = u_json_check_unique_keys(root, source, err);
    if (r == EM_OK)
        r = check_fields(root,
                         /* "faults" is the program's (src/app/app_settings.c) */
                         "format,version,note,devices,filter,tracking_loss,floor_height_m,"
                         "arm_stretch_max,trackers,faults",
                         source, err);
    if (r == EM_OK) {
        snprintf(where, sizeof where, "%s", source);
        const cJSON *devices = object_or_null(root, "devices", where, &bad, err);
        if (bad)
            r = EM_ERROR_PARSE;
        else if (devices)
            r = read_devices(devices, source, &d, err);
    }
    if (r == EM_OK) {
        snprintf(where, sizeof where, "%s: filter", source);
        const cJSON *filter = object_or_null(root, "filter", source, &bad, err);
        if (bad)
            r = EM_ERROR_PARSE;
        else if (filter) {
            r = check_fields(filter, "min_cutoff_hz,beta", where, err);
            if (r == EM_OK)
                r = read_number(filter, "min_cutoff_hz", -1.0, 1000.0, where,
                                &d.filter_min_cutoff_hz, err);
            if (r == EM_OK)
                r = read_number(filter, "beta", 0.0, 1000.0, where, &d.filter_beta, err);
        }
    }
    if (r == EM_OK) {
        snprintf(where, sizeof where, "%s: tracking_loss", source);
        const cJSON *loss = object_or_null(root, "tracking_loss", source, &bad, err);
        if (bad)
            r = EM_ERROR_PARSE;
        else if (loss && (r = check_fields(loss, "blend_s", where, err)) == EM_OK)
            r = read_number(loss, "blend_s", 0.0, 10.0, where, &d.loss_blend_s, err);
    }
    if (r == EM_OK)
        r = read_number(root, "floor_height_m", -10.0, 10.0, source, &d.floor_height_m, err);
    if (r == EM_OK)
        r = read_number(root, "arm_stretch_max", 0.0, (double)BODY_ARM_STRETCH_MAX, source,
                        &d.arm_stretch_max, err);
    if (r == EM_OK) {
        const cJSON *trackers = object_or_null(root, "trackers", source, &bad, err);
        if (bad)
            r = EM_ERROR_PARSE;
        else if (trackers)
            r = read_trackers(trackers, source, &d, err);
    }
    cJSON_Delete(root);
    if (r == EM_OK)
        *desc = d;
    return r;
}

enum em_result
body_desc_load_json(const char *path, struct body_desc *desc, struct em_error *err)
{
    struct u_text text;
    enum em_result r = u_text_read_file(path, &text, err);
    if (r != EM_OK)
        return r;
    r = body_desc_parse_json(text.data, path, desc, err);
    u_text_fini(&text);
    return r;
}
