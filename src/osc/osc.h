/*
 * Live pose output to other programs over OSC (liblo): the VMC protocol for VTubing and
 * avatar apps (VSeeFace, VMC receivers, engine plugins), and VRChat's OSC trackers.
 * Sending never blocks the frame loop; an unreachable destination is reported once, not
 * every frame.
 *
 * Three layers, usable on their own:
 *  - conventions: our right-handed STAGE frame and humanoid axes to Unity's left-handed
 *    world and humanoid axes (the derivation is in src/osc/osc_convert.c);
 *  - frames: the values one frame carries, built from a skeleton and a pose, in the
 *    protocol's conventions (osc_vmc_frame_build, osc_vrchat_frame_build);
 *  - the sender: encodes frames with liblo and sends them over UDP.
 *
 * Unity conventions, as both protocols use them: left-handed, +Y up, metres; the player
 * initially faces +Z with +X to their right. Our STAGE space is right-handed, +Y up, the
 * player initially facing -Z with +X to their right, so a world position converts as
 * (x, y, z) -> (x, y, -z). A humanoid at rest (identity rotations) faces +Z in both, but
 * its left is at +X in ours and at -X in Unity's. Quaternions are x, y, z, w everywhere.
 */
#ifndef EMBODY_OSC_H
#define EMBODY_OSC_H

#include <stdbool.h>
#include <stdint.h>

#include "embody/hand.h"
#include "embody/input.h"
#include "embody/result.h"
#include "embody/skeleton.h"
#include "embody/tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OSC_DEFAULT_HOST "127.0.0.1"
#define OSC_VMC_DEFAULT_PORT 39539
#define OSC_VRCHAT_DEFAULT_PORT 9000
#define OSC_HOST_MAX 256

/* Parses a destination "HOST:PORT", "HOST", ":PORT", "PORT" (digits only) or
 * "[IPV6]:PORT" (NULL or "" = all defaults) into `out_host` (OSC_HOST_MAX bytes) and `out_port`. HOST must be a literal
 * address or a name that resolves now (this may wait for DNS: call it at start); PORT
 * must be digits only, 1-65535. A bad value gets an error naming `option` ("--vmc") and
 * what was expected, for example `--vmc: port "99999" is out of range 1-65535`. */
enum em_result
osc_parse_destination(const char *text, const char *option, const char *default_host,
                      int default_port, char *out_host, int *out_port, struct em_error *err);

/* ---- Conventions (see src/osc/osc_convert.c for the derivation) ---------------------- */

/* A world position: STAGE -> Unity world and back, (x, y, z) -> (x, y, -z). */
void
osc_unity_position_from_stage(const float *p_m, float *out_p_m);
void
osc_stage_position_from_unity(const float *p_m, float *out_p_m);

/* A humanoid joint's global rotation (joint axes -> world): ours -> Unity's, where the
 * Unity humanoid's rest faces +Z with its left at -X. A humanoid at rest facing the
 * player's initial forward (-Z in STAGE) becomes identity in Unity. */
void
osc_unity_bone_rotation_from_stage(const float *q, float *out_q);
void
osc_stage_bone_rotation_from_unity(const float *q, float *out_q);

/* A joint's local rotation and a child's offset in its parent joint's frame: ours ->
 * Unity humanoid's (both relative to their T-pose rest). */
void
osc_unity_local_rotation_from_ours(const float *q, float *out_q);
void
osc_ours_local_rotation_from_unity(const float *q, float *out_q);
void
osc_unity_local_position_from_ours(const float *v_m, float *out_v_m);
void
osc_ours_local_position_from_unity(const float *v_m, float *out_v_m);

/* A camera-like rotation (an OpenXR view: -Z forward, +Y up, +X right) -> a Unity camera
 * rotation (+Z forward): looking at the player's initial forward is identity in both. */
void
osc_unity_view_rotation_from_stage(const float *q, float *out_q);

/* Unity's Euler angles of a Unity rotation, degrees, as Transform.eulerAngles reads them:
 * q = Ry(y) * Rx(x) * Rz(z) (applied z first, then x, then y, about fixed axes).
 * x is in [-90, 90], y and z in (-180, 180]. */
void
osc_unity_euler_deg_from_rotation(const float *q, float *out_euler_deg);

/* Unity's HumanBodyBones name of a humanoid bone ("LeftUpperArm"), or NULL for the end
 * joints (headTop, ...), which VMC does not carry. */
