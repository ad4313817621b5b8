/*
 * The layer's settings, read once per instance that it serves:
 *
 *   - the default humanoid (config/humanoid.json) and the learned prior
 *     (PR_DEFAULT_MODEL, include/embody/prior.h; the procedural estimate without it);
 *   - the layer's settings file: $EMBODY_LAYER_SETTINGS, else config/layer.json:
 *
 *         {"format": "embody-layer", "version": 1,
 *          "height_m": 0,               (the player's height; 0: from the headset)
 *          "body_settings": "body.json"} (a body settings file, relative to this one)
 *
 *     every field optional, an unknown field refused naming the file and the field;
 *   - the environment over the file: EMBODY_LAYER_HEIGHT_M (metres),
 *     EMBODY_LAYER_CONFIG (a body settings file).
 *
 * Files are found as the program finds its data (EMBODY_DATA_DIR, beside the installed
 * library, the source tree). An application cannot show the layer's errors: they go to
 * the log (stderr), and a refused file refuses the instance (XR_ERROR_INITIALIZATION_FAILED)
 * rather than serving a body set up otherwise than asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "layer/lyr_internal.h"
#include "util/u_log.h"
#include "util/u_path.h"
#include "util/u_text.h"

#define PATH_MAX_LEN 4096

/* The layer file's fields into `out_height_m` and `out_body_path` (resolved against the
 * file's folder); both untouched when absent. */
static enum em_result
parse_layer_file(const char *path, float *out_height_m, char *out_body_path, size_t size,
                 struct em_error *err)
{
    struct u_text text;
    enum em_result r = u_text_read_file(path, &text, err);
    if (r != EM_OK)
        return r;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text.data, &end, 1);
    if (!root) {
        r = u_json_parse_error(text.data, path, end, err);
        u_text_fini(&text);
        return r;
    }
    u_text_fini(&text);
    static const char *const k_fields[] = {"format", "version", "note", "height_m",
                                           "body_settings"};
    const cJSON *item = NULL;
    const cJSON *fields = cJSON_IsObject(root) ? root : NULL;
    if (!fields)
        r = em_fail(err, EM_ERROR_PARSE, "%s: expected a JSON object at the top", path);
    else
        r = u_json_check_unique_keys(root, path, err);
    cJSON_ArrayForEach(item, fields)
    {
        bool known = false;
        for (size_t i = 0; i < sizeof k_fields / sizeof k_fields[0]; ++i)
            known = known || strcmp(item->string, k_fields[i]) == 0;
        if (!known && r == EM_OK)
            r = em_fail(err, EM_ERROR_PARSE,
                        "%s: %s: unknown field (expected format, version, note, height_m, "
                        "body_settings)",
                        path, item->string);
    }
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *height = cJSON_GetObjectItemCaseSensitive(root, "height_m");
    const cJSON *body = cJSON_GetObjectItemCaseSensitive(root, "body_settings");
    if (r == EM_OK && format &&
        !(cJSON_IsString(format) && strcmp(format->valuestring, "embody-layer") == 0))
        r = em_fail(err, EM_ERROR_PARSE, "%s: format: expected \"embody-layer\"", path);
    if (r == EM_OK && version && !(cJSON_IsNumber(version) && version->valuedouble == 1.0))
        r = em_fail(err, EM_ERROR_PARSE, "%s: version: expected 1", path);
    if (r == EM_OK && height &&
        !(cJSON_IsNumber(height) &&
          (height->valuedouble == 0.0 || (height->valuedouble >= (double)IN_HEIGHT_MIN_M &&
                                          height->valuedouble <= (double)IN_HEIGHT_MAX_M))))
        r = em_fail(err, EM_ERROR_PARSE,
                    "%s: height_m: expected 0 (from the headset) or a height in metres from %.1f "
                    "to %.1f",
                    path, (double)IN_HEIGHT_MIN_M, (double)IN_HEIGHT_MAX_M);
    if (r == EM_OK && body && !(cJSON_IsString(body) && body->valuestring[0]))
        r = em_fail(err, EM_ERROR_PARSE, "%s: body_settings: expected a file name", path);
    if (r == EM_OK && height)
        *out_height_m = (float)height->valuedouble;
    if (r == EM_OK && body) {
        const char *slash = strrchr(path, '/');
        if (body->valuestring[0] == '/' || !slash)
            snprintf(out_body_path, size, "%s", body->valuestring);
        else
            snprintf(out_body_path, size, "%.*s/%s", (int)(slash - path), path, body->valuestring);
    }
    cJSON_Delete(root);
    return r;
}

