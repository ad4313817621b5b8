/*
 * The avatar file as a container, checked before assimp sees it: the GLB header and chunks
 * (glTF 2.0 spec, "Binary glTF Layout"), the JSON, asset.version, and the humanoid bones
 * from VRM 0.x (extensions.VRM.humanoid.humanBones: [{"bone": "hips", "node": 3}, ...]),
 * VRM 1.0 (extensions.VRMC_vrm.humanoid.humanBones: {"hips": {"node": 3}, ...}); a plain
 * glTF's bones are found in the node tree (av_load.c, sk_rig_find_bones).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "avatar/av_internal.h"
#include "skeleton/sk_fingers.h"
#include "util/u_log.h"

#define GLB_MAGIC 0x46546C67u      /* "glTF" */
#define GLB_CHUNK_JSON 0x4E4F534Au /* "JSON" */
#define GLB_CHUNK_BIN 0x004E4942u  /* "BIN\0" */

static uint32_t
read_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static enum em_result
read_bytes(const char *path, struct av_file *f, struct em_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return em_fail(err, EM_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    enum em_result r = EM_OK;
    long size = -1;
    if (fseek(fp, 0, SEEK_END) == 0)
        size = ftell(fp);
    if (size < 0 || fseek(fp, 0, SEEK_SET) != 0)
        r = em_fail(err, EM_ERROR_IO, "%s: cannot read its size", path);
    else if ((unsigned long)size > AV_MAX_FILE_BYTES)
        r = em_fail(err, EM_ERROR_LIMIT,
                    "%s: %ld bytes, more than the %u MB an avatar file may have", path, size,
                    AV_MAX_FILE_BYTES >> 20);
    else if (!(f->bytes = malloc((size_t)size + 1)))
        r = em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    else if (fread(f->bytes, 1, (size_t)size, fp) != (size_t)size)
        r = em_fail(err, EM_ERROR_IO, "%s: read failed", path);
    fclose(fp);
    if (r == EM_OK) {
        f->size = (size_t)size;
        f->bytes[f->size] = 0;
    }
    return r;
}

/* Checks the GLB header and chunks; returns the JSON chunk. */
static enum em_result
glb_json(const char *path, const struct av_file *f, const char **out_json, size_t *out_len,
         struct em_error *err)
{
    const uint8_t *b = f->bytes;
    if (f->size < 12)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: truncated GLB: %zu bytes, less than its 12-byte header", path, f->size);
    if (read_u32(b) != GLB_MAGIC)
        return em_fail(err, EM_ERROR_PARSE, "%s: not a GLB file (no \"glTF\" magic at the start)",
                       path);
    const uint32_t version = read_u32(b + 4), length = read_u32(b + 8);
    if (version != 2)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "%s: GLB container version %u (this reader knows version 2)", path, version);
    if (length > f->size)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: truncated GLB: the header says %u bytes, the file has %zu", path,
                       length, f->size);
    if (length < 20)
        return em_fail(err, EM_ERROR_PARSE, "%s: corrupt GLB: no JSON chunk", path);
    const uint32_t json_len = read_u32(b + 12), json_type = read_u32(b + 16);
    if (json_type != GLB_CHUNK_JSON)
        return em_fail(err, EM_ERROR_PARSE, "%s: corrupt GLB: the first chunk is not JSON", path);
    if (json_len > length - 20)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: corrupt GLB: the JSON chunk (%u bytes) runs past the end (%u)", path,
                       json_len, length);
    size_t at = 20 + (size_t)json_len;
    if (at + 8 <= length) {
        const uint32_t bin_len = read_u32(b + at), bin_type = read_u32(b + at + 4);
        if (bin_type == GLB_CHUNK_BIN && bin_len > length - at - 8)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: truncated GLB: the binary chunk says %u bytes, %zu are there", path,
                           bin_len, length - at - 8);
    }
    *out_json = (const char *)b + 20;
    *out_len = json_len;
    return EM_OK;
}

static int
line_of(const char *text, const char *at)
{
    int line = 1;
    for (const char *c = text; c < at && *c; ++c)
        line += *c == '\n';
    return line;
}