const char *
osc_unity_bone_name(enum sk_bone bone);

/* ---- Frames: what one frame carries, in the protocol's conventions -------------------- */

/* A pose in Unity conventions: position metres, rotation quaternion x, y, z, w. */
struct osc_unity_pose {
    float position_m[3];
    float rotation[4];
};

/* One VMC frame. The root (/VMC/Ext/Root/Pos "root") is the STAGE origin seen from Unity:
 * position 0, identity rotation, so the hips' local pose is their Unity world pose. Every
 * other bone's local pose is relative to its nearest humanoid ancestor (Unity's humanoid
 * parent: leftUpperArm -> leftShoulder, neck -> upperChest or chest, ...). */
#define OSC_VMC_FINGER_BONES (HD_HAND_COUNT * HD_JOINT_COUNT)

struct osc_vmc_frame {
    float time_s; /* /VMC/Ext/T: seconds since the sender's first frame */
    struct osc_unity_pose root;
    int bone_count;
    enum sk_bone bone[SK_BONE_COUNT];                 /* in skeleton order, parents first */
    struct osc_unity_pose bone_local[SK_BONE_COUNT]; /* /VMC/Ext/Bone/Pos values */
    /* The fingers: 0 (none: the frame is what it always was) or OSC_VMC_FINGER_BONES, the
     * left hand's 15 bones in include/embody/hand.h's order then the right's, each
     * relative to its Unity humanoid parent (the hand, or the finger's previous bone). */
    int finger_count;
    struct osc_unity_pose finger_local[OSC_VMC_FINGER_BONES];
};

/* Builds a VMC frame from every humanoid bone present in `skeleton` (end joints are not
 * sent). `pose` must be of `skeleton`; only its global positions and rotations are read
 * (local values are derived from them, so extra non-humanoid joints in between are fine).
 * `time_s` goes to `out_frame->time_s` as is. */
void
osc_vmc_frame_build(const struct sk_skeleton *skeleton, const struct sk_pose *pose,
                    float time_s, struct osc_vmc_frame *out_frame);

/* Unity's HumanBodyBones name of finger bone `index` of a VMC frame ("LeftThumbProximal"
 * ... "RightLittleDistal"), index in [0, OSC_VMC_FINGER_BONES). */
const char *
osc_unity_finger_bone_name(int index);

/* Gives `frame` its fingers: OSC_VMC_FINGER_BONES local rotations and rest offsets in our
 * humanoid's conventions (hd_pose_humanoid_locals, left hand then right), converted as
 * every other bone's. `offset_m` NULL sends zero offsets (receivers that drive an avatar
 * read only the fingers' rotations). */
void
osc_vmc_frame_set_fingers(struct osc_vmc_frame *frame, const float (*rotation)[4],
                          const float (*offset_m)[3]);

/* VRChat's OSC trackers: eight body slots plus the head used for alignment.
 * Slot (address /tracking/trackers/N/...)  position at        rotation of
 *   1 hips                                 hips              hips
 *   2 chest                                chest             chest
 *   3 left foot                            leftFoot (ankle)  leftFoot
 *   4 right foot                           rightFoot         rightFoot
 *   5 left knee                            leftLowerLeg      leftUpperLeg (a thigh strap)
 *   6 right knee                           rightLowerLeg     rightUpperLeg
 *   7 left elbow                           leftLowerArm      leftUpperArm (VRChat: "elbows
 *   8 right elbow                          rightLowerArm     rightUpperArm  (upper arms)")
 *   head (/tracking/trackers/head/...)     the headset's pose when given, else the head
 * Each tracker's pose is rigid with one body part, which is all VRChat's calibration needs;
 * rotations follow the Unity humanoid convention, so a body in T-pose facing Unity's +Z
 * reads (0, 0, 0) on every tracker. */
#define OSC_VRCHAT_BODY_TRACKERS 8
#define OSC_VRCHAT_HEAD 8 /* index of the head in osc_vrchat_frame.tracker */

struct osc_vrchat_tracker {
    bool present;          /* false when the skeleton lacks the bone: not sent */
    char address[40];      /* "/tracking/trackers/1" (add "/position" or "/rotation") */
    float position_m[3];   /* Unity world */
    float euler_deg[3];    /* Unity Euler angles (osc_unity_euler_deg_from_rotation) */
};

