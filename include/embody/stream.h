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

#include "embody/export.h"
#include "embody/hand.h"
#include "embody/result.h"
#include "embody/skeleton.h"
#include "embody/tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 3-point stream ------------------------------------------------------------ */

/* A whole stream in memory. time_s of frame 0 is the file's first t (normally 0). The
 * frames array (16-byte aligned) is owned by the struct: st_stream_fini frees it. A zeroed
 * struct is an empty stream that st_stream_append can grow. */
struct st_fingers; /* below */

struct st_stream {
    int frame_count;
    int capacity;
    struct em_tracking_frame *frames;
    int cut_line; /* a last row cut short (no line end, unreadable) that was dropped, or 0 */
    /* The fingers (optional): ST_FINGERS_BIT of each hand whose group the file has, and
     * one entry per frame (frame_count of them) when any frame carried fingers, else
     * NULL. Owned by the struct, as frames. */
    uint32_t finger_mask;
    struct st_fingers *fingers;
};

/* One frame's fingers (PROTOCOL.md section 1b): each hand's finger pose as the hand
 * model's angles (include/embody/hand.h), degrees as the file has them: per finger the
 * three flexions, then the abduction. */
#define ST_FINGER_ANGLES (HD_FINGER_JOINTS + 1)
struct st_fingers {
    bool valid[HD_HAND_COUNT];
    float angle_deg[HD_HAND_COUNT][HD_FINGER_COUNT][ST_FINGER_ANGLES];
};

/* A hand pose into `fingers` (and marks that hand valid), and back. */
EMBODY_API void st_fingers_set_pose(struct st_fingers *fingers, enum hd_hand hand, const struct hd_pose *pose);
EMBODY_API void st_fingers_get_pose(const struct st_fingers *fingers, enum hd_hand hand,
                         struct hd_pose *out_pose);

#define ST_FINGERS_BIT(hand) (1u << (unsigned)(hand))
#define ST_FINGERS_ALL ((1u << HD_HAND_COUNT) - 1u)

/* What a tracking stream can be: positions of valid devices within ST_STREAM_MAX_M of the
 * origin (the 1 km the body accepts), |t| at most ST_STREAM_MAX_T_S, and t increasing by
 * ST_STREAM_MIN_STEP_S to ST_STREAM_MAX_STEP_S from row to row. */
#define ST_STREAM_MAX_M 1000.0
#define ST_STREAM_MAX_T_S 1e9
#define ST_STREAM_MIN_STEP_S 1e-4
#define ST_STREAM_MAX_STEP_S 1.0

/* What a BVH can be: a Frame Time within the steps a stream may take, and every joint's
 * OFFSET (the root's too) within ST_BVH_MAX_OFFSET file units (1 km in millimetres). */
#define ST_BVH_MIN_FRAME_TIME_S ST_STREAM_MIN_STEP_S
#define ST_BVH_MAX_FRAME_TIME_S ST_STREAM_MAX_STEP_S
#define ST_BVH_MAX_OFFSET 1e6

/* Reads a stream file. Columns are found by the header's names, in any order; `t` and all
 * eight columns of the head, left and right groups are required, and the error names
 * every one missing. The body trackers' groups of PROTOCOL section 2b (pelvis, chest,
 * left_foot, right_foot, left_knee, right_knee, left_elbow, right_elbow) are read when
 * the header has them (all eight columns, or an error naming the ones missing) and set
 * each frame's tracker_present; so are the finger groups of PROTOCOL section 1b
 * (left_fingers_thumb_flex1_deg ... left_fingers_valid, the same for right: all 21
 * columns, or an error naming the ones missing), into `fingers`, each angle within its
 * joint's limits (hd_joint_limits_deg) and valid 0 or 1; columns of any other group are
 * ignored.
 * Blank lines are skipped, values may have blanks around them, CRLF is fine. Each value
 * is read exactly as strtof would (so printed floats come back identical); t as a double.
 * valid = 1 gives the device the flags EM_POSE_ALL_VALID, 0 gives 0 (its pose values are
 * kept as written). Events are 0.
 * Rejects, naming the file, the line and the column: a missing header (a first line of
 * numbers), empty or repeated column names, a row with a different column count,
 * non-numbers, NaN or infinite values, valid flags other than 0/1, t not strictly
 * increasing (both times named), a step of t outside ST_STREAM_MIN_STEP_S to
 * ST_STREAM_MAX_STEP_S or |t| above ST_STREAM_MAX_T_S, a valid device farther than
 * ST_STREAM_MAX_M from the origin, a non-unit quaternion on a valid device (|q| off by
 * more than 1e-3), an empty file, a header with no rows.
 * A last row with no line end that cannot be read (a recording cut by a crash) is
 * dropped, not refused, and its line number left in `cut_line` for the caller to say.
 * On success `out_stream` is the caller's to st_stream_fini; on failure it is empty. */
