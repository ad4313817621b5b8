/*
 * Bone map files (skeleton.h, struct sk_bone_map): for a rig the name map does not know,
 * the player names each humanoid bone's node,
 *
 *   { "hips": "Bip01 Pelvis", "spine": "Bip01 Spine", "leftUpperArm": "Bip01 L UpperArm" }
 *
 * and --print-rig writes the mapping a load used in the same form, to copy and fix.
 * Checked as every settings file: errors name the file and the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "embody/skeleton.h"
#include "util/u_text.h"

/* The humanoid bones a map may name (no end joints), comma separated, for messages. */
static void
bone_list(char *out, size_t size)
{
    out[0] = '\0';
    for (int b = 0; b < SK_HEAD_TOP; ++b) {
        const size_t n = strlen(out);
        snprintf(out + n, size - n, "%s%s", b ? ", " : "", sk_bone_name((enum sk_bone)b));
    }
}

static enum em_result
read_entry(const cJSON *item, const char *source, struct sk_bone_map *m, struct em_error *err)
{
    const enum sk_bone b = sk_bone_from_name(item->string);
    if (b == SK_BONE_NONE || b >= SK_HEAD_TOP) {
        char names[600];
        bone_list(names, sizeof names);
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: \"%s\": not a humanoid bone embody knows (expected one of %s)",
                       source, item->string, names);
    }
    if (m->node[b][0])
        return em_fail(err, EM_ERROR_PARSE, "%s: \"%s\": given twice", source, item->string);
    if (!cJSON_IsString(item) || !item->valuestring[0])
        return em_fail(err, EM_ERROR_PARSE, "%s: \"%s\": expected a node name (a non-empty string)",
                       source, item->string);
    if (strlen(item->valuestring) >= SK_BONE_MAP_NODE_MAX)
        return em_fail(err, EM_ERROR_PARSE, "%s: \"%s\": a node name of %zu bytes, at most %d",
                       source, item->string, strlen(item->valuestring), SK_BONE_MAP_NODE_MAX - 1);
    for (int o = 0; o < SK_HEAD_TOP; ++o)
        if (strcmp(m->node[o], item->valuestring) == 0)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: \"%s\": node \"%s\" is already \"%s\"'s (a node is one bone)",
                           source, item->string, item->valuestring,
                           sk_bone_name((enum sk_bone)o));
    snprintf(m->node[b], sizeof m->node[b], "%s", item->valuestring);
    return EM_OK;
}

enum em_result
sk_bone_map_parse(const char *text, size_t len, const char *source, struct sk_bone_map *out_map,
                  struct em_error *err)
{
    memset(out_map, 0, sizeof *out_map);
    snprintf(out_map->source, sizeof out_map->source, "%s", source);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root)
        return u_json_parse_error(text, source, end ? end : cJSON_GetErrorPtr(), err);
    enum em_result r = EM_OK;
    if (!cJSON_IsObject(root))
        r = em_fail(err, EM_ERROR_PARSE,
                    "%s: expected a JSON object of humanoid bone -> node name, such as "
                    "{\"hips\": \"Pelvis\", \"leftUpperArm\": \"arm.L\"}",
                    source);
    const cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        if (r != EM_OK)
            break;
        r = read_entry(item, source, out_map, err);
    }
    cJSON_Delete(root);
    return r;
}

enum em_result
sk_bone_map_load(const char *path, struct sk_bone_map *out_map, struct em_error *err)
{
    memset(out_map, 0, sizeof *out_map);
    struct u_text text;
    enum em_result r = u_text_read_file(path, &text, err);
    if (r != EM_OK)
        return r;
    r = sk_bone_map_parse(text.data, text.size, path, out_map, err);
    u_text_fini(&text);
    return r;
}

/* `s` as a JSON string's contents: quotes, backslashes and control bytes escaped. */
static int
format_string(const char *s, char *out, size_t size)
{
    int n = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; ++c) {
        char tmp[8];
        if (*c == '"' || *c == '\\')
            snprintf(tmp, sizeof tmp, "\\%c", *c);
        else if (*c < 0x20)
            snprintf(tmp, sizeof tmp, "\\u%04x", *c);
        else
            snprintf(tmp, sizeof tmp, "%c", *c);
        const int k = snprintf(out && (size_t)n < size ? out + n : NULL,
                               out && (size_t)n < size ? size - (size_t)n : 0, "%s", tmp);
        n += k;
    }
    return n;
}

int
sk_bone_map_format(const struct sk_bone_map *map, char *out, size_t out_size)
{
    int n = 0;
#define EMIT(...)                                                                                  \
    n += snprintf(out && (size_t)n < out_size ? out + n : NULL,                                    \
                  out && (size_t)n < out_size ? out_size - (size_t)n : 0, __VA_ARGS__)
    EMIT("{");
    bool first = true;
    for (int b = 0; b < SK_HEAD_TOP; ++b) {
        if (!map->node[b][0])
            continue;
        EMIT("%s\n    \"%s\": \"", first ? "" : ",", sk_bone_name((enum sk_bone)b));
        n += format_string(map->node[b], out && (size_t)n < out_size ? out + n : NULL,
                           out && (size_t)n < out_size ? out_size - (size_t)n : 0);
        EMIT("\"");
        first = false;
    }
    EMIT("\n}\n");
#undef EMIT
    return n;
}
