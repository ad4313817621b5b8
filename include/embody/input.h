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

struct in_replay_desc {
    const char *path;      /* a 3-point stream file */
    bool as_fast_as_possible; /* false: frames come at the file's pace in real time */
    bool loop;             /* start again at the end instead of ending */
    const char *name;      /* the source's name; default "replay" */
};

/* Loads the whole file (errors name its line) and returns a source that plays it. The
 * frames come out exactly as stored, except that on a loop the time keeps increasing. */
enum em_result
in_replay_create(const struct in_replay_desc *desc, struct in_source **out_source,
                 struct em_error *err);

/* The bundled demo: the stream shipped in config/demo/ played in real time, looping. */
enum em_result
in_demo_create(bool as_fast_as_possible, struct in_source **out_source, struct em_error *err);

/* Path of the bundled demo stream (for messages and tools), or NULL if not found. */
const char *
in_demo_path(void);

#ifdef __cplusplus
}
#endif

#endif
