/*
 * Avatar files a new user brings (issue 21): FBX rigs (what Mixamo and most rig tools
 * export), read through the same humanoid name map and checks as glTF, from a small ASCII
 * FBX these tests write themselves from config/humanoid.json; a VRM scaled to a giant's
 * size refused; a skeleton without a mesh read; broken JSON placed by its byte.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "avatar/avatar.h"
#include "embody/m_math.h"

#define OUT EMBODY_BINARY_DIR "/tests/avatar/"

static void
load_humanoid(struct sk_skeleton *sk)
{
    struct em_error err = {{0}};
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", sk, &err) != EM_OK)
        fail_msg("%s", err.message);
}

/* ---- A small FBX rig, written as ASCII FBX 7.4 ---------------------------------------- */

/* Mixamo's names for the humanoid's joints ("mixamorig:" in front). */
static const char *
mixamo_name(const char *joint)
{
    static const char *const names[][2] = {
        {"hips", "Hips"},
        {"spine", "Spine"},
        {"chest", "Spine1"},
        {"neck", "Neck"},
        {"head", "Head"},
        {"headTop", "HeadTop_End"},
        {"leftShoulder", "LeftShoulder"},
        {"leftUpperArm", "LeftArm"},
        {"leftLowerArm", "LeftForeArm"},
        {"leftHand", "LeftHand"},
        {"leftHandEnd", "LeftHandIndex4"},
        {"rightShoulder", "RightShoulder"},
        {"rightUpperArm", "RightArm"},
        {"rightLowerArm", "RightForeArm"},
        {"rightHand", "RightHand"},
        {"rightHandEnd", "RightHandIndex4"},
        {"leftUpperLeg", "LeftUpLeg"},
        {"leftLowerLeg", "LeftLeg"},
        {"leftFoot", "LeftFoot"},
        {"leftToes", "LeftToeBase"},
        {"leftToesEnd", "LeftToe_End"},
        {"rightUpperLeg", "RightUpLeg"},
        {"rightLowerLeg", "RightLeg"},
        {"rightFoot", "RightFoot"},
        {"rightToes", "RightToeBase"},
        {"rightToesEnd", "RightToe_End"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (strcmp(names[i][0], joint) == 0)
            return names[i][1];
    return joint;
}

/* A box mesh (8 corners, 6 quads) under model `parent`, centred at `c`, half sizes `h`,
 * in the file's unit. */
static void
write_box(FILE *f, long id, const char *name, const float *c, const float *h)
{
    fprintf(f, "\tGeometry: %ld, \"Geometry::%s\", \"Mesh\" {\n\t\tVertices: *24 {\n\t\t\ta: ", id,
            name);
    for (int k = 0; k < 8; ++k)
        fprintf(f, "%s%g,%g,%g", k ? "," : "", (double)(c[0] + (k & 1 ? h[0] : -h[0])),
                (double)(c[1] + (k & 2 ? h[1] : -h[1])), (double)(c[2] + (k & 4 ? h[2] : -h[2])));
    /* Each quad's last index written as -(i + 1), as FBX ends a polygon. */
    fprintf(f, "\n\t\t}\n\t\tPolygonVertexIndex: *24 {\n\t\t\ta: "
               "0,2,3,-2,4,5,7,-7,0,1,5,-5,2,6,7,-4,0,4,6,-3,1,3,7,-6\n\t\t}\n"
               "\t\tGeometryVersion: 124\n\t}\n");
    fprintf(f, "\tModel: %ld, \"Model::%s\", \"Mesh\" {\n\t\tVersion: 232\n\t}\n", id + 1, name);
}

/* Writes config/humanoid.json as an FBX rig with Mixamo's bone names, lengths in the
 * file's unit of `unit_cm` centimetres, a box for the torso and one for the skull; the
 * joints named in `omit` (comma separated) left out. */
static void
write_fbx_rig(const char *path, double unit_cm, const char *omit)
{
    struct sk_skeleton sk;
    load_humanoid(&sk);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "; FBX 7.4.0 project file\n"
               "FBXHeaderExtension:  {\n\tFBXHeaderVersion: 1003\n\tFBXVersion: 7400\n}\n"
               "GlobalSettings:  {\n\tVersion: 1000\n\tProperties70:  {\n"
               "\t\tP: \"UpAxis\", \"int\", \"Integer\", \"\",1\n"
               "\t\tP: \"UpAxisSign\", \"int\", \"Integer\", \"\",1\n"
               "\t\tP: \"FrontAxis\", \"int\", \"Integer\", \"\",2\n"
               "\t\tP: \"FrontAxisSign\", \"int\", \"Integer\", \"\",1\n"
               "\t\tP: \"CoordAxis\", \"int\", \"Integer\", \"\",0\n"
               "\t\tP: \"CoordAxisSign\", \"int\", \"Integer\", \"\",1\n"
               "\t\tP: \"UnitScaleFactor\", \"double\", \"Number\", \"\",%g\n\t}\n}\n"
               "Objects:  {\n",
            unit_cm);
    const double scale = 100.0 / unit_cm; /* file units per metre */
    for (int j = 0; j < sk.joint_count; ++j) {
        if (omit && strstr(omit, sk.name[j]))
            continue;
        const float *o = sk.offset_m[j];
        fprintf(f,
                "\tModel: %d, \"Model::mixamorig:%s\", \"LimbNode\" {\n\t\tVersion: 232\n"
                "\t\tProperties70:  {\n\t\t\tP: \"Lcl Translation\", \"Lcl Translation\", \"\", "
                "\"A\",%g,%g,%g\n\t\t}\n\t}\n",
                1000 + j, mixamo_name(sk.name[j]), scale * (double)o[0], scale * (double)o[1],
                scale * (double)o[2]);
    }
    const float s = (float)scale;
    write_box(f, 2000, "Torso", (const float[]){0, 0.2f * s, 0},
              (const float[]){0.15f * s, 0.25f * s, 0.1f * s});
    write_box(f, 2002, "Skull", (const float[]){0, 0.1f * s, 0.02f * s},
              (const float[]){0.09f * s, 0.11f * s, 0.1f * s});
    fprintf(f, "}\nConnections:  {\n");
    for (int j = 0; j < sk.joint_count; ++j)
        if (!(omit && strstr(omit, sk.name[j])))
            fprintf(f, "\tC: \"OO\",%d,%d\n", 1000 + j, sk.parent[j] < 0 ? 0 : 1000 + sk.parent[j]);
    fprintf(f, "\tC: \"OO\",2000,2001\n\tC: \"OO\",2001,%d\n", 1000 + sk_skeleton_find(&sk, "spine"));
    fprintf(f, "\tC: \"OO\",2002,2003\n\tC: \"OO\",2003,%d\n", 1000 + sk_skeleton_find(&sk, "head"));
    fprintf(f, "}\n");
    fclose(f);
    sk_skeleton_fini(&sk);
}

static void
expect_refused(const char *path, enum em_result want, const char *reason)
{
    struct av_avatar av;
    struct em_error err = {{0}};
    const enum em_result r = av_avatar_load(path, NULL, &av, &err);
    if (r != want || !strstr(err.message, reason) || !strstr(err.message, path))
        fail_msg("%s: got %s \"%s\", expected %s with \"%s\"", path, em_result_string(r),
                 err.message, em_result_string(want), reason);
    assert_null(av.vertices);
}

static void
fbx_rigs_load_with_the_humanoid_name_map(void **state)
{
    (void)state;
    struct sk_skeleton humanoid;
    load_humanoid(&humanoid);
    /* In centimetres (Mixamo, Blender's default export) and in metres: the same avatar. */
    const double units_cm[] = {1.0, 100.0};
    for (size_t u = 0; u < sizeof units_cm / sizeof units_cm[0]; ++u) {
        write_fbx_rig(OUT "rig.fbx", units_cm[u], NULL);
        struct av_avatar av;
        struct em_error err = {{0}};
        if (av_avatar_load(OUT "rig.fbx", NULL, &av, &err) != EM_OK)
            fail_msg("%s", err.message);
        assert_int_equal(av.format, AV_FORMAT_FBX);
        assert_int_equal(av.index_count, 2 * 12 * 3); /* the two boxes, triangulated */
        assert_true(fabsf(av.height_m - 1.75f) < 0.03f);
        /* Every bone of the humanoid found at its place, from the hips (the floor is the
         * lowest bone found, the toes, 2 cm above the humanoid's toe ends). */
        const int hips_want = sk_skeleton_find(&humanoid, "hips");
        const int hips_got = av.skeleton.bone_joint[SK_HIPS];
        static const char *const bones[] = {"hips",         "spine",         "head",
                                            "leftUpperArm", "rightLowerArm", "leftHand",
                                            "leftUpperLeg", "rightFoot",     "leftToes"};
        for (size_t b = 0; b < sizeof bones / sizeof bones[0]; ++b) {
            const int want = sk_skeleton_find(&humanoid, bones[b]);
            const int got = av.skeleton.bone_joint[sk_bone_from_name(bones[b])];
            assert_true(want >= 0 && got >= 0);
            float from_hips_want[3], from_hips_got[3];
            m_vec3_sub(humanoid.rest_position_m[want], humanoid.rest_position_m[hips_want],
                       from_hips_want);
            m_vec3_sub(av.skeleton.rest_position_m[got], av.skeleton.rest_position_m[hips_got],
                       from_hips_got);
            const float d = m_vec3_distance(from_hips_want, from_hips_got);
            if (d > 0.005f)
                fail_msg("unit %g cm: %s is %.1f mm from the humanoid's", units_cm[u], bones[b],
                         1000.0 * (double)d);
        }
        av_avatar_fini(&av);
    }
    sk_skeleton_fini(&humanoid);
}

static void
fbx_files_are_checked_as_glTF_files_are(void **state)
{
    (void)state;
    write_fbx_rig(OUT "no-forearm.fbx", 1.0, "leftLowerArm");
    expect_refused(OUT "no-forearm.fbx", EM_ERROR_PARSE, "missing leftLowerArm");
    /* A giant: the lengths in metres but the unit said to be centimetres. */
    write_fbx_rig(OUT "giant.fbx", 1.0, NULL);
    {
        FILE *f = fopen(OUT "giant.fbx", "r");
        assert_non_null(f);
        char text[65536];
        const size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        char *unit = strstr(text, "\"UnitScaleFactor\", \"double\", \"Number\", \"\",1\n");
        assert_non_null(unit);
        f = fopen(OUT "giant.fbx", "w");
        assert_non_null(f);
        fwrite(text, 1, (size_t)(unit - text), f);
        fputs("\"UnitScaleFactor\", \"double\", \"Number\", \"\",2.5\n", f);
        fputs(unit + strlen("\"UnitScaleFactor\", \"double\", \"Number\", \"\",1\n"), f);
        fclose(f);
    }
    expect_refused(OUT "giant.fbx", EM_ERROR_PARSE, "a humanoid is 0.5 to 3 m");
    FILE *f = fopen(OUT "broken.fbx", "w");
    assert_non_null(f);
    fputs("; FBX 7.4.0 project file\nObjects:  {\n\tModel: 1, \"Model::x\", {{{\n", f);
    fclose(f);
    expect_refused(OUT "broken.fbx", EM_ERROR_PARSE, "FBX reader (assimp) refused it");
    expect_refused(OUT "missing.fbx", EM_ERROR_IO, "cannot open");
}

/* ---- glTF edits --------------------------------------------------------------------- */

/* The GLB `bytes` with its JSON chunk edited by `edit` (the BIN chunk kept), malloc'ed. */
static uint8_t *
edit_glb(const uint8_t *bytes, size_t size, void (*edit)(cJSON *), size_t *out_size)
{
    uint32_t json_len;
    memcpy(&json_len, bytes + 12, 4);
    cJSON *json = cJSON_ParseWithLength((const char *)bytes + 20, json_len);
    assert_non_null(json);
    edit(json);
    char *text = cJSON_PrintUnformatted(json);
    cJSON_Delete(json);
    size_t text_len = strlen(text);
    const size_t padded = (text_len + 3) & ~(size_t)3;
    const size_t rest = size - 20 - json_len;
    *out_size = 20 + padded + rest;
    uint8_t *out = malloc(*out_size);
    assert_non_null(out);
    memcpy(out, bytes, 20);
    memcpy(out + 20, text, text_len);
    memset(out + 20 + text_len, ' ', padded - text_len);
    memcpy(out + 20 + padded, bytes + 20 + json_len, rest);
    const uint32_t total = (uint32_t)*out_size, chunk = (uint32_t)padded;
    memcpy(out + 8, &total, 4);
    memcpy(out + 12, &chunk, 4);
    cJSON_free(text);
    return out;
}

static uint8_t *
made_vrm(size_t *out_size)
{
    struct sk_skeleton sk;
    load_humanoid(&sk);
    uint8_t *bytes = NULL;
    struct em_error err = {{0}};
    if (av_make_glb(&(struct av_make_desc){.skeleton = &sk, .rig = AV_MAKE_VRM1}, &bytes,
                    out_size, &err) != EM_OK)
        fail_msg("%s", err.message);
    sk_skeleton_fini(&sk);
    return bytes;
}

static void
write_bytes(const char *path, const uint8_t *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    fclose(f);
}

/* Scales the scene's root nodes by 4 / 1.75: a 4 m avatar. */
static void
scale_to_four_metres(cJSON *json)
{
    const cJSON *scenes = cJSON_GetObjectItem(json, "scenes");
    const cJSON *roots = cJSON_GetObjectItem(cJSON_GetArrayItem(scenes, 0), "nodes");
    cJSON *nodes = cJSON_GetObjectItem(json, "nodes");
    const cJSON *root;
    cJSON_ArrayForEach(root, roots)
    {
        cJSON *node = cJSON_GetArrayItem(nodes, root->valueint);
        const double s = 4.0 / 1.75;
        cJSON_DeleteItemFromObject(node, "scale");
        cJSON_AddItemToObject(node, "scale", cJSON_CreateDoubleArray((const double[]){s, s, s}, 3));
    }
}

/* Drops every mesh and skin: the skeleton alone. */
static void
drop_meshes(cJSON *json)
{
    cJSON *node;
    cJSON_ArrayForEach(node, cJSON_GetObjectItem(json, "nodes"))
    {
        cJSON_DeleteItemFromObject(node, "mesh");
        cJSON_DeleteItemFromObject(node, "skin");
    }
    cJSON_DeleteItemFromObject(json, "meshes");
    cJSON_DeleteItemFromObject(json, "skins");
}

static void
a_vrm_scaled_beyond_a_persons_size_is_refused(void **state)
{
    (void)state;
    size_t size = 0, big_size = 0;
    uint8_t *bytes = made_vrm(&size);
    uint8_t *big = edit_glb(bytes, size, scale_to_four_metres, &big_size);
    write_bytes(OUT "four-metres.vrm", big, big_size);
    expect_refused(OUT "four-metres.vrm", EM_ERROR_PARSE, "a humanoid is 0.5 to 3 m");
    free(big);
    free(bytes);
}

static void
a_vrm_without_a_mesh_gives_its_skeleton(void **state)
{
    (void)state;
    size_t size = 0, bare_size = 0;
    uint8_t *bytes = made_vrm(&size);
    uint8_t *bare = edit_glb(bytes, size, drop_meshes, &bare_size);
    write_bytes(OUT "bare.vrm", bare, bare_size);
    struct av_avatar av;
    struct em_error err = {{0}};
    if (av_avatar_load(OUT "bare.vrm", NULL, &av, &err) != EM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(av.index_count, 0);
    assert_int_equal(sk_humanoid_validate(&av.skeleton, "bare", NULL), EM_OK);
    av_avatar_fini(&av);
    free(bare);
    free(bytes);
}

/* The file is refused as broken JSON near byte `at` (the parser stops at or just after
 * the bad character), the message going on with `then`. */
static void
expect_near_byte(const char *path, size_t at, const char *then)
{
    struct av_avatar av;
    struct em_error err = {{0}};
    assert_int_equal(av_avatar_load(path, NULL, &av, &err), EM_ERROR_PARSE);
    const char *said = strstr(err.message, "broken glTF JSON near byte ");
    if (!said || !strstr(said, then) || !strstr(err.message, path))
        fail_msg("%s: \"%s\" does not place the broken JSON", path, err.message);
    const long byte = strtol(said + strlen("broken glTF JSON near byte "), NULL, 10);
    if (byte < (long)at || byte > (long)at + 1)
        fail_msg("%s: \"%s\": the bad character is at byte %zu", path, err.message, at);
}

static void
broken_json_is_placed_by_its_byte(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = made_vrm(&size);
    /* A GLB: a stray character where the "nodes" key starts (the JSON is one line). */
    uint32_t json_len;
    memcpy(&json_len, bytes + 12, 4);
    const char *json = (const char *)bytes + 20;
    const char *key = NULL;
    for (size_t i = 0; i + 7 < json_len && !key; ++i)
        if (memcmp(json + i, "\"nodes\"", 7) == 0)
            key = json + i;
    assert_non_null(key);
    const size_t at = (size_t)(key - json);
    bytes[20 + at] = '@';
    write_bytes(OUT "broken-json.vrm", bytes, size);
    expect_near_byte(OUT "broken-json.vrm", at, "of the JSON chunk (byte ");
    free(bytes);
    /* A .gltf text file: the line and column too. */
    FILE *f = fopen(OUT "broken.gltf", "w");
    assert_non_null(f);
    fputs("{\n  \"asset\": {\"version\": \"2.0\"},\n  \"nodes\": [}\n", f);
    fclose(f);
    expect_near_byte(OUT "broken.gltf", 45, "(line 3, column ");
}

/* ---- The default avatar ------------------------------------------------------------ */

/* Whether the ray from `o` along `d` crosses triangle a b c (Moller and Trumbore 1997). */
static bool
ray_crosses(const float *o, const float *d, const float *a, const float *b, const float *c)
{
    float e1[3], e2[3], p[3], t[3], q[3];
    m_vec3_sub(b, a, e1);
    m_vec3_sub(c, a, e2);
    m_vec3_cross(d, e2, p);
    const float det = m_vec3_dot(e1, p);
    if (fabsf(det) < 1e-12f)
        return false;
    m_vec3_sub(o, a, t);
    const float u = m_vec3_dot(t, p) / det;
    if (u < 0.0f || u > 1.0f)
        return false;
    m_vec3_cross(t, e1, q);
    const float v = m_vec3_dot(d, q) / det;
    if (v < 0.0f || u + v > 1.0f)
        return false;
    return m_vec3_dot(e2, q) / det > 0.0f;
}

/* The shipped default avatar's torso (material "Body" between the hips and the chest) has
 * no surface inside the body: overlapping capsules put one part's cap inside the next
 * one's tube, meeting it at the shared ring, where two surfaces lie on each other and
 * flickered on the chest. A point 2 mm out from each torso triangle must be outside every
 * closed piece of the body (an even number of crossings of the body's surface). */
static void
default_avatar_torso_has_no_surface_inside_it(void **state)
{
    (void)state;
    struct av_avatar av;
    struct em_error err = {{0}};
    if (av_avatar_load(EMBODY_SOURCE_DIR "/config/avatar/embody.vrm", NULL, &av, &err) != EM_OK)
        fail_msg("%s", err.message);
    int body = -1;
    for (int m = 0; m < av.material_count; ++m)
        if (strcmp(av.materials[m].name, "Body") == 0)
            body = m;
    assert_true(body >= 0);
    const float low = av.skeleton.rest_position_m[av.skeleton.bone_joint[SK_HIPS]][1];
    const float high = av.skeleton.rest_position_m[av.skeleton.bone_joint[SK_CHEST]][1];
    const float dir[3] = {0.5773f, 0.5831f, 0.5712f}; /* no edge on its way by chance */
    int checked = 0, inside = 0;
    for (int p = 0; p < av.primitive_count; ++p) {
        const struct av_primitive *prim = &av.primitives[p];
        if (prim->material != body)
            continue;
        for (uint32_t k = 0; k + 2 < prim->index_count; k += 3) {
            const uint32_t *t = &av.indices[prim->first_index + k];
            const float *a = av.vertices[t[0]].position_m, *b = av.vertices[t[1]].position_m,
                        *c = av.vertices[t[2]].position_m;
            float e1[3], e2[3], n[3], centre[3], out[3];
            m_vec3_sub(b, a, e1);
            m_vec3_sub(c, a, e2);
            m_vec3_cross(e1, e2, n);
            if (!(m_vec3_length(n) > 1e-10f))
                continue; /* a degenerate sliver at a pole */
            m_vec3_normalize_or(n, dir, n);
            for (int i = 0; i < 3; ++i)
                centre[i] = (a[i] + b[i] + c[i]) / 3.0f;
            if (centre[1] < low || centre[1] > high)
                continue;
            m_vec3_muladd(centre, n, 0.002f, out);
            int crossings = 0;
            for (int q = 0; q < av.primitive_count; ++q) {
                const struct av_primitive *other = &av.primitives[q];
                if (other->material != body)
                    continue;
                for (uint32_t l = 0; l + 2 < other->index_count; l += 3) {
                    const uint32_t *u = &av.indices[other->first_index + l];
                    crossings += ray_crosses(out, dir, av.vertices[u[0]].position_m,
                                             av.vertices[u[1]].position_m,
                                             av.vertices[u[2]].position_m);
                }
            }
            ++checked;
            inside += crossings % 2;
        }
    }
    assert_true(checked > 100);
    if (inside > 0)
        fail_msg("%d of the torso's %d triangles are inside the body", inside, checked);
    av_avatar_fini(&av);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fbx_rigs_load_with_the_humanoid_name_map),
        cmocka_unit_test(fbx_files_are_checked_as_glTF_files_are),
        cmocka_unit_test(a_vrm_scaled_beyond_a_persons_size_is_refused),
        cmocka_unit_test(a_vrm_without_a_mesh_gives_its_skeleton),
        cmocka_unit_test(broken_json_is_placed_by_its_byte),
        cmocka_unit_test(default_avatar_torso_has_no_surface_inside_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
