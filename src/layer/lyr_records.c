/*
 * The layer's records of live instances and their sessions, found by handle from any
 * thread (one lock). Below every other file of the layer: it calls none of them.
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

void
lyr_session_add(struct lyr_instance *inst, int slot, struct lyr_session *s)
{
    pthread_mutex_lock(&g_lock);
    inst->sessions[slot] = s;
    pthread_mutex_unlock(&g_lock);
}

void
lyr_session_remove(struct lyr_instance *inst, const struct lyr_session *s)
{
    pthread_mutex_lock(&g_lock);
    for (int k = 0; k < LYR_MAX_SESSIONS; ++k)
        if (inst->sessions[k] == s)
            inst->sessions[k] = NULL;
    pthread_mutex_unlock(&g_lock);
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

struct lyr_session *
lyr_session_find(XrSession handle)
{
    struct lyr_session *found = NULL;
    if (handle == XR_NULL_HANDLE)
        return NULL;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_INSTANCES && !found; ++i) {
        if (!g_instances[i])
            continue;
        for (int k = 0; k < LYR_MAX_SESSIONS && !found; ++k) {
            struct lyr_session *s = g_instances[i]->sessions[k];
            if (s && s->handle == handle)
                found = s;
        }
    }
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