struct osc_vrchat_frame {
    struct osc_vrchat_tracker tracker[OSC_VRCHAT_BODY_TRACKERS + 1];
};

/* Which joints a VRChat slot (index 0-7 for slots 1-8) is placed at and turns with. */
void
osc_vrchat_slot_bones(int index, enum sk_bone *out_position_bone,
                      enum sk_bone *out_rotation_bone);

/* Builds a VRChat frame. `headset` (may be NULL) is the headset's pose this frame (an
 * OpenXR view pose in STAGE space); when it is usable it is sent as the head, since
 * VRChat aligns the trackers by matching the head to its own headset pose. Otherwise the
 * head joint's pose is sent. */
void
osc_vrchat_frame_build(const struct sk_skeleton *skeleton, const struct sk_pose *pose,
                       const struct em_device_pose *headset, struct osc_vrchat_frame *out_frame);

/* ---- The sender ------------------------------------------------------------------------- */

struct osc_sender;

enum osc_protocol {
    OSC_PROTOCOL_VMC = 0,
    OSC_PROTOCOL_VRCHAT = 1,
};

/* The protocol's name for messages ("VMC", "VRChat OSC"). */
const char *
osc_protocol_name(enum osc_protocol protocol);

/* Opens a sender to `host` (a literal address or a name, resolved here, once: never per
 * frame) and `port` (1-65535). The UDP socket is non-blocking and connected, so the
 * kernel reports a destination that refuses (ICMP port unreachable) on a later send.
 * Fails with a message naming the destination when it cannot be resolved or no socket
 * can be opened. The caller owns `*out_sender` (osc_sender_destroy). */
enum em_result
osc_sender_create(enum osc_protocol protocol, const char *host, int port,
                  struct osc_sender **out_sender, struct em_error *err);

/* Closes the socket and frees the sender; takes NULL and clears the caller's pointer. */
void
osc_sender_destroy(struct osc_sender **sender);

/* Gives the headset's pose (STAGE space, OpenXR view) for the next osc_sender_send only;
 * VRChat uses it as the head. Without it the head joint is sent. VMC ignores it. */
void
osc_sender_set_headset(struct osc_sender *sender, const struct em_device_pose *headset);

/* Sends one frame of the humanoid's pose (global positions and rotations in our
 * conventions), converted to the protocol's conventions: VMC as one or a few OSC bundles
 * (each under 1400 bytes so it fits one Ethernet frame), VRChat as one message per
 * address. `time_s` is the frame time (seconds, any origin). Never blocks: a datagram the
 * socket cannot take now is dropped. The first failing frame logs one warning (U_LOG_W)
 * naming the destination and the reason; later failures are counted quietly, and after
 * two seconds of clean sends one info line says it works again. A frame with non-finite
 * values is not sent (counted, warned once). */
void
osc_sender_send(struct osc_sender *sender, const struct sk_skeleton *skeleton,
                const struct sk_pose *pose, double time_s);

/* What a sender has done, for tests and for a summary at exit. */
struct osc_sender_stats {
    uint64_t frames;          /* osc_sender_send calls */
    uint64_t frames_skipped;  /* not sent: non-finite values */
    uint64_t frames_failed;   /* at least one datagram failed */
    uint64_t datagrams_sent;
    uint64_t datagrams_failed; /* refused, unreachable, or dropped (socket full) */
    int warnings;              /* warnings logged (one per outage, plus non-finite) */
    int recoveries;            /* "works again" lines logged */
    int last_errno;            /* of the last failed send, 0 if none */
    bool failing;              /* in an outage now (warned, not yet recovered) */
};

void
osc_sender_get_stats(const struct osc_sender *sender, struct osc_sender_stats *out_stats);

/* Gives the tracked devices for the next osc_sender_send only: VMC then also sends
 * /VMC/Ext/Hmd/Pos "head", /VMC/Ext/Con/Pos "left" and "right" and /VMC/Ext/Tra/Pos per
 * present body tracker (serial = em_tracker_name), for each device tracked, positions
 * (x, y, -z) and rotations M R M (M = diag(1, 1, -1)) in Unity's world: what
 * osc_vmc_in_create reads back. VRChat ignores it. */
void osc_sender_set_devices(struct osc_sender *sender, const struct em_tracking_frame *frame);

/* Gives the fingers for the next osc_sender_send only (as osc_vmc_frame_set_fingers takes
 * them; copied): VMC then also sends the 30 finger bones (/VMC/Ext/Bone/Pos
 * "LeftThumbProximal" ... "RightLittleDistal"). Without it a frame carries no finger
 * bone, as before. VRChat ignores it. `rotation` NULL clears what was given. */