static int
column_of(const char *text, const char *at)
{
    const char *start = at;
    while (start > text && start[-1] != '\n')
        --start;
    return (int)(at - start) + 1;
}

/* A node index from `item` (a number in [0, node_count)). */
static enum em_result
node_index(const char *path, const cJSON *item, const char *where, const char *bone, int node_count,
           int *out, struct em_error *err)
{
    /* The range first: converting 1e30 or 2^31 to int is undefined behaviour. */
    if (!cJSON_IsNumber(item) || !(item->valuedouble >= 0.0 && item->valuedouble < node_count) ||
        item->valuedouble != floor(item->valuedouble))
        return em_fail(err, EM_ERROR_PARSE, "%s: %s \"%s\": expected a node index below %d", path,
                       where, bone, node_count);
    *out = (int)item->valuedouble;
    return EM_OK;
}

static enum em_result
check_spec_version(const char *path, const cJSON *ext, const char *ext_name, const char *major,
                   bool required, struct em_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ext, "specVersion");
    if (!v && !required)
        return EM_OK;
    if (!cJSON_IsString(v))
        return em_fail(err, EM_ERROR_PARSE, "%s: extensions.%s.specVersion: expected a string",
                       path, ext_name);
    const size_t n = strlen(major);
    if (strncmp(v->valuestring, major, n) != 0 ||
        (v->valuestring[n] != '\0' && v->valuestring[n] != '.'))
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "%s: %s specVersion \"%s\" is not supported (this reader knows %s.x)", path,
                       ext_name, v->valuestring, major);
    if (strstr(v->valuestring, "beta"))
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "%s: %s specVersion \"%s\": pre-release versions are not supported", path,
                       ext_name, v->valuestring);
    return EM_OK;
}

/* A humanBones entry that may be a finger bone (named exactly as the VRM version names
 * it, case aside): its node kept in f->finger_node. A finger entry with a bad node is
 * ignored with a warning naming it: the avatar is still a humanoid without that finger. */
static void
finger_bone(const char *path, struct av_file *f, const char *name, enum sk_finger_names names,
            const cJSON *node)
{
    for (int side = 0; side < HD_HAND_COUNT; ++side)
        for (int j = 0; j < HD_JOINT_COUNT; ++j) {
            const char *own = names == SK_FINGER_NAMES_VRM1
                                  ? hd_vrm_bone_name((enum hd_hand)side, j)
                                  : hd_unity_bone_name((enum hd_hand)side, j);
            if (strcasecmp(own, name) != 0)
                continue;
            struct em_error err;
            int index = -1;
            if (node_index(path, node, "VRM humanBones", name, f->node_count, &index, &err) !=
                EM_OK) {
                U_LOG_W("%s (finger bone left out)", err.message);
                return;
            }
            f->finger_node[side][j] = index;
            return;
        }
}

static enum em_result
bones_vrm0(const char *path, struct av_file *f, const cJSON *vrm, struct em_error *err)
{
    enum em_result r = check_spec_version(path, vrm, "VRM", "0", false, err);
    if (r != EM_OK)
        return r;
    const cJSON *hb = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(vrm, "humanoid"), "humanBones");
    if (!cJSON_IsArray(hb))
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: extensions.VRM.humanoid.humanBones: expected an array of "
                       "{bone, node}",
                       path);
    const cJSON *item;
    cJSON_ArrayForEach(item, hb)
    {
        const cJSON *bone = cJSON_GetObjectItemCaseSensitive(item, "bone");
        if (!cJSON_IsString(bone))
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: extensions.VRM.humanoid.humanBones: an entry without a bone "
                           "name",
                           path);
        const enum sk_bone b = sk_bone_from_name(bone->valuestring);
        if (b == SK_BONE_NONE || b >= SK_HEAD_TOP) {
            /* VRM 0.x names the fingers as Unity does, in lower camel case. */
            finger_bone(path, f, bone->valuestring, SK_FINGER_NAMES_UNITY,
                        cJSON_GetObjectItemCaseSensitive(item, "node"));
            continue; /* eyes, jaw: skinned with their nearest known ancestor */
        }
        r = node_index(path, cJSON_GetObjectItemCaseSensitive(item, "node"), "VRM humanBones",
                       bone->valuestring, f->node_count, &f->bone_node[b], err);
        if (r != EM_OK)
            return r;
    }
    f->format = AV_FORMAT_VRM0;
    return EM_OK;
}

