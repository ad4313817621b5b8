/*
 * The layer's entry: negotiation with the loader (both Debian's 1.0.20 loader and 1.1.x
 * loaders offer interface version 1 and API versions 1.0.0 to 1.x: the layer asks for
 * interface 1 and API 1.0), xrCreateApiLayerInstance (the application's body-tracking
 * extensions are taken out of the list the runtime sees, when the runtime lacks them),
 * xrGetInstanceProcAddr (the layer's functions where it serves, the next layer's
 * otherwise: an application that does not ask for body tracking talks to the runtime
 * through the loader's own chain, untouched), and the instance and session records.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "layer/lyr_bd.h"
#include "layer/lyr_internal.h"
#include "util/u_log.h"

#define LYR_EXPORT __attribute__((visibility("default")))
#define MAX_EXTENSIONS 256

/* Frees a session out of the records: its lock first, so that a call still using it
 * (one that found it before it left the records) ends first. Its BD trackers are marked
 * dead before that lock, since a BD locate holds the BD table's and a BD tracker's lock
 * before it takes the session's (lyr_bd.c): taking the table's under the session's lock
 * could deadlock. */
static void
session_free(struct lyr_session *s)
{
    lyr_bd_session_end(s);
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < LYR_MAX_TRACKERS; ++i) {
        lyr_tracker_free(s->trackers[i]);
        s->trackers[i] = NULL;
    }
    lyr_input_destroy_spaces(s);
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static struct lyr_instance *
instance_new(void)
{
    struct lyr_instance *inst = calloc(1, sizeof *inst);
    if (inst)
        pthread_mutex_init(&inst->profiles_lock, NULL);
    return inst;
}

/* An instance never registered, or out of the records: nothing else uses it. */
static void
instance_delete(struct lyr_instance *inst)
{
    pthread_mutex_destroy(&inst->profiles_lock);
    free(inst);
}

static void
instance_free(struct lyr_instance *inst)
{
    for (int k = 0; k < LYR_MAX_SESSIONS; ++k) {
        if (inst->sessions[k])
            session_free(inst->sessions[k]);
        inst->sessions[k] = NULL;
    }
    lyr_settings_fini(&inst->settings);
    instance_delete(inst);
}

/* ---- Wrapped core functions ----------------------------------------------------------- */

static XrResult XRAPI_CALL
lyr_destroy_instance(XrInstance instance)
{
    struct lyr_instance *inst = lyr_instance_find(instance);
    if (!inst)
        return XR_ERROR_HANDLE_INVALID;
    lyr_instance_remove(inst);
    const PFN_xrDestroyInstance next_destroy = inst->next.destroy_instance;
    instance_free(inst); /* the layer's spaces first; its action set goes with the instance */
    return next_destroy(instance);
}

/* Takes the structure of type `type` out of an output chain (the layers below do not
 * know it: a validation layer would call it invalid); returns it, or NULL. */
static XrBaseOutStructure *
unlink_from_chain(XrBaseOutStructure *head, XrStructureType type, XrBaseOutStructure **out_prev)
{
    for (XrBaseOutStructure *prev = head; prev && prev->next; prev = prev->next) {
        if (prev->next->type == type) {
            XrBaseOutStructure *found = prev->next;
            prev->next = found->next;
            *out_prev = prev;
            return found;
        }
    }
    return NULL;
}

static void
relink(XrBaseOutStructure *prev, XrBaseOutStructure *found)
{
    if (found) {
        found->next = prev->next;
        prev->next = found;
    }
}

