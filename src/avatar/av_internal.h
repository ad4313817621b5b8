/*
 * Inside the avatar module (src/avatar/avatar.h):
 *
 *   av_file.c   the container: GLB chunks checked, the glTF JSON, the VRM humanBones
 *   av_load.c   assimp's scene to the skeleton and the baked, weighted mesh
 *   av_skin.c   binding to a body's skeleton, joint matrices
 *   av_make.c   the generated humanoid (GLB writer)
 *   av_image.c  PNG/JPEG decoding and PNG encoding (stb, static in this file)
 */
#ifndef EMBODY_AV_INTERNAL_H
#define EMBODY_AV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "avatar/avatar.h"
#include "embody/hand.h"

/* A file read and its glTF JSON found. */
struct av_file {
    uint8_t *bytes; /* the whole file (owned) */
    size_t size;
    bool is_glb;
    cJSON *json;                  /* the glTF JSON (owned) */
    enum av_format format;        /* from the extensions present */
    int bone_node[SK_BONE_COUNT]; /* glTF node of each humanoid bone, or -1 */
    int finger_node[HD_HAND_COUNT][HD_JOINT_COUNT]; /* a VRM's finger bones' nodes, or -1 */
    int node_count;
};

/* Reads `path` and checks the container: size limit, GLB header and chunks, JSON,
 * asset.version 2.x, VRM specVersion, humanBones node indices. With a VRM extension, finds
 * the bone nodes and checks the required ones are there; a plain glTF's bones are found
 * later, in assimp's node tree (sk_rig_find_bones). */
enum em_result av_file_read(const char *path, struct av_file *out_file, struct em_error *err);

/* An FBX file: reads its bytes (within AV_MAX_FILE_BYTES) for assimp; the bones come
 * later from its node tree, as a plain glTF's. */
enum em_result av_file_read_fbx(const char *path, struct av_file *out_file, struct em_error *err);

void av_file_fini(struct av_file *file);

/* The name of glTF node `index` as assimp names it. */
void av_file_node_name(const struct av_file *file, int index, char *out, size_t out_size);

/* True when the glTF material called `name` is MToon (VRM 0.x materialProperties or VRM
 * 1.0's VRMC_materials_mtoon); *out_unlit for KHR_materials_unlit. */
bool av_file_material_is_toon(const struct av_file *file, const char *name, bool *out_unlit);

/* Decodes a PNG or JPEG into RGBA (malloc'ed), or NULL. */
uint8_t *av_image_decode(const uint8_t *bytes, size_t size, int *out_width, int *out_height);

/* Reads an image file into RGBA (malloc'ed), or NULL. */
uint8_t *av_image_load(const char *path, int *out_width, int *out_height);

/* Encodes RGBA as PNG (malloc'ed, free with free()), or NULL. */
uint8_t *av_image_encode_png(const uint8_t *rgba, int width, int height, size_t *out_size);

#endif