/* EMBODY_LAYER_HEIGHT_M, when set: false (logged) when it is not a height. */
static bool
height_from_env(float *out_height_m)
{
    const char *height = getenv("EMBODY_LAYER_HEIGHT_M");
    if (!height || !height[0])
        return true;
    char *end = NULL;
    const double h = strtod(height, &end);
    if (!end || *end != '\0' || !(h >= (double)IN_HEIGHT_MIN_M && h <= (double)IN_HEIGHT_MAX_M)) {
        U_LOG_E("openxr layer: EMBODY_LAYER_HEIGHT_M: expected a height in metres from %.1f "
                "to %.1f, got \"%s\"",
                (double)IN_HEIGHT_MIN_M, (double)IN_HEIGHT_MAX_M, height);
        return false;
    }
    *out_height_m = (float)h;
    return true;
}

bool
lyr_settings_load(struct lyr_settings *st)
{
    struct em_error err = {{0}};
    char path[PATH_MAX_LEN], body_path[PATH_MAX_LEN] = "";
    memset(st, 0, sizeof *st);
    const char *layer_file = getenv("EMBODY_LAYER_SETTINGS");
    if (layer_file && layer_file[0]) {
        if (parse_layer_file(layer_file, &st->fixed_height_m, body_path, sizeof body_path, &err) !=
            EM_OK) {
            U_LOG_E("openxr layer: EMBODY_LAYER_SETTINGS: %s", err.message);
            return false;
        }
    } else if (u_path_find_data("config/layer.json", path, sizeof path) &&
               parse_layer_file(path, &st->fixed_height_m, body_path, sizeof body_path, &err) !=
                   EM_OK) {
        U_LOG_E("openxr layer: %s", err.message);
        return false;
    }
    if (!height_from_env(&st->fixed_height_m))
        return false;
    const char *config = getenv("EMBODY_LAYER_CONFIG");
    if (config && config[0])
        snprintf(body_path, sizeof body_path, "%s", config);
    else if (!body_path[0] && u_path_find_data("config/body.json", path, sizeof path))
        snprintf(body_path, sizeof body_path, "%s", path);
    if (body_path[0] && body_desc_load_json(body_path, &st->body, &err) != EM_OK) {
        U_LOG_E("openxr layer: %s", err.message);
        return false;
    }
    if (!u_path_find_data("config/humanoid.json", path, sizeof path)) {
        U_LOG_E("openxr layer: cannot find config/humanoid.json (tried %s); set "
                "EMBODY_DATA_DIR to the folder holding config/",
                path);
        return false;
    }
    if (sk_skeleton_load_json(path, &st->skeleton, &err) != EM_OK) {
        U_LOG_E("openxr layer: %s", err.message);
        return false;
    }
    if (u_path_find_data(PR_DEFAULT_MODEL, path, sizeof path)) {
        if (pr_model_load(path, &st->prior, &err) == EM_OK)
            st->has_prior = true;
        else
            U_LOG_W("openxr layer: %s; the body uses the procedural estimate", err.message);
    }
    return true;
}

void
lyr_settings_fini(struct lyr_settings *st)
{
    sk_skeleton_fini(&st->skeleton);
    if (st->has_prior)
        pr_model_fini(&st->prior);
    st->has_prior = false;
}