static XrResult XRAPI_CALL
lyr_get_system_properties(XrInstance instance, XrSystemId system, XrSystemProperties *properties)
{
    struct lyr_instance *inst = lyr_instance_find(instance);
    if (!inst)
        return XR_ERROR_HANDLE_INVALID;
    if (!properties)
        return inst->next.get_system_properties(instance, system, properties);
    XrBaseOutStructure *head = (XrBaseOutStructure *)properties;
    XrBaseOutStructure *fb_prev = NULL, *meta_prev = NULL;
    XrBaseOutStructure *fb =
        unlink_from_chain(head, XR_TYPE_SYSTEM_BODY_TRACKING_PROPERTIES_FB, &fb_prev);
    XrBaseOutStructure *meta =
        unlink_from_chain(head, XR_TYPE_SYSTEM_PROPERTIES_BODY_TRACKING_FULL_BODY_META, &meta_prev);
    XrBaseOutStructure *bd_prev = NULL;
    XrBaseOutStructure *bd =
        unlink_from_chain(head, XR_TYPE_SYSTEM_BODY_TRACKING_PROPERTIES_BD, &bd_prev);
    const XrResult r = inst->next.get_system_properties(instance, system, properties);
    relink(bd_prev, bd); /* in the reverse order of unlinking */
    relink(meta_prev, meta);
    relink(fb_prev, fb);
    if (XR_FAILED(r))
        return r;
    if (fb)
        ((XrSystemBodyTrackingPropertiesFB *)fb)->supportsBodyTracking = XR_TRUE;
    if (bd)
        ((XrSystemBodyTrackingPropertiesBD *)bd)->supportsBodyTracking = XR_TRUE;
    if (meta)
        ((XrSystemPropertiesBodyTrackingFullBodyMETA *)meta)->supportsFullBodyTracking =
            inst->full_body ? XR_TRUE : XR_FALSE;
    return r;
}

static XrResult XRAPI_CALL
lyr_create_session(XrInstance instance, const XrSessionCreateInfo *info, XrSession *out_session)
{
    struct lyr_instance *inst = lyr_instance_find(instance);
    if (!inst)
        return XR_ERROR_HANDLE_INVALID;
    const XrResult r = inst->next.create_session(instance, info, out_session);
    if (XR_FAILED(r))
        return r;
    struct lyr_session *s = calloc(1, sizeof *s);
    if (s) {
        s->instance = inst;
        s->handle = *out_session;
        s->state = XR_SESSION_STATE_IDLE;
        pthread_mutex_init(&s->lock, NULL);
    }
    if (!s || !lyr_session_add(inst, s)) {
        /* Not served: the session works, body trackers on it are refused. */
        if (s)
            pthread_mutex_destroy(&s->lock);
        free(s);
        U_LOG_W("openxr layer: too many sessions; body tracking is off for this one");
    }
    return r;
}

static XrResult XRAPI_CALL
lyr_destroy_session(XrSession session)
{
    struct lyr_session *s = lyr_session_take(session);
    const struct lyr_next *next = s ? NULL : lyr_any_next();
    if (!s)
        return next ? next->destroy_session(session) : XR_ERROR_HANDLE_INVALID;
    struct lyr_instance *inst = s->instance;
    session_free(s);
    return inst->next.destroy_session(session);
}

static XrResult XRAPI_CALL
lyr_suggest_bindings(XrInstance instance, const XrInteractionProfileSuggestedBinding *suggested)
{
    struct lyr_instance *inst = lyr_instance_find(instance);
    if (!inst)
        return XR_ERROR_HANDLE_INVALID;
    return lyr_input_suggest(inst, suggested);
}

static XrResult XRAPI_CALL
lyr_attach_action_sets(XrSession session, const XrSessionActionSetsAttachInfo *info)
{
    struct lyr_session *s = lyr_session_lock(session);
    const struct lyr_next *next = s ? NULL : lyr_any_next();
    if (!s)
        return next ? next->attach_action_sets(session, info) : XR_ERROR_HANDLE_INVALID;
    const XrResult r = lyr_input_attach(s, info);
    lyr_session_unlock(s);
    return r;
}

static XrResult XRAPI_CALL
lyr_sync_actions(XrSession session, const XrActionsSyncInfo *info)
{
    struct lyr_session *s = lyr_session_lock(session);
    const struct lyr_next *next = s ? &s->instance->next : lyr_any_next();
    if (!next)
        return XR_ERROR_HANDLE_INVALID;
    /* The runtime's sync runs outside the session's lock: a render thread's locate does
     * not wait for it. */
    struct lyr_sync_buffer buffer;
    const XrActionsSyncInfo *down = info;
    if (s) {
        down = lyr_input_sync_info(s, info, &buffer);
        lyr_session_unlock(s);
    }
    return next->sync_actions(session, down);
}

