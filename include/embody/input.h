/*
 * Where tracking comes from. Every source (the OpenXR runtime, a replayed stream file,
 * the bundled demo) is a `struct in_source`, so the program, the tests and the tools
 * read poses the same way:
 *
 *     struct em_tracking_frame frame;
 *     while (in_source_next(src, &frame) == EM_OK) {
 *         ... solve the body, draw the mirror ...
 *         in_source_submit(src);   // OpenXR: draw both eyes and end the frame
 *     }
 *     in_source_destroy(&src);
 *
 * Implementations embed `struct in_source` as their first member named `base`.
 */
#ifndef EMBODY_INPUT_H
#define EMBODY_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "embody/export.h"
#include "embody/result.h"
#include "embody/tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

struct st_fingers; /* include/embody/stream.h: each hand's finger pose */

struct in_source {
    const char *name; /* "openxr", "replay", "demo" */

    /* Waits for and returns the next frame. EM_OK with a frame; EM_NOT_READY when there
     * is no frame this time but the caller should keep going (a session not yet
     * running); EM_END_OF_STREAM when the source has ended (replay done, session
     * exited); < 0 on a failure the source could not recover from. */
    enum em_result (*next)(struct in_source *src, struct em_tracking_frame *out_frame);

    /* Optional: called once the frame from next() has been used (NULL = nothing). */
    enum em_result (*submit)(struct in_source *src);

    /* Optional: pause or resume (replay); NULL when the source cannot pause. */
    void (*set_paused)(struct in_source *src, bool paused);

    void (*destroy)(struct in_source *src);

    /* Optional: the fingers of the frame the last next() returned (NULL: the source
     * carries no fingers). See in_source_fingers. */
    bool (*fingers)(struct in_source *src, struct st_fingers *out_fingers);
};

static inline enum em_result
in_source_next(struct in_source *src, struct em_tracking_frame *out_frame)
{
    return src->next(src, out_frame);
}

static inline enum em_result
in_source_submit(struct in_source *src)
{
    return src->submit ? src->submit(src) : EM_OK;
}

static inline bool
in_source_can_pause(const struct in_source *src)
{
    return src->set_paused != NULL;
}

static inline void
in_source_set_paused(struct in_source *src, bool paused)
{
    if (src->set_paused)
        src->set_paused(src, paused);
}

/* The fingers of the frame the last in_source_next returned with EM_OK: each hand's pose
 * as the hand model's angles (struct st_fingers, include/embody/stream.h; st_fingers_get_pose
 * gives the hd_pose), with valid[hand] false for a hand nothing drives (its angles are then
 * the relaxed hand's, or zero). OpenXR gives them from hand tracking, else the
 * controllers' finger inputs, else the relaxed hand (src/xr/oxr_hands.c); a replayed
 * stream gives its finger columns (PROTOCOL.md section 1b). Returns false, leaving
 * `out_fingers` as it was, when the source carries no fingers. Allocates nothing. */
static inline bool
in_source_fingers(struct in_source *src, struct st_fingers *out_fingers)
{
    return src->fingers ? src->fingers(src, out_fingers) : false;
}

/* Destroys the source (NULL is fine) and clears the caller's pointer. */
static inline void
in_source_destroy(struct in_source **src)
{
    if (src && *src) {
        (*src)->destroy(*src);
        *src = NULL;
    }
}

/* ---- Replay of a stream file --------------------------------------------------- */

/* Called (once per source) the first time a gap in the stream is shortened: `gap_s` is
 * the time the file has between two frames, `at_s` the file's t of the later one, and
 * `waited_s` the wait used instead. */
typedef void (*in_replay_gap_fn)(void *user, double gap_s, double at_s, double waited_s);

/* The longest a real-time replay waits for a frame, unless the desc says otherwise. */
#define IN_REPLAY_DEFAULT_MAX_WAIT_S 2.0

struct st_stream;
struct in_replay_desc {
    const char *path;         /* a 3-point stream file */
    /* or frames made in memory (a stream made from a motion capture clip, copied); when
     * set, `path` is not read */
    const struct st_stream *stream;
    bool as_fast_as_possible; /* false: frames come at the file's pace in real time */
    bool loop;                /* start again at the end instead of ending */
    const char *name;         /* the source's name (copied, up to 63 bytes); default "replay" */
    double max_wait_s;        /* longest wait for one frame; 0 = IN_REPLAY_DEFAULT_MAX_WAIT_S */
    in_replay_gap_fn on_gap;  /* optional: told of the first shortened gap */
    void *on_gap_user;
    /* optional: told (with on_gap_user) when the file's last row was cut short (a
     * recording a crash ended) and dropped: its line number */
    void (*on_cut_row)(void *user, int line);
};

/* Loads the whole file (errors name its line) and returns a source that plays it. The
 * frames come out exactly as stored, except that on a loop the time keeps increasing: each
 * pass adds (last t - first t + period), period being the stream's mean frame interval
 * (1/60 s for a one-frame stream), so the wrap is one period like any other step.
 *
 * Real time (not as_fast_as_possible): the first next() delivers at once and starts the
 * clock; frame k is then delivered no earlier than (t_k - t_first) later on the monotonic
 * clock. Every frame is delivered (none skipped); if the caller falls more than 0.1 s
 * behind, the clock restarts from the late frame instead of rushing to catch up. A frame
 * due more than max_wait_s after the previous one (a gap in a recording, a clock jump in
 * the file: 1e5 s would be a day) comes max_wait_s later and the clock goes on from it;
 * on_gap is told the first time.
 * set_paused(true) holds the current frame: next() returns it again with the same time
 * (in real time one period apart), and time paused does not count when playing resumes.
 * At the end without loop, next() returns EM_END_OF_STREAM (every time). next() never
 * allocates. The source owns its copy of the frames; destroy it with in_source_destroy. */