EMBODY_API enum em_result
st_stream_load(const char *path, struct st_stream *out_stream, struct em_error *err);

/* Same, from text in memory (consumed); `source` names it in errors. */
EMBODY_API enum em_result
st_stream_parse(char *text, const char *source, struct st_stream *out_stream,
                struct em_error *err);

/* Appends a copy of `frame`, growing the array. EM_ERROR_OUT_OF_MEMORY leaves the stream
 * as it was. */
EMBODY_API enum em_result
st_stream_append(struct st_stream *stream, const struct em_tracking_frame *frame);

/* The same with the frame's fingers (NULL: none known; earlier frames appended without
 * fingers have none). */
EMBODY_API enum em_result
st_stream_append_fingers(struct st_stream *stream, const struct em_tracking_frame *frame,
                         const struct st_fingers *fingers);

EMBODY_API void
st_stream_fini(struct st_stream *stream);

/* Writes frames as they come (for --record): the header, then one row per frame with
 * t = time_s - (time_s of the first frame written). Each float is printed in the fewest
 * digits (6 to 9) that read back as the identical float, and t in the fewest (15 to 17)
 * that read back as the identical double, so writing what was read gives the same text.
 * valid is written 1 only when both position and orientation are VALID. */
struct u_out_file; /* src/util/u_file.h: a temporary file renamed over the target */

struct st_stream_writer {
    FILE *file;
    char *path;
    struct u_out_file *output;
    /* The tracker groups to write (EM_TRACKER_BIT each): set it after open and before
     * the first frame for a source whose trackers may appear later; the first frame's
     * tracker_present is added to it. The header is written with the first frame (or on
     * close when there is none); a tracker the header lacks is not written, and one the
     * header has but a frame lacks is written as not tracked (valid 0). */
    uint32_t tracker_mask;
    /* The finger groups to write (ST_FINGERS_BIT each), likewise: set it before the first
     * frame, or the first frame written with fingers adds both hands. A hand the header
     * has but a frame does not know is written as zeros with valid 0. */
    uint32_t finger_mask;
    bool header_written;
    double first_time_s; /* time_s of the first frame written: the file's t = 0 */
    double last_time_s;  /* t of the last row written, relative to first_time_s */
    long frames_written;
    /* A recording (st_stream_writer_open_recording): whole rows reach the file at most
     * ST_RECORD_FLUSH_S apart; frames_on_disk of them are there for sure. */
    bool recording;
    long frames_on_disk;
    long long last_flush_ns;
    size_t pending_bytes;
    char partial_path[4096]; /* "<path>.partial" while recording ("" in place) */
    char leftover_path[4096]; /* an earlier run's partial recording moved aside, or "" */
    /* After a successful st_stream_writer_close: where the file is ("" otherwise); for a
     * recording, a numbered name when a file appeared at its path meanwhile. */
    char saved_path[4096];
};

#define ST_RECORD_FLUSH_S 0.25

/* Starts writing `path`; the header follows with the first frame. The rows go into a
 * temporary file beside `path`, which replaces `path` only when st_stream_writer_close
 * succeeds: a failed write leaves what was at `path` untouched (u_file.h). */
EMBODY_API enum em_result
st_stream_writer_open(const char *path, struct st_stream_writer *out_writer,
                      struct em_error *err);