void osc_sender_set_fingers(struct osc_sender *sender, const float (*rotation)[4],
                            const float (*offset_m)[3]);

/* ---- VMC input (osc_vmc_in.c) ------------------------------------------------------ */

#define OSC_VMC_MAX_ROLES 16
#define OSC_VMC_MAX_ALLOW 16
#define OSC_VMC_WAIT_MS 20  /* how long next() waits for a datagram */
#define OSC_VMC_STALE_S 0.5 /* a device not heard from this long is lost */

/* A serial's role: EM_DEVICE_* (head, left, right), or EM_DEVICE_COUNT + EM_TRACKER_*. */
struct osc_vmc_role {
    char serial[64];
    int role;
};

/* A sender allowed by --vmc-allow: IPv4 `address` (host order) under `mask`. */
struct osc_vmc_allow {
    uint32_t address;
    uint32_t mask;
};

struct osc_vmc_in_desc {
    char host[64]; /* IPv4 address or name to listen on; "" = 127.0.0.1 (this machine only) */
    int port;      /* UDP port to listen on; 0 = OSC_VMC_DEFAULT_PORT (39539) */
    int role_count;
    struct osc_vmc_role role[OSC_VMC_MAX_ROLES];
    int allow_count; /* 0: any sender that can reach the address */
    struct osc_vmc_allow allow[OSC_VMC_MAX_ALLOW];
};

struct osc_vmc_in_stats {
    uint64_t messages;  /* OSC messages read */
    uint64_t poses;     /* device poses taken */
    uint64_t ignored;   /* other addresses (bones, blend shapes, time) */
    uint64_t bad;       /* device messages refused: wrong types, non-finite, non-unit */
    uint64_t malformed; /* datagrams refused whole: not well-formed OSC (osc_in_decode) */
    uint64_t unmapped;  /* device poses whose serial has no role */
    uint64_t frames;    /* frames delivered */
    uint64_t refused_senders; /* datagrams from senders not on the allow-list, dropped */
};

/* Listens on UDP `desc->host`:`desc->port` (127.0.0.1 unless told: only programs on this
 * machine can drive the body; any other address is logged as taking input from the
 * network) for VMC device poses (/VMC/Ext/Hmd/Pos, Con/Pos, Tra/Pos) and returns an input
 * source (name "vmc"): next() waits up to OSC_VMC_WAIT_MS for data and returns a frame of
 * the latest poses (EM_NOT_READY when nothing came), time_s on the monotonic clock;
 * devices not heard from for OSC_VMC_STALE_S are lost (flags 0); body trackers, once
 * heard, stay present. Datagrams are read by our own checked reader (osc_in_decode.h):
 * malformed ones are refused whole, bundles are dispatched at once whatever their
 * timetag, nothing is queued. Senders outside a non-empty allow-list are dropped and
 * counted. Bad input is counted (osc_vmc_in_get_stats), the first of each kind logged
 * (network text cut to a short printable prefix), and a summary logged on destroy. Fails
 * naming the address and port when it cannot be opened. */
enum em_result osc_vmc_in_create(const struct osc_vmc_in_desc *desc, struct in_source **out_source,
                                 struct em_error *err);

/* `source` must come from osc_vmc_in_create. */
void osc_vmc_in_get_stats(const struct in_source *source, struct osc_vmc_in_stats *out_stats);

/* Parses "[HOST:]PORT" (--vmc-in's value) into desc->host and desc->port: HOST an IPv4
 * address or a name, PORT 1-65535. */
enum em_result osc_vmc_listen_parse(const char *text, struct osc_vmc_in_desc *desc,
                                    struct em_error *err);

/* Parses "ADDR[,ADDR...]" (--vmc-allow's value; ADDR an IPv4 address, a CIDR block
 * a.b.c.d/n or a host name) and appends to desc->allow. */
enum em_result osc_vmc_allow_parse(const char *text, struct osc_vmc_in_desc *desc,
                                   struct em_error *err);

/* Parses "SERIAL=ROLE" (ROLE: head, left, right, or a tracker name). */
enum em_result osc_vmc_role_parse(const char *text, struct osc_vmc_role *out, struct em_error *err);

#ifdef __cplusplus
}
#endif

#endif