EMBODY_API enum em_result
in_replay_create(const struct in_replay_desc *desc, struct in_source **out_source,
                 struct em_error *err);

/* The bundled demo: config/demo/demo.csv (found with u_path_find_data; a stream made from
 * CMU clip 14_14, see config/demo/README.md) replayed as above, looping, named "demo".
 * EM_ERROR_IO naming the places tried when it cannot be found. */
EMBODY_API enum em_result
in_demo_create(bool as_fast_as_possible, struct in_source **out_source, struct em_error *err);

/* Path of the bundled demo stream (for messages and tools), or NULL if not found. The
 * string is static: valid until the next call. */
EMBODY_API const char *
in_demo_path(void);

/* ---- The player's height from the headset ----------------------------------------- */

/* The heights an estimate may give (those the live calibration accepts), metres. */
#define IN_HEIGHT_MIN_M 1.0f
#define IN_HEIGHT_MAX_M 2.5f
/* The tallest standing height a still headset is taken as evidence for: a head held
 * still higher than this stands on something (a step, a stool), it does not grow. */
#define IN_HEIGHT_PLAUSIBLE_MAX_M 2.1f
/* The head is still when it moves less than IN_HEIGHT_STILL_RANGE_M up or down over
 * IN_HEIGHT_STILL_WINDOW_S: a jump's top, a bob of a step are not. */
#define IN_HEIGHT_STILL_WINDOW_S 0.5
#define IN_HEIGHT_STILL_RANGE_M 0.03f
/* The still time below which there is no standing evidence (all heights are used). */
#define IN_HEIGHT_MIN_STILL_S 0.2
/* The still time after which a live estimate is confident enough to calibrate on. */
#define IN_HEIGHT_CONFIDENT_STILL_S 1.0
#define IN_HEIGHT_RECENT_MAX 512
#define IN_HEIGHT_BIN_M 0.005f
#define IN_HEIGHT_BINS 512

/* Estimates a standing height from the headset over a stream or a session. Each frame's
 * skull base is found from the headset's pose (the headset's offset turned by its
 * rotation, so a head tilted down is not a short player); the heights at which the head
 * was held still (see IN_HEIGHT_STILL_*) are the standing evidence, and the estimate is
 * their 90th percentile over the skull base's share of standing height
 * (SK_HEAD_JOINT_HEIGHT_RATIO): crouching, sitting and looking down stay below it, jumps
 * are not still and a step up is not plausible. Without still evidence all heights are
 * used. Hands held out at shoulder height (a T-pose) bound it from below by their span.
 * Fixed memory (histograms of the time spent at each height): feed a whole stream for a
 * file, or keep feeding a live session and read it when confident. Caller-owned; call
 * init. */
struct in_height_estimator {
    float skull_in_view_m[3]; /* the skull base in the headset's view frame */
    float floor_y_m;
    double recent_time_s[IN_HEIGHT_RECENT_MAX]; /* the last IN_HEIGHT_STILL_WINDOW_S */
    float recent_y_m[IN_HEIGHT_RECENT_MAX];
    int recent_first, recent_count;
    double last_time_s;
    bool started;
    float still_s[IN_HEIGHT_BINS]; /* seconds held still per skull height bin */
    float any_s[IN_HEIGHT_BINS];   /* seconds per skull height bin, still or not */
    double still_total_s, any_total_s;
    float tpose_grips_m; /* the widest grip-to-grip distance with both hands out at
                            shoulder height: a lower bound of the height */
    int frames;
};

/* `head_position_m` is the headset's position in the head joint's frame (body_desc
 * offsets; all zero means the default, 8 cm up and 9 cm forward of the skull base),
 * `floor_y_m` the floor's height in the tracking space. */
EMBODY_API void
in_height_estimator_init(struct in_height_estimator *estimator, const float *head_position_m,
                         float floor_y_m);

/* Adds a frame (frames without a usable headset, or going back in time, are skipped).
 * Returns true once the standing evidence is confident (IN_HEIGHT_CONFIDENT_STILL_S). */
EMBODY_API bool
in_height_estimator_add(struct in_height_estimator *estimator,
                        const struct em_tracking_frame *frame);

/* The estimate from what was added. Fails with a reason when no headset was seen or the
 * height would be outside [IN_HEIGHT_MIN_M, IN_HEIGHT_MAX_M] (the player was not
 * standing). `out_skull_m` (may be NULL) gets the standing skull base's height above the
 * floor the estimate used. */
EMBODY_API enum em_result
in_height_estimate(const struct in_height_estimator *estimator, float *out_height_m,
                   float *out_skull_m, struct em_error *err);

/* Reads the stream file at `path` and estimates from all of it (errors: the reader's, or
 * the estimate's prefixed with the path). */
EMBODY_API enum em_result
in_height_estimate_file(const char *path, const float *head_position_m, float floor_y_m,
                        float *out_height_m, float *out_skull_m, struct em_error *err);

#ifdef __cplusplus
}
#endif

#endif
