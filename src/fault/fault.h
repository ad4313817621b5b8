/*
 * Faults that real trackers have, put into the tracking frames of any source (a clip's
 * stream in `embody eval`, a replayed recording, VMC input, OpenXR), so a tracker setup can
 * be judged as it will really be worn: an IMU tracker's yaw drift, position noise, latency,
 * dropouts, a tracker strapped on a little off (offset) or turned, and a left/right swap.
 *
 * A fault is written KIND:DEVICE[:AMOUNT] (the --fault option and the settings file):
 *
 *     drift:DEVICE:DEG_PER_MIN   yaw (about +Y, the vertical) drift of the orientation,
 *                                growing at that rate from the first frame (IMU trackers
 *                                drift in heading; the position is left alone)
 *     noise:DEVICE:MM            Gaussian noise on each position axis, that standard
 *                                deviation (a fresh draw per sample)
 *     latency:DEVICE:MS          the device's pose (and validity) as it was that long ago,
 *                                interpolated between the samples either side
 *     dropout:DEVICE:SHARE       lost (flags 0, pose held at its last value) for that share
 *                                of samples (0.1 or 10%), in bursts of FLT_DROPOUT_BURST_S
 *                                on average as occlusions come
 *     dropout:DEVICE:FROM-TOs    lost from FROM to TO seconds after the first frame
 *     offset:DEVICE:CM           strapped that far along its own +Y (the body trackers' +Y
 *                                runs up the limb: positive is higher up the bone)
 *     turn:DEVICE:DEG            strapped turned by that angle about its own +Y
 *     swap:PAIR                  the left and right devices of a pair exchanged
 *
 * An amount may carry its unit ("30deg/min", "5mm", "50ms", "3cm", "15deg"). DEVICE is a
 * device ("head", "left", "right"), a body tracker ("pelvis", "left_foot", ...: as in
 * stream files), or a group: "hands", "feet", "knees", "elbows", "trackers" (every body
 * tracker) or "all". A pair for swap is "hands", "feet", "knees" or "elbows" (or either of
 * its members). A fault on a device the source does not carry does nothing.
 *
 * Faults are applied in a fixed order whatever the order given, the order in which they
 * happen to a real tracker: offset, turn (how it is worn), drift, noise (the sensor), swap
 * (which device is which), latency (delivery), dropout. Random faults (noise, dropout
 * shares) draw from a generator seeded by the set's seed and the fault's index, so the
 * same frames and seed give the same result.
 *
 * Core: needs neither OpenXR nor SDL. The per-frame path allocates nothing.
 */
#ifndef EMBODY_FAULT_H
#define EMBODY_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "embody/input.h"
#include "embody/result.h"
#include "embody/tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

enum flt_kind {
    FLT_OFFSET = 0,
    FLT_TURN,
    FLT_DRIFT,
    FLT_NOISE,
    FLT_SWAP,
    FLT_LATENCY,
    FLT_DROPOUT,
    FLT_KIND_COUNT,
};

/* The devices a fault acts on: the head and hands (enum em_device) in the low bits, then
 * the body trackers (enum em_tracker). */
#define FLT_DEVICE_BIT(d) (1u << (unsigned)(d))
#define FLT_TRACKER_BIT(t) (1u << (EM_DEVICE_COUNT + (unsigned)(t)))
#define FLT_ALL_DEVICES ((1u << (EM_DEVICE_COUNT + EM_TRACKER_COUNT)) - 1u)

/* Limits of the amounts (each kind's unit). */
#define FLT_MAX_DRIFT_DEG_PER_MIN 3600.0
#define FLT_MAX_NOISE_MM 1000.0
#define FLT_MAX_LATENCY_MS 1000.0
#define FLT_MAX_OFFSET_CM 100.0
#define FLT_MAX_TURN_DEG 180.0
#define FLT_MAX_WINDOW_S 1e6
/* The mean length of a dropout burst (a share's losses come in runs this long on average,
 * whatever the frame rate). */
#define FLT_DROPOUT_BURST_S 0.5
/* Samples of history a latency fault keeps per device: at 1000 Hz, the longest latency. */
#define FLT_LATENCY_HISTORY 1024

#define FLT_TEXT_MAX 64

struct flt_fault {
    enum flt_kind kind;
    uint32_t devices; /* FLT_DEVICE_BIT / FLT_TRACKER_BIT */
    /* deg/min (drift), mm (noise), ms (latency), share 0..1 (dropout), cm (offset),
     * deg (turn); 0 for swap and a dropout window */
    double amount;
    bool window; /* dropout: lost from window_from_s to window_to_s, else a share */
    double window_from_s, window_to_s;
    char text[FLT_TEXT_MAX]; /* as given (cut to fit), for tables and messages */
};

#define FLT_MAX_FAULTS 16

/* Faults to apply together. A zeroed set is no fault, seed 0. */
struct flt_set {
    int count;
    uint64_t seed;
    struct flt_fault fault[FLT_MAX_FAULTS];
};

/* The kind's name in the option ("drift", ... "swap"). */
const char *flt_kind_name(enum flt_kind kind);

/* Parses "KIND:DEVICE[:AMOUNT]". `what` names where it came from for the error ("--fault",
 * "settings.json: faults[1]"); errors quote the text and say what was expected. */
enum em_result flt_parse(const char *text, const char *what, struct flt_fault *out,
                         struct em_error *err);

/* Parses and appends; EM_ERROR_LIMIT past FLT_MAX_FAULTS. */
enum em_result flt_set_add(struct flt_set *set, const char *text, const char *what,
                           struct em_error *err);

/* Adds the "faults" array of a settings file's JSON `text` (config/body.json: strings as
 * --fault takes) to `set`. Errors name `source`, the entry's line and column and what was
 * expected ("FILE:3:4: faults[1] \"latency:pelvis:soon\": bad amount; expected ...").
 * Text without "faults" (or not JSON: the settings reader reports that) adds nothing. */
enum em_result flt_settings_parse(const char *text, const char *source, struct flt_set *set,
                                  struct em_error *err);

/* The faults' texts joined by ", " into `out` ("none" when there is none). */
void flt_set_describe(const struct flt_set *set, char *out, size_t out_size);

/* The body trackers (EM_TRACKER_BIT) the set's faults name. */
uint32_t flt_set_trackers(const struct flt_set *set);

/* The running state of a set over one run of frames (latency history, held poses, random
 * generators). Heap object: create, apply to each frame in time order, destroy. */
struct flt_state;

/* Copies `set`. EM_ERROR_OUT_OF_MEMORY when the history cannot be allocated. */
enum em_result flt_state_create(const struct flt_set *set, struct flt_state **out_state,
                                struct em_error *err);

/* Destroys (NULL is fine) and clears the caller's pointer. */
void flt_state_destroy(struct flt_state **state);

/* Applies the faults to `frame` in place. Frames must come in increasing time; the first
 * frame given starts the faults' clock (drift, dropout windows). Allocates nothing. */
void flt_state_apply(struct flt_state *state, struct em_tracking_frame *frame);

/* The same over `count` frames in order, with a fresh state. */
enum em_result flt_apply_frames(const struct flt_set *set, struct em_tracking_frame *frames,
                                int count, struct em_error *err);

/* A source whose frames are those of `inner` with the faults applied. The new source owns
 * `inner` (destroying it destroys inner); on failure `inner` is left to the caller. Pausing
 * and submitting pass through. */
enum em_result flt_source_create(struct in_source *inner, const struct flt_set *set,
                                 struct in_source **out_source, struct em_error *err);

#ifdef __cplusplus
}
#endif

#endif