/* As st_stream_writer_open, for a recording that must survive a crash (kill -9, a power
 * cut): rows go to "<path>.partial" (u_out_file_open_partial), whole rows flushed at
 * least every ST_RECORD_FLUSH_S, moved to `path` by a successful close, never over a file
 * that appeared there meanwhile (then to a numbered name, in saved_path); on a failed
 * write or close the partial file is kept with what reached it. */
EMBODY_API enum em_result
st_stream_writer_open_recording(const char *path, struct st_stream_writer *out_writer,
                                struct em_error *err);

/* Appends one row. A frame more than ST_STREAM_MAX_STEP_S after the previous one (a
 * pause in the tracking) is written ST_STREAM_MAX_STEP_S after it, so the file reads
 * back. Refuses (EM_ERROR_INVALID_ARGUMENT, nothing written) what the reader
 * would refuse: a time not after the previous frame's, a non-finite value, a non-unit
 * quaternion on a device written as valid. */
EMBODY_API enum em_result
st_stream_writer_write(struct st_stream_writer *writer, const struct em_tracking_frame *frame,
                       struct em_error *err);

/* The same with the frame's fingers (NULL: none known). Refuses, as the reader would, an
 * angle of a valid hand outside its joint's limits or not finite. */
EMBODY_API enum em_result
st_stream_writer_write_fingers(struct st_stream_writer *writer,
                               const struct em_tracking_frame *frame,
                               const struct st_fingers *fingers, struct em_error *err);

/* Flushes and closes, putting the file in place; reports a write error (disk full) if one
 * happened, and then `path` is as it was before. Safe on a zeroed writer. A file closed
 * without rows holds only the header (which the reader refuses). */
EMBODY_API enum em_result
st_stream_writer_close(struct st_stream_writer *writer, struct em_error *err);

/* Closes and throws away what was written: `path` is as it was before. Safe on a zeroed
 * writer. */
EMBODY_API void
st_stream_writer_abort(struct st_stream_writer *writer);

/* Writes a whole stream (at least one frame) with the writer above, with every tracker
 * group any frame carries and the stream's finger groups (finger_mask, and both hands when
 * it has fingers); on failure `path` is as it was before (nothing created, nothing
 * removed). */
EMBODY_API enum em_result
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

/* Reads a BVH file: one ROOT, joints with OFFSET and CHANNELS (0 to 6, any order, each at
 * most once), End Sites, then "MOTION", "Frames: n", "Frame Time: s" and n rows of one
 * value per channel. Frames: 0 is allowed (a skeleton only). Rejects (with the line
 * number): a missing HIERARCHY or MOTION section, unbalanced braces, unknown channel
 * names, bad numbers, NaN or infinity, repeated joint names, a frame count that does not
 * match the rows, rows with too few or too many values, a truncated file, a non-positive
 * frame time. On success `out_bvh` is the caller's to st_bvh_fini; on failure it is
 * zeroed. A CMU clip (2 MB) parses in about 8 ms (tests/stream/bench_stream). */
EMBODY_API enum em_result
st_bvh_load(const char *path, struct st_bvh *out_bvh, struct em_error *err);

/* Same, from text in memory (consumed); `source` names it in errors. */
EMBODY_API enum em_result
st_bvh_parse(char *text, const char *source, struct st_bvh *out_bvh, struct em_error *err);

EMBODY_API void
st_bvh_fini(struct st_bvh *bvh);

/* Index of the joint called `name`, or -1. */
EMBODY_API int
st_bvh_find(const struct st_bvh *bvh, const char *name);

/* Global positions (file units) and rotations (unit quaternions x, y, z, w, mapping the
 * joint's axes to the world's) of every joint at `frame` (0 <= frame < frame_count), by
 * forward kinematics in double: a joint's local rotation is the product of its rotation
 * channels in file order (CMU "Zrotation Yrotation Xrotation": Rz * Ry * Rx), and
 *     R = R_parent * R_local,   p = p_parent + R_parent * (offset + translation channels).
 * `out_position` and `out_rotation` have joint_count entries. Allocates nothing. */
EMBODY_API void
st_bvh_frame_pose(const struct st_bvh *bvh, int frame, double (*out_position)[3],
                  double (*out_rotation)[4]);