/* Session states, interaction profile changes and recentring, as the application reads
 * its events. */
static XrResult XRAPI_CALL
lyr_poll_event(XrInstance instance, XrEventDataBuffer *event)
{
    struct lyr_instance *inst = lyr_instance_find(instance);
    if (!inst)
        return XR_ERROR_HANDLE_INVALID;
    XrResult r = inst->next.poll_event(instance, event);
    /* Tracker connections the application did not ask to hear of (the layer enabled the
     * extension for itself) are not passed on. */
    while (r == XR_SUCCESS && !inst->app_trackers &&
           event->type == XR_TYPE_EVENT_DATA_VIVE_TRACKER_CONNECTED_HTCX) {
        *event = (XrEventDataBuffer){.type = XR_TYPE_EVENT_DATA_BUFFER};
        r = inst->next.poll_event(instance, event);
    }
    if (r != XR_SUCCESS)
        return r;
    if (event->type == XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED) {
        const XrEventDataSessionStateChanged *ev = (const XrEventDataSessionStateChanged *)event;
        struct lyr_session *s = lyr_session_lock(ev->session);
        if (s) {
            s->state = ev->state;
            lyr_session_unlock(s);
        }
    } else if (event->type == XR_TYPE_EVENT_DATA_INTERACTION_PROFILE_CHANGED) {
        const XrEventDataInteractionProfileChanged *ev =
            (const XrEventDataInteractionProfileChanged *)event;
        struct lyr_session *s = lyr_session_lock(ev->session);
        if (s) {
            s->profiles_known = false; /* read again at the next finger read */
            lyr_session_unlock(s);
        }
    } else if (event->type == XR_TYPE_EVENT_DATA_REFERENCE_SPACE_CHANGE_PENDING) {
        const XrEventDataReferenceSpaceChangePending *ev =
            (const XrEventDataReferenceSpaceChangePending *)event;
        struct lyr_session *s = lyr_session_lock(ev->session);
        if (s) {
            lyr_trackers_recalibrate(s);
            lyr_session_unlock(s);
        }
    }
    return r;
}

/* ---- xrGetInstanceProcAddr -------------------------------------------------------------- */

static XrResult XRAPI_CALL lyr_get_instance_proc_addr(XrInstance instance, const char *name,
                                                      PFN_xrVoidFunction *function);

struct lyr_function {
    const char *name;
    PFN_xrVoidFunction function;
};

#define LYR_FN(name, fn)                                                                           \
    {                                                                                              \
        name, (PFN_xrVoidFunction)(fn)                                                             \
    }

/* What the layer answers when it serves body tracking. */
static const struct lyr_function k_served[] = {
    LYR_FN("xrGetSystemProperties", lyr_get_system_properties),
    LYR_FN("xrCreateSession", lyr_create_session),
    LYR_FN("xrDestroySession", lyr_destroy_session),
    LYR_FN("xrSuggestInteractionProfileBindings", lyr_suggest_bindings),
    LYR_FN("xrAttachSessionActionSets", lyr_attach_action_sets),
    LYR_FN("xrSyncActions", lyr_sync_actions),
    LYR_FN("xrPollEvent", lyr_poll_event),
    LYR_FN("xrCreateBodyTrackerFB", lyr_create_body_tracker),
    LYR_FN("xrDestroyBodyTrackerFB", lyr_destroy_body_tracker),
    LYR_FN("xrLocateBodyJointsFB", lyr_locate_body_joints),
    LYR_FN("xrGetBodySkeletonFB", lyr_get_body_skeleton),
    LYR_FN("xrCreateBodyTrackerBD", lyr_create_body_tracker_bd),
    LYR_FN("xrDestroyBodyTrackerBD", lyr_destroy_body_tracker_bd),
    LYR_FN("xrLocateBodyJointsBD", lyr_locate_body_joints_bd),
};