static enum em_result
bones_vrm1(const char *path, struct av_file *f, const cJSON *vrm, struct em_error *err)
{
    enum em_result r = check_spec_version(path, vrm, "VRMC_vrm", "1", true, err);
    if (r != EM_OK)
        return r;
    const cJSON *hb = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(vrm, "humanoid"), "humanBones");
    if (!cJSON_IsObject(hb))
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: extensions.VRMC_vrm.humanoid.humanBones: expected an object of "
                       "bone name -> {node}",
                       path);
    const cJSON *item;
    cJSON_ArrayForEach(item, hb)
    {
        const enum sk_bone b = sk_bone_from_name(item->string);
        if (b == SK_BONE_NONE || b >= SK_HEAD_TOP) {
            finger_bone(path, f, item->string, SK_FINGER_NAMES_VRM1,
                        cJSON_GetObjectItemCaseSensitive(item, "node"));
            continue;
        }
        r = node_index(path, cJSON_GetObjectItemCaseSensitive(item, "node"), "VRMC_vrm humanBones",
                       item->string, f->node_count, &f->bone_node[b], err);
        if (r != EM_OK)
            return r;
    }
    f->format = AV_FORMAT_VRM1;
    return EM_OK;
}

static enum em_result
check_required(const char *path, const struct av_file *f, struct em_error *err)
{
    char missing[400] = "";
    int missing_count = 0;
    for (int b = 0; b < SK_HEAD_TOP; ++b) {
        if (!sk_bone_is_needed_in_file((enum sk_bone)b) || f->bone_node[b] >= 0)
            continue;
        const size_t n = strlen(missing);
        snprintf(missing + n, sizeof missing - n, "%s%s", missing_count ? ", " : "",
                 sk_bone_name((enum sk_bone)b));
        ++missing_count;
    }
    if (missing_count == 0)
        return EM_OK;
    return em_fail(err, EM_ERROR_PARSE, "%s: the VRM humanoid lacks required humanoid bones: %s",
                   path, missing);
}

enum em_result
av_file_read(const char *path, struct av_file *out_file, struct em_error *err)
{
    struct av_file *f = out_file;
    memset(f, 0, sizeof *f);
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        f->bone_node[b] = -1;
    for (int side = 0; side < HD_HAND_COUNT; ++side)
        for (int j = 0; j < HD_JOINT_COUNT; ++j)
            f->finger_node[side][j] = -1;
    enum em_result r = read_bytes(path, f, err);
    if (r != EM_OK)
        return r;
    f->is_glb = f->size >= 4 && read_u32(f->bytes) == GLB_MAGIC;
    const char *ext = strrchr(path, '.');
    if (!f->is_glb && ext && strcasecmp(ext, ".gltf") != 0)
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: not a GLB file (no \"glTF\" magic at the start), as a %s must be", path,
                       ext);
    const char *json = (const char *)f->bytes;
    size_t json_len = f->size;
    if (f->is_glb && (r = glb_json(path, f, &json, &json_len, err)) != EM_OK)
        return r;
    f->json = cJSON_ParseWithLength(json, json_len);
    if (!f->json) {
        const char *at = cJSON_GetErrorPtr();
        const bool inside = at && at >= json && at <= json + json_len;
        /* A GLB's JSON is one line: the byte says where, in the chunk and in the file. */
        const size_t offset = inside ? (size_t)(at - json) : json_len;
        const size_t in_file = offset + (size_t)(json - (const char *)f->bytes);
        if (f->is_glb)
            return em_fail(err, EM_ERROR_PARSE,
                           "%s: broken glTF JSON near byte %zu of the JSON chunk (byte %zu of the "
                           "file)",
                           path, offset, in_file);
        return em_fail(err, EM_ERROR_PARSE,
                       "%s: broken glTF JSON near byte %zu (line %d, column %d)", path, offset,
                       line_of(json, json + offset), column_of(json, json + offset));
    }
    if (!cJSON_IsObject(f->json))
        return em_fail(err, EM_ERROR_PARSE, "%s: the glTF JSON is not an object", path);
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(f->json, "asset"), "version");
    if (!cJSON_IsString(version))
        return em_fail(err, EM_ERROR_PARSE, "%s: asset.version: expected a string", path);
    if (strncmp(version->valuestring, "2.", 2) != 0)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "%s: glTF version \"%s\" is not supported (expected 2.x)", path,
                       version->valuestring);
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(f->json, "nodes");
    f->node_count = cJSON_IsArray(nodes) ? cJSON_GetArraySize(nodes) : 0;

    const cJSON *exts = cJSON_GetObjectItemCaseSensitive(f->json, "extensions");
    const cJSON *vrm1 = cJSON_GetObjectItemCaseSensitive(exts, "VRMC_vrm");
    const cJSON *vrm0 = cJSON_GetObjectItemCaseSensitive(exts, "VRM");
    if (vrm1)
        r = bones_vrm1(path, f, vrm1, err);
    else if (vrm0)
        r = bones_vrm0(path, f, vrm0, err);
    else
        f->format = AV_FORMAT_GLTF;
    if (r == EM_OK && f->format != AV_FORMAT_GLTF)
        r = check_required(path, f, err);
    return r;
}