/* A guess at the factor that turns the file's lengths into metres, from the skeleton's
 * size: 1 (metres), 0.056444 (CMU's units), 0.01 (centimetres) or 0.0254 (inches). */
EMBODY_API double
st_bvh_guess_unit_scale(const struct st_bvh *bvh);

/* A guess at the naming convention of a BVH's joints (sk_name_map_guess over every joint
 * name): the map to read it with, as st_bvh_to_humanoid's `map`. */
EMBODY_API enum sk_name_map
st_bvh_guess_name_map(const struct st_bvh *bvh);

/* Builds a humanoid skeleton from a BVH hierarchy (the HIERARCHY only; no motion is
 * used). Joints whose names `map` knows become humanoid joints named with their VRM names;
 * unmapped joints in between fold their offsets into the next mapped joint (CMU's
 * LHipJoint, LowerBack and Neck1), unmapped leaves are dropped (fingers, thumbs). Lengths
 * are multiplied by `unit_scale` (metres per file unit).
 *
 * End joints: a joint the map names as one (CMU LeftFingerBase = leftHandEnd), and the
 * End Site of a toes joint (leftToesEnd, rightToesEnd). With SK_NAMES_VRM (files that
 * st_bvh_writer wrote) the End Sites of head and hands are also headTop and the hand
 * ends. CMU's Head End Site is not the crown and does not become headTop.
 *
 * The rest pose is made the humanoid's: everything below each upper leg is turned rigidly
 * (by the smallest rotation) so the thigh points straight down (0, -1, 0), everything
 * below each upper arm so the upper arm points along +X (left) or -X (right). Every
 * bone's length is kept. The root is then placed at (0, h, 0) with h such that the lowest
 * foot, toes or toes-end joint is at y = 0.
 *
 * Joint limits are those of the default humanoid, config/humanoid.json (found with
 * u_path_find_data), by bone. The result is checked with sk_humanoid_validate. Errors:
 * missing required bones (all of them named), two joints naming the same bone, a mapped
 * joint outside the hips' subtree, a default humanoid that cannot be found or read.
 * `out_skeleton` is the caller's to sk_skeleton_fini; untouched (zeroed) on failure. */
EMBODY_API enum em_result
st_bvh_to_humanoid(const struct st_bvh *bvh, enum sk_name_map map, double unit_scale,
                   const char *source, struct sk_skeleton *out_skeleton,
                   struct em_error *err);

/* The same, with the joint limits copied by bone from `limits_from` (a humanoid the
 * caller owns) instead of the default humanoid; NULL means the default. */
EMBODY_API enum em_result
st_bvh_to_humanoid_with_limits(const struct st_bvh *bvh, enum sk_name_map map,
                               double unit_scale, const struct sk_skeleton *limits_from,
                               const char *source, struct sk_skeleton *out_skeleton,
                               struct em_error *err);

/* Writes a humanoid's motion as BVH: joints with their skeleton names (VRM names), offsets
 * in metres, the root with 6 channels (Xposition Yposition Zposition Zrotation Xrotation
 * Yrotation) and every other joint 3 (Zrotation Xrotation Yrotation).
 *
 * Leaves that are end joints (headTop, hand and toe ends) or have no humanoid bone are
 * written as End Sites (read back as "<parent>_End"); a leaf that is a humanoid bone (a
 * head without headTop) is written as a JOINT with channels and a zero End Site, so its
 * name is kept. The root's OFFSET is written as 0 0 0 and its position channels hold its
 * absolute position, which reads the same whether a reader adds the root's offset or
 * not. The frame count is written on close (the file must be seekable).
 *
 * The writer keeps a pointer to `skeleton`, which must outlive it. */
struct st_bvh_writer {
    FILE *file;
    char *path;
    struct u_out_file *output;
    const struct sk_skeleton *skeleton;
    int *channel_joint;      /* skeleton joints with channels, in the file's order */
    int channel_joint_count;
    long frame_count_offset; /* where "Frames:" is patched on close */
    long frames_written;
};