static XrResult XRAPI_CALL
lyr_get_instance_proc_addr(XrInstance instance, const char *name, PFN_xrVoidFunction *function)
{
    if (!name || !function)
        return XR_ERROR_VALIDATION_FAILURE;
    *function = NULL;
    if (strcmp(name, "xrGetInstanceProcAddr") == 0) {
        *function = (PFN_xrVoidFunction)lyr_get_instance_proc_addr;
        return XR_SUCCESS;
    }
    struct lyr_instance *inst = instance ? lyr_instance_find(instance) : NULL;
    if (!inst)
        return XR_ERROR_HANDLE_INVALID;
    if (strcmp(name, "xrDestroyInstance") == 0) {
        *function = (PFN_xrVoidFunction)lyr_destroy_instance;
        return XR_SUCCESS;
    }
    if (inst->serving) {
        for (size_t i = 0; i < sizeof k_served / sizeof k_served[0]; ++i) {
            if (strcmp(k_served[i].name, name) == 0) {
                *function = k_served[i].function;
                return XR_SUCCESS;
            }
        }
    }
    return inst->next.get_instance_proc_addr(instance, name, function);
}

/* ---- Instance creation ------------------------------------------------------------------ */

static bool
requested(const XrInstanceCreateInfo *info, const char *extension)
{
    for (uint32_t i = 0; i < info->enabledExtensionCount; ++i)
        if (info->enabledExtensionNames[i] &&
            strcmp(info->enabledExtensionNames[i], extension) == 0)
            return true;
    return false;
}

/* True when the layers below (in the end the runtime) offer `extension` themselves. Asked
 * with the instance made (a validation layer below refuses a null instance here). */
static bool
offered_below(PFN_xrGetInstanceProcAddr next_gipa, XrInstance instance, const char *extension)
{
    PFN_xrEnumerateInstanceExtensionProperties enumerate = NULL;
    if (XR_FAILED(next_gipa(instance, "xrEnumerateInstanceExtensionProperties",
                            (PFN_xrVoidFunction *)&enumerate)) ||
        !enumerate)
        return false;
    uint32_t count = 0;
    if (XR_FAILED(enumerate(NULL, 0, &count, NULL)) || count == 0 || count > MAX_EXTENSIONS)
        return false;
    XrExtensionProperties *props = calloc(count, sizeof *props);
    if (!props)
        return false;
    for (uint32_t i = 0; i < count; ++i)
        props[i].type = XR_TYPE_EXTENSION_PROPERTIES;
    bool found = false;
    if (XR_SUCCEEDED(enumerate(NULL, count, &count, props)))
        for (uint32_t i = 0; i < count && !found; ++i)
            found = strcmp(props[i].extensionName, extension) == 0;
    free(props);
    return found;
}

static bool
is_ours(const char *extension)
{
    return strcmp(extension, XR_FB_BODY_TRACKING_EXTENSION_NAME) == 0 ||
           strcmp(extension, XR_META_BODY_TRACKING_FULL_BODY_EXTENSION_NAME) == 0 ||
           strcmp(extension, XR_BD_BODY_TRACKING_EXTENSION_NAME) == 0;
}

#define NEXT_FN(inst, gipa, field, name)                                                           \
    ok = ok &&                                                                                     \
         XR_SUCCEEDED(gipa((inst)->handle, name, (PFN_xrVoidFunction *)&(inst)->next.field)) &&    \
         (inst)->next.field != NULL

#define NEXT_HAND_FN(field, name)                                                                  \
    hands = hands &&                                                                               \
            XR_SUCCEEDED(gipa(inst->handle, name, (PFN_xrVoidFunction *)&inst->next.field)) &&    \
            inst->next.field != NULL

