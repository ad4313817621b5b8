/*
 * A source with faults (src/fault/fault.h): the frames of any other source (a replayed
 * recording, VMC input, OpenXR) with a set of faults applied, so the live program shows
 * what a drifting, late or lost tracker does to the body.
 */
#include <stdlib.h>

#include "fault/fault.h"

struct fault_source {
    struct in_source base;
    struct in_source *inner;
    struct flt_state *state;
};

static enum em_result
fault_next(struct in_source *src, struct em_tracking_frame *out_frame)
{
    struct fault_source *s = (struct fault_source *)src;
    const enum em_result r = in_source_next(s->inner, out_frame);
    if (r == EM_OK)
        flt_state_apply(s->state, out_frame);
    return r;
}

static enum em_result
fault_submit(struct in_source *src)
{
    return in_source_submit(((struct fault_source *)src)->inner);
}

static void
fault_set_paused(struct in_source *src, bool paused)
{
    in_source_set_paused(((struct fault_source *)src)->inner, paused);
}

static void
fault_destroy(struct in_source *src)
{
    struct fault_source *s = (struct fault_source *)src;
    in_source_destroy(&s->inner);
    flt_state_destroy(&s->state);
    free(s);
}

enum em_result
flt_source_create(struct in_source *inner, const struct flt_set *set, struct in_source **out_source,
                  struct em_error *err)
{
    *out_source = NULL;
    struct fault_source *s = calloc(1, sizeof *s);
    if (!s)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "faults: out of memory");
    const enum em_result r = flt_state_create(set, &s->state, err);
    if (r != EM_OK) {
        free(s);
        return r;
    }
    s->inner = inner;
    s->base.name = inner->name; /* the source is still the replay, the headset, ... */
    s->base.next = fault_next;
    s->base.submit = fault_submit;
    s->base.set_paused = in_source_can_pause(inner) ? fault_set_paused : NULL;
    s->base.destroy = fault_destroy;
    *out_source = &s->base;
    return EM_OK;
}