/* Starts writing `path` (through a temporary file beside it, as st_stream_writer_open)
 * and writes the hierarchy. `frame_time_s` > 0 (the stream's period). */
EMBODY_API enum em_result
st_bvh_writer_open(const char *path, const struct sk_skeleton *skeleton, double frame_time_s,
                   struct st_bvh_writer *out_writer, struct em_error *err);

/* Writes one frame from the pose's root position (position_m[0], metres) and local
 * rotations (quaternions turned into Z, X, Y Euler angles in degrees; near gimbal lock
 * the first angle is taken as 0 and the last absorbs the rest). Non-finite values are
 * refused. The pose must have the skeleton's joint count. */
EMBODY_API enum em_result
st_bvh_writer_write(struct st_bvh_writer *writer, const struct sk_pose *pose,
                    struct em_error *err);

/* Patches the frame count, closes, puts the file in place and reports any write error
 * (then `path` is as it was before). Safe on a zeroed writer. */
EMBODY_API enum em_result
st_bvh_writer_close(struct st_bvh_writer *writer, struct em_error *err);

/* Closes and throws away what was written: `path` is as it was before. Safe on a zeroed
 * writer. */
EMBODY_API void
st_bvh_writer_abort(struct st_bvh_writer *writer);

/* ---- Which joint of a motion capture clip is which (any naming convention) -------- */

/* The joints whose frames a rig may need turned to CMU's convention. */
enum st_rig_frame {
    ST_RIG_HEAD = 0,
    ST_RIG_LEFT_HAND,
    ST_RIG_RIGHT_HAND,
    ST_RIG_HIPS,
    ST_RIG_FRAME_COUNT,
};

/* A clip's joints as a person's. `joint` gives the BVH joint of each humanoid bone under
 * the guessed naming convention (CMU, Daz-friendly, 3ds Max, CC3/iClone, Mixamo, VRM),
 * -1 for none; the toes are the toes joint or, where the rig has none, the End Site of
 * the foot (placed there by the rig's author at the ball of the foot).
 *
 * The protocol's device poses are defined in CMU's joint frames, which at rest stand in
 * a T-pose aligned with the world (the head's +Y up and +Z forward; a hand's fingers
 * along +X for the left and -X for the right, thumb forward). When a rig's rest pose is
 * such a T-pose (CMU, Daz) its frames are used as they are (`frames_aligned`); otherwise
 * (arms hanging, or bones along their own +Y as CC3's) `fix[f]` is the constant rotation
 * (row-major, the joint's frame from the convention's) that best turns the joint's
 * frame into the one its geometry shows over the clip: for the head, up from the neck
 * and left from the eyes or the shoulders; for a hand, the fingers from wrist to
 * knuckles and the thumb; for the hips, up to the spine and left between the thighs. */
struct st_mocap_rig {
    enum sk_name_map map;
    int joint[SK_BONE_COUNT];
    bool frames_aligned;
    double fix[ST_RIG_FRAME_COUNT][3][3];
};

/* Reads the rig of `bvh` (its names and, when needed, its motion for the frame fixes).
 * Fails naming the humanoid joints it lacks and the names it read them as: the 3-point
 * stream and training need the hips, head, both hands and their knuckles (the hand's
 * end), both legs and feet. */
EMBODY_API enum em_result
st_mocap_rig_init(const struct st_bvh *bvh, const char *source, struct st_mocap_rig *out_rig,
                  struct em_error *err);

/* The rig's naming convention's name for `bone`, or NULL. */
EMBODY_API const char *
st_mocap_rig_name(const struct st_mocap_rig *rig, enum sk_bone bone);

/* The joint's rotation in the convention's frame: q * fix (x, y, z, w), q from
 * st_bvh_frame_pose. `out_q` may alias `q`. */
EMBODY_API void
st_mocap_rig_fix_quat(const struct st_mocap_rig *rig, enum st_rig_frame frame, const double *q,
                      double *out_q);

/* ---- From motion capture to a 3-point stream (PROTOCOL section 2) --------------- */