static bool
load_next(struct lyr_instance *inst, PFN_xrGetInstanceProcAddr gipa)
{
    bool ok = true;
    inst->next.get_instance_proc_addr = gipa;
    NEXT_FN(inst, gipa, destroy_instance, "xrDestroyInstance");
    NEXT_FN(inst, gipa, get_system_properties, "xrGetSystemProperties");
    NEXT_FN(inst, gipa, poll_event, "xrPollEvent");
    NEXT_FN(inst, gipa, string_to_path, "xrStringToPath");
    NEXT_FN(inst, gipa, create_session, "xrCreateSession");
    NEXT_FN(inst, gipa, destroy_session, "xrDestroySession");
    NEXT_FN(inst, gipa, create_action_set, "xrCreateActionSet");
    NEXT_FN(inst, gipa, destroy_action_set, "xrDestroyActionSet");
    NEXT_FN(inst, gipa, create_action, "xrCreateAction");
    NEXT_FN(inst, gipa, suggest_bindings, "xrSuggestInteractionProfileBindings");
    NEXT_FN(inst, gipa, attach_action_sets, "xrAttachSessionActionSets");
    NEXT_FN(inst, gipa, sync_actions, "xrSyncActions");
    NEXT_FN(inst, gipa, enumerate_reference_spaces, "xrEnumerateReferenceSpaces");
    NEXT_FN(inst, gipa, create_reference_space, "xrCreateReferenceSpace");
    NEXT_FN(inst, gipa, create_action_space, "xrCreateActionSpace");
    NEXT_FN(inst, gipa, destroy_space, "xrDestroySpace");
    NEXT_FN(inst, gipa, locate_space, "xrLocateSpace");
    NEXT_FN(inst, gipa, get_action_state_float, "xrGetActionStateFloat");
    NEXT_FN(inst, gipa, get_action_state_boolean, "xrGetActionStateBoolean");
    NEXT_FN(inst, gipa, get_current_interaction_profile, "xrGetCurrentInteractionProfile");
    if (inst->hands) { /* optional: without them the layer keeps the relaxed hand */
        bool hands = true;
        NEXT_HAND_FN(create_hand_tracker, "xrCreateHandTrackerEXT");
        NEXT_HAND_FN(destroy_hand_tracker, "xrDestroyHandTrackerEXT");
        NEXT_HAND_FN(locate_hand_joints, "xrLocateHandJointsEXT");
        inst->hands = hands;
    }
    return ok;
}

static bool
env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] && strcmp(v, "0") != 0;
}

/* The loader's information for this layer, as the loader interface says it comes. */
static bool
layer_info_usable(const XrApiLayerCreateInfo *layer_info)
{
    const XrApiLayerNextInfo *next = layer_info->nextInfo;
    return layer_info->structType == XR_LOADER_INTERFACE_STRUCT_API_LAYER_CREATE_INFO && next &&
           next->structType == XR_LOADER_INTERFACE_STRUCT_API_LAYER_NEXT_INFO &&
           strcmp(next->layerName, LYR_LAYER_NAME) == 0 && next->nextGetInstanceProcAddr &&
           next->nextCreateApiLayerInstance;
}

/* What the application asks for, and what the layer makes of it. */
struct layer_request {
    bool fb, meta, bd; /* the body tracking extensions asked for */
    bool serving;      /* the layer answers them */
    bool app_trackers; /* XR_HTCX_vive_tracker_interaction asked for */
    bool trackers;     /* the instance below has it (asked for, or added for the layer) */
    bool app_hands;    /* XR_EXT_hand_tracking asked for */
    bool hands;        /* the instance below has it (asked for, or added for the layer) */
};

/* The instance below. Serve when the application asks for body tracking and the runtime
 * cannot give it (or EMBODY_LAYER_OVERRIDE says to serve anyway): the instance is made
 * without the extensions; if the runtime turns out to have them, it is made again as the
 * application asked (no longer serving). Else, where it has body trackers the
 * application did not ask for, made again with them, for the layer's own use. */
