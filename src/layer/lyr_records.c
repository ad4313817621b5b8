/*
 * The layer's records of live instances and their sessions, found by handle from any
 * thread. Below every other file of the layer: it calls none of them.
 *
 * Locks: g_lock guards the records; each session's own lock guards everything of the
 * session (its trackers, spaces, flags) and is held for the whole of a call that uses it.
 * A session is taken while g_lock is still held (g_lock, then the session's lock: never
 * the other way round), so a session out of the records can be held by at most the one
 * call that had it already, which its destruction waits for (session_free, lyr_layer.c).
 */
#include <pthread.h>
#include <stddef.h>

#include "layer/lyr_internal.h"

#define MAX_INSTANCES 4

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lyr_instance *g_instances[MAX_INSTANCES];

bool
lyr_instance_add(struct lyr_instance *inst)
{
    bool added = false;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_INSTANCES && !added; ++i)
        if (!g_instances[i]) {
            g_instances[i] = inst;
            added = true;
        }
    pthread_mutex_unlock(&g_lock);
    return added;
}

void
lyr_instance_remove(const struct lyr_instance *inst)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_INSTANCES; ++i)
        if (g_instances[i] == inst)
            g_instances[i] = NULL;
    pthread_mutex_unlock(&g_lock);
}

bool
lyr_session_add(struct lyr_instance *inst, struct lyr_session *s)
{
    bool added = false;
    pthread_mutex_lock(&g_lock);
    for (int k = 0; k < LYR_MAX_SESSIONS && !added; ++k)
        if (!inst->sessions[k]) {
            inst->sessions[k] = s;
            added = true;
        }
    pthread_mutex_unlock(&g_lock);
    return added;
}

/* The session of `handle` (g_lock held), or NULL. */
static struct lyr_session *
session_find(XrSession handle)
{
    for (int i = 0; i < MAX_INSTANCES; ++i) {
        if (!g_instances[i])
            continue;
        for (int k = 0; k < LYR_MAX_SESSIONS; ++k) {
            struct lyr_session *s = g_instances[i]->sessions[k];
            if (s && s->handle == handle)
                return s;
        }
    }
    return NULL;
}

struct lyr_session *
lyr_session_take(XrSession handle)
{
    if (handle == XR_NULL_HANDLE)
        return NULL;
    pthread_mutex_lock(&g_lock);
    struct lyr_session *s = session_find(handle);
    if (s)
        for (int k = 0; k < LYR_MAX_SESSIONS; ++k)
            if (s->instance->sessions[k] == s)
                s->instance->sessions[k] = NULL;
    pthread_mutex_unlock(&g_lock);
    return s;
}

struct lyr_session *
lyr_session_lock(XrSession handle)
{
    if (handle == XR_NULL_HANDLE)
        return NULL;
    pthread_mutex_lock(&g_lock);
    struct lyr_session *s = session_find(handle);
    if (s)
        pthread_mutex_lock(&s->lock);
    pthread_mutex_unlock(&g_lock);
    return s;
}

struct lyr_session *
lyr_tracker_lock(XrBodyTrackerFB handle, struct lyr_tracker **out_tracker)
{
    *out_tracker = NULL;
    if (handle == XR_NULL_HANDLE)
        return NULL;
    struct lyr_session *found = NULL;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_INSTANCES && !found; ++i) {
        for (int k = 0; g_instances[i] && k < LYR_MAX_SESSIONS && !found; ++k) {
            struct lyr_session *s = g_instances[i]->sessions[k];
            if (!s)
                continue;
            pthread_mutex_lock(&s->lock);
            for (int j = 0; j < LYR_MAX_TRACKERS && !found; ++j)
                if (s->trackers[j] && (XrBodyTrackerFB)s->trackers[j] == handle) {
                    found = s;
                    *out_tracker = s->trackers[j];
                }
            if (!found)
                pthread_mutex_unlock(&s->lock);
        }
    }
    pthread_mutex_unlock(&g_lock);
    return found;
}

void
lyr_session_unlock(struct lyr_session *s)
{
    pthread_mutex_unlock(&s->lock);
}

struct lyr_instance *
lyr_instance_find(XrInstance handle)
{
    struct lyr_instance *found = NULL;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_INSTANCES && !found; ++i)
        if (g_instances[i] && g_instances[i]->handle == handle)
            found = g_instances[i];
    pthread_mutex_unlock(&g_lock);
    return found;
}

/* The layer below of some live instance, for a session the layer keeps no record of (one
 * past LYR_MAX_SESSIONS, or not a session at all): the call goes down as it came, and
 * what is below answers it. NULL when there is no instance. */
const struct lyr_next *
lyr_any_next(void)
{
    const struct lyr_next *next = NULL;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_INSTANCES && !next; ++i)
        if (g_instances[i])
            next = &g_instances[i]->next;
    pthread_mutex_unlock(&g_lock);
    return next;
}