enum em_result
av_file_read_fbx(const char *path, struct av_file *out_file, struct em_error *err)
{
    memset(out_file, 0, sizeof *out_file);
    for (int b = 0; b < SK_BONE_COUNT; ++b)
        out_file->bone_node[b] = -1;
    for (int side = 0; side < HD_HAND_COUNT; ++side)
        for (int j = 0; j < HD_JOINT_COUNT; ++j)
            out_file->finger_node[side][j] = -1;
    out_file->format = AV_FORMAT_FBX;
    return read_bytes(path, out_file, err);
}

void
av_file_fini(struct av_file *file)
{
    free(file->bytes);
    cJSON_Delete(file->json);
    memset(file, 0, sizeof *file);
}

void
av_file_node_name(const struct av_file *file, int index, char *out, size_t out_size)
{
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(file->json, "nodes");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(nodes, index), "name");
    if (cJSON_IsString(name) && name->valuestring[0])
        snprintf(out, out_size, "%s", name->valuestring);
    else
        snprintf(out, out_size, "nodes_%d", index); /* assimp's id for a nameless node */
}

bool
av_file_material_is_toon(const struct av_file *file, const char *name, bool *out_unlit)
{
    /* assimp keeps the names but not the order of glTF's materials: match by name. */
    const cJSON *mats = cJSON_GetObjectItemCaseSensitive(file->json, "materials");
    const cJSON *mat = NULL, *it;
    cJSON_ArrayForEach(it, mats)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (name && cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
            mat = it;
            break;
        }
    }
    const cJSON *exts = cJSON_GetObjectItemCaseSensitive(mat, "extensions");
    *out_unlit = cJSON_GetObjectItemCaseSensitive(exts, "KHR_materials_unlit") != NULL;
    if (cJSON_GetObjectItemCaseSensitive(exts, "VRMC_materials_mtoon"))
        return true;
    /* VRM 0.x keeps material settings beside the materials, matched by name. */
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(file->json, "extensions"),
                                         "VRM"),
        "materialProperties");
    const cJSON *p;
    cJSON_ArrayForEach(p, props)
    {
        const cJSON *pn = cJSON_GetObjectItemCaseSensitive(p, "name");
        const cJSON *shader = cJSON_GetObjectItemCaseSensitive(p, "shader");
        if (cJSON_IsString(pn) && name && strcmp(pn->valuestring, name) == 0 &&
            cJSON_IsString(shader))
            return strcmp(shader->valuestring, "VRM/MToon") == 0;
    }
    return false;
}