static XrResult
create_below(const XrInstanceCreateInfo *info, const XrApiLayerCreateInfo *layer_info,
             struct layer_request *q, XrInstance *out_instance)
{
    const XrApiLayerNextInfo *mine = layer_info->nextInfo;
    const char *names[MAX_EXTENSIONS];
    uint32_t count = 0;
    for (uint32_t i = 0; i < info->enabledExtensionCount; ++i)
        if (!q->serving || !is_ours(info->enabledExtensionNames[i]))
            names[count++] = info->enabledExtensionNames[i];
    XrInstanceCreateInfo below = *info;
    below.enabledExtensionCount = count;
    below.enabledExtensionNames = count ? names : NULL;
    XrApiLayerCreateInfo next_info = *layer_info;
    next_info.nextInfo = mine->next;
    XrResult r = mine->nextCreateApiLayerInstance(&below, &next_info, out_instance);
    if (XR_FAILED(r) || !q->serving)
        return r;
    const PFN_xrGetInstanceProcAddr gipa = mine->nextGetInstanceProcAddr;
    const bool has_body = !env_flag("EMBODY_LAYER_OVERRIDE") &&
                          offered_below(gipa, *out_instance,
                                        q->fb || q->meta ? XR_FB_BODY_TRACKING_EXTENSION_NAME
                                                         : XR_BD_BODY_TRACKING_EXTENSION_NAME);
    const bool add_trackers =
        !has_body && !q->app_trackers && count < MAX_EXTENSIONS &&
        offered_below(gipa, *out_instance, XR_HTCX_VIVE_TRACKER_INTERACTION_EXTENSION_NAME);
    const bool hands_below =
        !has_body && offered_below(gipa, *out_instance, XR_EXT_HAND_TRACKING_EXTENSION_NAME);
    q->hands = hands_below && q->app_hands;
    const bool add_hands = hands_below && !q->app_hands && count + 1 < MAX_EXTENSIONS;
    PFN_xrDestroyInstance destroy = NULL;
    if (!(has_body || add_trackers || add_hands) ||
        XR_FAILED(gipa(*out_instance, "xrDestroyInstance", (PFN_xrVoidFunction *)&destroy)) ||
        !destroy)
        return r;
    destroy(*out_instance);
    if (has_body) {
        q->serving = false;
        return mine->nextCreateApiLayerInstance(info, &next_info, out_instance);
    }
    if (add_trackers) {
        names[count++] = XR_HTCX_VIVE_TRACKER_INTERACTION_EXTENSION_NAME;
        q->trackers = true;
    }
    if (add_hands) {
        names[count++] = XR_EXT_HAND_TRACKING_EXTENSION_NAME;
        q->hands = true;
    }
    below.enabledExtensionCount = count;
    below.enabledExtensionNames = names;
    return mine->nextCreateApiLayerInstance(&below, &next_info, out_instance);
}

/* The layer's part of an instance made below: the functions below it and, when serving,
 * the body's settings and the layer's input; then it is recorded. */
static XrResult
set_up(struct lyr_instance *inst, PFN_xrGetInstanceProcAddr gipa)
{
    if (!load_next(inst, gipa)) {
        U_LOG_E("openxr layer: the layer below lacks core functions");
        return XR_ERROR_INITIALIZATION_FAILED;
    }
    if (inst->serving &&
        (!lyr_settings_load(&inst->settings) || XR_FAILED(lyr_input_create(inst)))) {
        /* The application asked for an extension it was offered: without the body it
         * cannot be given, so the instance is refused rather than half served. */
        U_LOG_E("openxr layer: cannot serve body tracking (see above)");
        return XR_ERROR_INITIALIZATION_FAILED;
    }
    if (!lyr_instance_add(inst))
        return XR_ERROR_LIMIT_REACHED;
    return XR_SUCCESS;
}

/* An instance that failed to be made or set up: the instance below destroyed (if it was
 * made), the layer's record freed. */
static void
abandon(struct lyr_instance *inst)
{
    if (inst->handle != XR_NULL_HANDLE && inst->next.destroy_instance)
        inst->next.destroy_instance(inst->handle);
    instance_free(inst);
}

