/*
 * Reading skeletons from embody's JSON skeleton files (config/humanoid.json):
 *
 *   { "format": "embody-skeleton", "version": 1,
 *     "joints": [ { "name": "hips", "offset_m": [0, 0.95, 0] },
 *                 { "name": "spine", "parent": "hips", "offset_m": [0, 0.1, 0],
 *                   "limit": { "type": "ball", "axis": [0, 1, 0], "cone_deg": 30,
 *                              "twist_deg": [-20, 20] } },
 *                 { "name": "leftLowerArm", "parent": "leftUpperArm", ...,
 *                   "limit": { "type": "hinge", "axis": [0, 1, 0],
 *                              "range_deg": [-150, 0] } } ] }
 *
 * Every error names the file and the field ("joints[4].limit.range_deg") or, for broken
 * JSON, the line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "embody/m_math.h"
#include "embody/skeleton.h"
#include "util/u_text.h"

static enum em_result
read_vec3(const cJSON *obj, const char *key, const char *where, float *out,
          struct em_error *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 3)
        return em_fail(err, EM_ERROR_PARSE, "%s.%s: expected an array of 3 numbers", where, key);
    for (int i = 0; i < 3; ++i) {
        const cJSON *v = cJSON_GetArrayItem(a, i);
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
            return em_fail(err, EM_ERROR_PARSE, "%s.%s[%d]: expected a finite number", where, key,
                           i);
        out[i] = (float)v->valuedouble;
    }
    return EM_OK;
}

static enum em_result
read_range_deg(const cJSON *obj, const char *key, const char *where, float *out_min_rad,
               float *out_max_rad, struct em_error *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 2)
        return em_fail(err, EM_ERROR_PARSE, "%s.%s: expected [min, max] in degrees", where, key);
    const cJSON *lo = cJSON_GetArrayItem(a, 0), *hi = cJSON_GetArrayItem(a, 1);
    if (!cJSON_IsNumber(lo) || !cJSON_IsNumber(hi) || !isfinite(lo->valuedouble) ||
        !isfinite(hi->valuedouble))
        return em_fail(err, EM_ERROR_PARSE, "%s.%s: expected two finite numbers", where, key);
    if (lo->valuedouble > hi->valuedouble || lo->valuedouble < -180.0 || hi->valuedouble > 180.0)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s.%s: expected min <= max within [-180, 180], got [%g, %g]", where, key,
                       lo->valuedouble, hi->valuedouble);
    *out_min_rad = (float)lo->valuedouble * M_DEG_TO_RAD;
    *out_max_rad = (float)hi->valuedouble * M_DEG_TO_RAD;
    return EM_OK;
}

static enum em_result
read_limit(const cJSON *obj, const char *where, struct sk_limit *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    if (!obj)
        return EM_OK;
    if (!cJSON_IsObject(obj))
        return em_fail(err, EM_ERROR_PARSE, "%s: expected an object", where);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(obj, "type");
    const char *t = cJSON_GetStringValue(type);
    if (!t)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s.type: expected \"hinge\", \"ball\" or \"none\"", where);
    if (strcmp(t, "none") == 0)
        return EM_OK;
    enum em_result r = read_vec3(obj, "axis", where, out->axis, err);
    if (r != EM_OK)
        return r;
    if (!(m_vec3_length(out->axis) > 1e-6f))
        return em_fail(err, EM_ERROR_PARSE, "%s.axis: expected a non-zero vector", where);
    if (strcmp(t, "hinge") == 0) {
        out->kind = SK_LIMIT_HINGE;
        return read_range_deg(obj, "range_deg", where, &out->min_rad, &out->max_rad, err);
    }
    if (strcmp(t, "ball") == 0) {
        out->kind = SK_LIMIT_BALL;
        const cJSON *cone = cJSON_GetObjectItemCaseSensitive(obj, "cone_deg");
        if (!cJSON_IsNumber(cone) || !(cone->valuedouble > 0.0 && cone->valuedouble <= 180.0))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s.cone_deg: expected an angle in (0, 180] degrees", where);
        out->cone_rad = (float)cone->valuedouble * M_DEG_TO_RAD;
        return read_range_deg(obj, "twist_deg", where, &out->min_rad, &out->max_rad, err);
    }
    return em_fail(err, EM_ERROR_PARSE,
                   "%s.type: expected \"hinge\", \"ball\" or \"none\", got \"%s\"", where, t);
}

static enum em_result
read_joints(const cJSON *joints, const char *source, struct sk_joint_desc *descs,
            struct em_error *err)
{
    /* Walked as the list it is (cJSON_GetArrayItem would walk it from the start for
     * every joint). */
    int i = 0;
    for (const cJSON *j = joints->child; j; j = j->next, ++i) {
        char where[600];
        snprintf(where, sizeof where, "%s: joints[%d]", source, i);
        if (!cJSON_IsObject(j))
            return em_fail(err, EM_ERROR_PARSE, "%s: expected an object", where);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
        if (!cJSON_IsString(name) || !name->valuestring[0])
            return em_fail(err, EM_ERROR_PARSE, "%s.name: expected a non-empty string", where);
        descs[i].name = name->valuestring;
        const cJSON *parent = cJSON_GetObjectItemCaseSensitive(j, "parent");
        if (parent && !cJSON_IsNull(parent) && !cJSON_IsString(parent))
            return em_fail(err, EM_ERROR_PARSE, "%s.parent: expected a joint name or null",
                           where);
        descs[i].parent = cJSON_IsString(parent) ? parent->valuestring : NULL;
        enum em_result r = read_vec3(j, "offset_m", where, descs[i].offset_m, err);
        if (r != EM_OK)
            return r;
        char limit_where[640];
        snprintf(limit_where, sizeof limit_where, "%s.limit", where);
        r = read_limit(cJSON_GetObjectItemCaseSensitive(j, "limit"), limit_where,
                       &descs[i].limit, err);
        if (r != EM_OK)
            return r;
    }
    return EM_OK;
}

