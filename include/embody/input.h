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

#include "embody/result.h"
#include "embody/tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

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

struct in_replay_desc {
    const char *path;         /* a 3-point stream file */
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
enum em_result
in_replay_create(const struct in_replay_desc *desc, struct in_source **out_source,
                 struct em_error *err);

/* The bundled demo: config/demo/demo.csv (found with u_path_find_data; a stream made from
 * CMU clip 14_14, see config/demo/README.md) replayed as above, looping, named "demo".
 * EM_ERROR_IO naming the places tried when it cannot be found. */
enum em_result
in_demo_create(bool as_fast_as_possible, struct in_source **out_source, struct em_error *err);

/* Path of the bundled demo stream (for messages and tools), or NULL if not found. The
 * string is static: valid until the next call. */
const char *
in_demo_path(void);

/* ---- The player's height from the headset ----------------------------------------- */

/* How long, from the first frame with a tracked headset, the estimate looks. */
#define IN_HEIGHT_WINDOW_S 3.0
#define IN_HEIGHT_MAX_SAMPLES 1024
/* The heights an estimate may give (those the live calibration accepts), metres. */
#define IN_HEIGHT_MIN_M 1.0f
#define IN_HEIGHT_MAX_M 2.5f

/* Estimates a standing height from the headset's height over the first seconds of
 * tracking, as the live calibration does from one moment: the eye height (the 90th
 * percentile of the headset's height above the floor over IN_HEIGHT_WINDOW_S, so a
 * moment of crouching or a jump does not decide), less the headset's height above the
 * skull base, over the skull base's share of standing height
 * (SK_HEAD_JOINT_HEIGHT_RATIO). Caller-owned; zero it or call init. */
struct in_height_estimator {
    float eye_m[IN_HEIGHT_MAX_SAMPLES];
    int count;
    bool started;
    double first_time_s;
};

void
in_height_estimator_init(struct in_height_estimator *estimator);

/* Adds a frame (frames without a usable headset are skipped). Returns true once the
 * window is full: further frames change nothing. */
bool
in_height_estimator_add(struct in_height_estimator *estimator,
                        const struct em_tracking_frame *frame);

/* The standing headset height in the tracking space (the 90th percentile of the heights
 * added), or NAN when nothing was added. */
float
in_height_standing_eye_y(const struct in_height_estimator *estimator);

/* The estimate, from what was added: `floor_y_m` is the floor's height in the tracking
 * space, `head_up_m` the headset's height above the skull base (body_desc offsets).
 * Fails with a reason when no headset was seen or the height would be outside
 * [IN_HEIGHT_MIN_M, IN_HEIGHT_MAX_M] (the player was not standing). `out_eye_m` (may be
 * NULL) gets the eye height used. */
enum em_result
in_height_estimate(const struct in_height_estimator *estimator, float floor_y_m, float head_up_m,
                   float *out_height_m, float *out_eye_m, struct em_error *err);

/* Reads the stream file at `path` and estimates from its first seconds (errors: the
 * reader's, or the estimate's prefixed with the path). */
enum em_result
in_height_estimate_file(const char *path, float floor_y_m, float head_up_m,
                        float *out_height_m, float *out_eye_m, struct em_error *err);

#ifdef __cplusplus
}
#endif

#endif