static XrResult XRAPI_CALL
lyr_create_api_layer_instance(const XrInstanceCreateInfo *info,
                              const XrApiLayerCreateInfo *layer_info, XrInstance *out_instance)
{
    if (!info || !layer_info || !out_instance || !layer_info_usable(layer_info))
        return XR_ERROR_INITIALIZATION_FAILED;
    if (info->enabledExtensionCount > MAX_EXTENSIONS)
        return XR_ERROR_LIMIT_REACHED;
    struct layer_request q = {
        .fb = requested(info, XR_FB_BODY_TRACKING_EXTENSION_NAME),
        .meta = requested(info, XR_META_BODY_TRACKING_FULL_BODY_EXTENSION_NAME),
        .bd = requested(info, XR_BD_BODY_TRACKING_EXTENSION_NAME),
        .app_trackers = requested(info, XR_HTCX_VIVE_TRACKER_INTERACTION_EXTENSION_NAME),
        .app_hands = requested(info, XR_EXT_HAND_TRACKING_EXTENSION_NAME),
    };
    q.serving = q.fb || q.meta || q.bd;
    q.trackers = q.app_trackers;
    struct lyr_instance *inst = instance_new();
    if (!inst)
        return XR_ERROR_OUT_OF_MEMORY;
    const XrResult made = create_below(info, layer_info, &q, out_instance);
    XrResult r = made;
    if (XR_SUCCEEDED(r)) {
        inst->handle = *out_instance;
        inst->serving = q.serving;
        inst->full_body = q.serving && (q.meta || q.bd); /* a BD tracker stands on the full body */
        inst->trackers = q.serving && q.trackers;
        inst->app_trackers = q.app_trackers;
        inst->hands = q.serving && q.hands;
        r = set_up(inst, layer_info->nextInfo->nextGetInstanceProcAddr);
    }
    if (XR_FAILED(r)) {
        abandon(inst);
        return r;
    }
    if (q.serving)
        U_LOG_I("openxr layer: serving %s%s%s", XR_FB_BODY_TRACKING_EXTENSION_NAME,
                q.meta ? " and " XR_META_BODY_TRACKING_FULL_BODY_EXTENSION_NAME : "",
                q.bd ? " and " XR_BD_BODY_TRACKING_EXTENSION_NAME : "");
    return made;
}

/* ---- Negotiation --------------------------------------------------------------------- */

LYR_EXPORT XrResult XRAPI_CALL
xrNegotiateLoaderApiLayerInterface(const XrNegotiateLoaderInfo *loader_info, const char *layer_name,
                                   XrNegotiateApiLayerRequest *request);

LYR_EXPORT XrResult XRAPI_CALL
xrNegotiateLoaderApiLayerInterface(const XrNegotiateLoaderInfo *loader_info, const char *layer_name,
                                   XrNegotiateApiLayerRequest *request)
{
    const XrVersion api = XR_MAKE_VERSION(1, 0, 0);
    if (!loader_info || !request || (layer_name && strcmp(layer_name, LYR_LAYER_NAME) != 0) ||
        loader_info->structType != XR_LOADER_INTERFACE_STRUCT_LOADER_INFO ||
        loader_info->structVersion != XR_LOADER_INFO_STRUCT_VERSION ||
        loader_info->structSize != sizeof *loader_info ||
        request->structType != XR_LOADER_INTERFACE_STRUCT_API_LAYER_REQUEST ||
        request->structVersion != XR_API_LAYER_INFO_STRUCT_VERSION ||
        request->structSize != sizeof *request ||
        loader_info->minInterfaceVersion > XR_CURRENT_LOADER_API_LAYER_VERSION ||
        loader_info->maxInterfaceVersion < XR_CURRENT_LOADER_API_LAYER_VERSION ||
        loader_info->minApiVersion > api || loader_info->maxApiVersion < api)
        return XR_ERROR_INITIALIZATION_FAILED;
    request->layerInterfaceVersion = XR_CURRENT_LOADER_API_LAYER_VERSION;
    request->layerApiVersion = api;
    request->getInstanceProcAddr = lyr_get_instance_proc_addr;
    request->createApiLayerInstance = lyr_create_api_layer_instance;
    return XR_SUCCESS;
}
