/*
 * File formats: the 3-point tracking stream (CSV, ../shared/eval/PROTOCOL.md section 1)
 * and BVH motion capture (reading any BVH; writing a humanoid's motion).
 *
 * Readers validate everything and report the file and line of the first problem, for
 * example "walk.csv:17: column 9 (head_valid): expected 0 or 1, got \"x\"". No reader
 * keeps a partial result on failure.
 */
#ifndef EMBODY_STREAM_H
#define EMBODY_STREAM_H

#include <stdbool.h>
#include <stdio.h>

#include "embody/result.h"
#include "embody/skeleton.h"
#include "embody/tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 3-point stream ------------------------------------------------------------ */

/* A whole stream in memory. time_s of frame 0 is the file's first t (normally 0). */
struct st_stream {
    int frame_count;
    int capacity;
    struct em_tracking_frame *frames;
};

/* Reads a stream file. Columns are found by the header's names, in any order; unknown
 * column groups are ignored; `t` and the head, left and right groups are required.
 * Rejects: a missing or unknown-format header, wrong column counts, non-numbers, NaN or
 * infinite values, valid flags other than 0/1, t not strictly increasing, a non-unit
 * quaternion on a valid device (|q| off by more than 1e-3), an empty file. */
enum em_result
st_stream_load(const char *path, struct st_stream *out_stream, struct em_error *err);

/* Same, from text in memory (consumed); `source` names it in errors. */
enum em_result
st_stream_parse(char *text, const char *source, struct st_stream *out_stream,
                struct em_error *err);

/* Appends a copy of `frame`. */
enum em_result
st_stream_append(struct st_stream *stream, const struct em_tracking_frame *frame);

void
st_stream_fini(struct st_stream *stream);

/* Writes frames as they come (for --record): the header, then one row per frame with
 * t relative to the first frame written. Numbers are printed so that reading them back
 * gives the same floats (and writing those again the same text). */
struct st_stream_writer {
    FILE *file;
    char *path;
    double first_time_s;
    long frames_written;
};

enum em_result
st_stream_writer_open(const char *path, struct st_stream_writer *out_writer,
                      struct em_error *err);

enum em_result
st_stream_writer_write(struct st_stream_writer *writer, const struct em_tracking_frame *frame,
                       struct em_error *err);

/* Flushes and closes; reports a write error (disk full) if one happened. */
enum em_result
st_stream_writer_close(struct st_stream_writer *writer, struct em_error *err);

/* Writes a whole stream. */
enum em_result
st_stream_save(const char *path, const struct st_stream *stream, struct em_error *err);

/* ---- BVH ----------------------------------------------------------------------- */

enum st_bvh_channel {
    ST_BVH_XPOS = 0,
    ST_BVH_YPOS,
    ST_BVH_ZPOS,
    ST_BVH_XROT,
    ST_BVH_YROT,
    ST_BVH_ZROT,
};

#define ST_BVH_MAX_CHANNELS 6

/* A BVH file as read: joints in file order (parents first), End Sites included as joints
 * with no channels, offsets and positions in the file's units, rotations in degrees. */
struct st_bvh_joint {
    char name[SK_NAME_MAX]; /* End Sites are named "<parent>_End" */
    int parent;             /* -1 for the root */
    bool is_end_site;
    double offset[3];
    int channel_count;
    enum st_bvh_channel channel[ST_BVH_MAX_CHANNELS];
    int first_channel; /* index of its first channel in a motion row */
};

struct st_bvh {
    int joint_count;
    struct st_bvh_joint *joints;
    int channel_count; /* per frame */
    int frame_count;
    double frame_time_s;
    double *motion; /* frame_count * channel_count values, frame-major */
};

/* Reads a BVH file. Rejects (with the line number): a missing HIERARCHY or MOTION
 * section, unbalanced braces, unknown channel names, bad numbers, NaN, a frame count
 * that does not match the rows, rows with the wrong number of values, a truncated file,
 * a non-positive frame time. */
enum em_result
st_bvh_load(const char *path, struct st_bvh *out_bvh, struct em_error *err);

enum em_result
st_bvh_parse(char *text, const char *source, struct st_bvh *out_bvh, struct em_error *err);

void
st_bvh_fini(struct st_bvh *bvh);

/* Index of the joint called `name`, or -1. */
int
st_bvh_find(const struct st_bvh *bvh, const char *name);

/* Global positions (file units) and rotations of every joint at `frame`, by forward
 * kinematics of the channels in their file order. `out_position` and `out_rotation`
 * have joint_count entries. */
void
st_bvh_frame_pose(const struct st_bvh *bvh, int frame, double (*out_position)[3],
                  double (*out_rotation)[4]);

/* A guess at the factor that turns the file's lengths into metres, from the skeleton's
 * size: 1 (metres), 0.056444 (CMU's units), 0.01 (centimetres) or 0.0254 (inches). */
double
st_bvh_guess_unit_scale(const struct st_bvh *bvh);

/* Builds a humanoid skeleton from a BVH hierarchy: joints whose names `map` knows become
 * humanoid joints (VRM names); unmapped joints in between fold their offsets into the
 * next mapped joint; lengths are multiplied by `unit_scale` (metres). The rest pose is
 * made the humanoid's (legs straight down, arms straight out), keeping every bone's
 * length, so the humanoid's joint limits apply. Missing required bones are an error
 * naming them. */
enum em_result
st_bvh_to_humanoid(const struct st_bvh *bvh, enum sk_name_map map, double unit_scale,
                   const char *source, struct sk_skeleton *out_skeleton,
                   struct em_error *err);

/* Writes a humanoid's motion as BVH: joints with their VRM names, offsets in metres,
 * the root with 6 channels and every other joint 3 (Zrotation Xrotation Yrotation),
 * leaves as End Sites. The frame count is written on close. */
struct st_bvh_writer {
    FILE *file;
    char *path;
    const struct sk_skeleton *skeleton;
    long frame_count_offset; /* where "Frames:" is patched on close */
    long frames_written;
};

enum em_result
st_bvh_writer_open(const char *path, const struct sk_skeleton *skeleton, double frame_time_s,
                   struct st_bvh_writer *out_writer, struct em_error *err);

/* Writes one frame from the pose's root position and local rotations. */
enum em_result
st_bvh_writer_write(struct st_bvh_writer *writer, const struct sk_pose *pose,
                    struct em_error *err);

enum em_result
st_bvh_writer_close(struct st_bvh_writer *writer, struct em_error *err);

/* ---- From motion capture to a 3-point stream (PROTOCOL section 2) --------------- */

/* Makes the stream a headset and two controllers would have reported for a CMU clip:
 * every second frame from frame 0, t = k / 60 for 120 fps clips (in general every
 * round(rate / 60)-th frame), head at Head + R_Head (0, 0.08, 0.09) m, hands at the
 * midpoint of wrist and knuckles with the grip axes of the protocol. */
enum em_result
st_mocap_to_stream(const struct st_bvh *bvh, double unit_scale, const char *source,
                   struct st_stream *out_stream, struct em_error *err);

#ifdef __cplusplus
}
#endif

#endif