/* Makes the stream a headset and two controllers would have reported for a CMU clip
 * (joints Head, LeftHand, LeftFingerBase, RightHand, RightFingerBase; lengths times
 * `unit_scale`, 0.056444 for CMU): every step-th frame from frame 0, step =
 * round(1 / (Frame Time * 60)) (2 for 120 fps clips), t = k * step * Frame Time for the
 * k-th kept frame (the clip's clock: k * 0.0166666 for CMU's 0.0083333, which is what the
 * reference streams hold, rather than exactly k / 60); head at Head + R_Head (0, 0.08,
 * 0.09) m with orientation R_Head diag(-1, 1, -1); hands at the midpoint of wrist and
 * knuckles with the grip axes of the protocol; every device valid. Each quaternion's sign
 * is the one Shepperd's branches give (as m_quat_from_columns, but in double): w > 0
 * when the rotation matrix's trace is positive, otherwise the component of the largest
 * diagonal element is positive. This reproduces eval/streams/ to about 1e-6. Clips on
 * other skeletons are read through st_mocap_rig (their names for head, hands and
 * knuckles; their frames turned to CMU's where the rest pose is not its T-pose). Missing
 * joints are an error naming them. `out_stream` is the caller's to st_stream_fini. */
EMBODY_API enum em_result
st_mocap_to_stream(const struct st_bvh *bvh, double unit_scale, const char *source,
                   struct st_stream *out_stream, struct em_error *err);

/* The same, with the body trackers of `tracker_mask` (EM_TRACKER_BIT each; PROTOCOL
 * section 2b): each at its CMU joint (Hips, Spine1, LeftFoot, RightFoot, LeftLeg,
 * RightLeg, LeftForeArm, RightForeArm) plus R_joint times its mount offset, with the
 * joint's rotation R_joint, valid on every row; every frame's tracker_present is the
 * mask. On rigs with other names in CMU's T-pose the same humanoid joints carry them;
 * on rigs not in that pose trackers are refused (their mounts are in CMU's frames).
 * Missing joints are an error naming them and their trackers. Reproduces
 * eval/streams-trackers/ to about 1e-6. */
EMBODY_API enum em_result st_mocap_to_stream_trackers(const struct st_bvh *bvh, double unit_scale,
                                                      uint32_t tracker_mask, const char *source,
                                                      struct st_stream *out_stream,
                                                      struct em_error *err);

/* Where PROTOCOL section 2b mounts `tracker`: the CMU joint's name and the offset in the
 * joint's frame (metres). Either output may be NULL. */
EMBODY_API void st_mocap_tracker_mount(enum em_tracker tracker, const char **out_joint,
                                       float *out_offset_m);

/* The named tracker setups of PROTOCOL section 2b as tracker masks: 3 (none), 4 (pelvis),
 * 6 (+ feet), 8 (+ knees), 11 (all eight). */
#define ST_SETUP_3 0u
#define ST_SETUP_4 EM_TRACKER_BIT(EM_TRACKER_PELVIS)
#define ST_SETUP_6                                                                                 \
    (ST_SETUP_4 | EM_TRACKER_BIT(EM_TRACKER_LEFT_FOOT) | EM_TRACKER_BIT(EM_TRACKER_RIGHT_FOOT))
#define ST_SETUP_8                                                                                 \
    (ST_SETUP_6 | EM_TRACKER_BIT(EM_TRACKER_LEFT_KNEE) | EM_TRACKER_BIT(EM_TRACKER_RIGHT_KNEE))
#define ST_SETUP_11 EM_TRACKER_ALL

/* Parses a tracker setup: a named setup ("3", "4", "6", "8", "11") or a comma-separated
 * list of tracker names ("pelvis,left_foot,right_foot"). Errors name the unknown part and
 * list the names. */
EMBODY_API enum em_result st_tracker_setup_parse(const char *text, uint32_t *out_mask,
                                                 struct em_error *err);

/* The setup's usual name ("3" ... "11") when the mask is a named one, else the list of
 * tracker names joined by commas ("pelvis,chest"), in `out` (size bytes). */
EMBODY_API void st_tracker_setup_name(uint32_t mask, char *out, size_t size);

#ifdef __cplusplus
}
#endif

#endif