enum em_result
sk_skeleton_parse_json(const char *text, const char *source, struct sk_skeleton *out,
                       struct em_error *err)
{
    memset(out, 0, sizeof *out);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        return u_json_parse_error(text, source, end ? end : cJSON_GetErrorPtr(), err);
    }
    enum em_result r = EM_OK;
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *joints = cJSON_GetObjectItemCaseSensitive(root, "joints");
    if (!cJSON_IsObject(root)) {
        r = em_fail(err, EM_ERROR_PARSE, "%s: expected a JSON object at the top", source);
    } else if (format && !(cJSON_IsString(format) &&
                           strcmp(format->valuestring, "embody-skeleton") == 0)) {
        r = em_fail(err, EM_ERROR_PARSE, "%s: format: expected \"embody-skeleton\"", source);
    } else if (!cJSON_IsArray(joints) || cJSON_GetArraySize(joints) == 0) {
        r = em_fail(err, EM_ERROR_PARSE, "%s: joints: expected a non-empty array", source);
    }
    if (r == EM_OK && cJSON_GetArraySize(joints) > SK_MAX_JOINTS)
        r = em_fail(err, EM_ERROR_LIMIT,
                    "%s: joints: %d joints, at most %d are supported (a humanoid avatar has 20 "
                    "to 100)",
                    source, cJSON_GetArraySize(joints), SK_MAX_JOINTS);
    if (r == EM_OK) {
        const int count = cJSON_GetArraySize(joints);
        struct sk_joint_desc *descs = calloc((size_t)count, sizeof *descs);
        if (!descs)
            r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", source);
        if (r == EM_OK)
            r = read_joints(joints, source, descs, err);
        if (r == EM_OK)
            r = sk_skeleton_create(descs, count, source, out, err);
        free(descs);
    }
    cJSON_Delete(root);
    return r;
}

enum em_result
sk_skeleton_load_json(const char *path, struct sk_skeleton *out, struct em_error *err)
{
    struct u_text text;
    enum em_result r = u_text_read_file(path, &text, err);
    if (r != EM_OK) {
        memset(out, 0, sizeof *out);
        return r;
    }
    r = sk_skeleton_parse_json(text.data, path, out, err);
    u_text_fini(&text);
    return r;
}
