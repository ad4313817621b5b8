/*
 * The test runtime's sessions: creation (OpenGL or headless), the session state machine
 * as the specification describes it (IDLE -> READY -> begin -> SYNCHRONIZED -> VISIBLE
 * -> FOCUSED, STOPPING -> end -> IDLE -> READY or EXITING, LOSS_PENDING), the frame
 * calls with their order checked, the views, and the check of submitted layers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_runtime.h"

#define TR_FRAME_PERIOD_NS 16666667
#define TR_HALF_IPD_M 0.032f

struct tr_session *
tr_current_session(void)
{
    for (int i = 0; i < tr.object_count; ++i) {
        if (tr.objects[i]->kind == TR_KIND_SESSION)
            return (struct tr_session *)tr.objects[i];
    }
    return NULL;
}

XrResult
tr_session_check(XrSession handle, struct tr_session **out)
{
    struct tr_session *s = tr_lookup(handle, TR_KIND_SESSION);
    if (!s)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "invalid XrSession %p", (void *)handle);
    if (out)
        *out = s;
    if (tr.instance_lost)
        return XR_ERROR_INSTANCE_LOST;
    return s->lost ? XR_ERROR_SESSION_LOST : XR_SUCCESS;
}

void
tr_session_queue_state(struct tr_session *s, XrSessionState state)
{
    s->state = state;
    XrEventDataSessionStateChanged ev = {.type = XR_TYPE_EVENT_DATA_SESSION_STATE_CHANGED,
                                         .session = (XrSession)s,
                                         .state = state,
                                         .time = tr_frame_time(tr.frame)};
    tr_queue_event(&ev, sizeof ev);
}

/* After begin (headless) or the first frame: the compositor shows the application. */
static void
synchronize(struct tr_session *s)
{
    if (s->state != XR_SESSION_STATE_READY)
        return;
    tr_session_queue_state(s, XR_SESSION_STATE_SYNCHRONIZED);
    tr_session_queue_state(s, XR_SESSION_STATE_VISIBLE);
    if (!tr.script.manual_focus)
        tr_session_queue_state(s, XR_SESSION_STATE_FOCUSED);
}

void
tr_session_scripted(enum tr_event_kind kind)
{
    struct tr_session *s = tr_current_session();
    if (!s)
        return;
    switch (kind) {
    case TR_EV_STOP:
        if (s->running && s->state != XR_SESSION_STATE_STOPPING)
            tr_session_queue_state(s, XR_SESSION_STATE_STOPPING);
        break;
    case TR_EV_EXIT:
        s->exit_pending = true;
        if (s->running) {
            if (s->state != XR_SESSION_STATE_STOPPING)
                tr_session_queue_state(s, XR_SESSION_STATE_STOPPING);
        } else {
            if (s->state != XR_SESSION_STATE_IDLE)
                tr_session_queue_state(s, XR_SESSION_STATE_IDLE);
            tr_session_queue_state(s, XR_SESSION_STATE_EXITING);
        }
        break;
    case TR_EV_RECENTER: {
        XrEventDataReferenceSpaceChangePending ev = {
            .type = XR_TYPE_EVENT_DATA_REFERENCE_SPACE_CHANGE_PENDING,
            .session = (XrSession)s,
            .referenceSpaceType = XR_REFERENCE_SPACE_TYPE_STAGE,
            .changeTime = tr_frame_time(tr.frame),
            .poseValid = XR_TRUE,
            .poseInPreviousSpace = {.orientation.w = 1.0f}};
        tr_queue_event(&ev, sizeof ev);
        break;
    }
    case TR_EV_FOCUS:
        if (s->state == XR_SESSION_STATE_VISIBLE)
            tr_session_queue_state(s, XR_SESSION_STATE_FOCUSED);
        break;
    case TR_EV_UNFOCUS:
        if (s->state == XR_SESSION_STATE_FOCUSED)
            tr_session_queue_state(s, XR_SESSION_STATE_VISIBLE);
        break;
    case TR_EV_SESSION_LOSS:
    case TR_EV_SESSION_LOST:
        tr_session_queue_state(s, XR_SESSION_STATE_LOSS_PENDING);
        tr.system_unavailable_left = tr.script.system_unavailable;
        s->lost = kind == TR_EV_SESSION_LOST;
        break;
    default:
        break;
    }
}

/* ---- Life ------------------------------------------------------------------------- */

static XrResult XRAPI_CALL
tr_create_session(XrInstance handle, const XrSessionCreateInfo *info, XrSession *out)
{
    TR_LOCKED();
    struct tr_instance *inst = NULL;
    XrResult r = tr_instance_check(handle, &inst);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_SESSION_CREATE_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrCreateSession: bad info");
    if (info->systemId != TR_SYSTEM_ID)
        return tr_violation(XR_ERROR_SYSTEM_INVALID, "xrCreateSession: bad system id");
    if (tr_current_session())
        return tr_violation(XR_ERROR_LIMIT_REACHED, "xrCreateSession: a session exists");
    const XrGraphicsBindingOpenGLXlibKHR *gl = NULL;
    for (const XrBaseInStructure *n = info->next; n; n = n->next) {
        if (n->type == XR_TYPE_GRAPHICS_BINDING_OPENGL_XLIB_KHR)
            gl = (const XrGraphicsBindingOpenGLXlibKHR *)n;
        else
            return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                                "xrCreateSession: unknown structure %d in the chain",
                                (int)n->type);
    }
    if (gl) {
        if (!inst->gl_enabled)
            return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                                "xrCreateSession: OpenGL binding without XR_KHR_opengl_enable");
        if (!inst->gl_requirements_called)
            return tr_violation(XR_ERROR_GRAPHICS_REQUIREMENTS_CALL_MISSING,
                                "xrCreateSession before xrGetOpenGLGraphicsRequirementsKHR");
        r = tr_gl_check_binding(gl);
        if (XR_FAILED(r))
            return r;
    } else if (!inst->headless_enabled) {
        return tr_violation(XR_ERROR_GRAPHICS_DEVICE_INVALID,
                            "xrCreateSession: no graphics binding and no XR_MND_headless");
    }
    struct tr_session *s = calloc(1, sizeof *s);
    if (!s)
        return XR_ERROR_OUT_OF_MEMORY;
    s->instance = inst;
    s->headless = gl == NULL;
    if (gl)
        s->gl = *gl;
    tr_register(&s->obj, TR_KIND_SESSION, &inst->obj);
    tr.report.sessions_created++;
    tr_session_queue_state(s, XR_SESSION_STATE_IDLE);
    tr_session_queue_state(s, XR_SESSION_STATE_READY);
    *out = (XrSession)s;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_destroy_session(XrSession handle)
{
    TR_LOCKED();
    struct tr_session *s = tr_lookup(handle, TR_KIND_SESSION);
    if (!s)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrDestroySession: invalid handle");
    tr_destroy_object(&s->obj);
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_begin_session(XrSession handle, const XrSessionBeginInfo *info)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_SESSION_BEGIN_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrBeginSession: bad info");
    if (s->running)
        return tr_violation(XR_ERROR_SESSION_RUNNING, "xrBeginSession: already running");
    if (s->state != XR_SESSION_STATE_READY)
        return tr_violation(XR_ERROR_SESSION_NOT_READY, "xrBeginSession: the session is not READY");
    if (!s->headless &&
        info->primaryViewConfigurationType != XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO)
        return tr_violation(XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED,
                            "xrBeginSession: view configuration %d",
                            (int)info->primaryViewConfigurationType);
    s->running = true;
    s->frames_ended = 0;
    s->frame_waited = false;
    s->frame_begun = false;
    tr.report.sessions_begun++;
    if (s->headless)
        synchronize(s);
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_end_session(XrSession handle)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!s->running)
        return tr_violation(XR_ERROR_SESSION_NOT_RUNNING, "xrEndSession: not running");
    if (s->state != XR_SESSION_STATE_STOPPING)
        return tr_violation(XR_ERROR_SESSION_NOT_STOPPING, "xrEndSession: not STOPPING");
    s->running = false;
    s->frame_waited = false;
    s->frame_begun = false;
    tr.report.sessions_ended++;
    tr_session_queue_state(s, XR_SESSION_STATE_IDLE);
    tr_session_queue_state(s, s->exit_pending ? XR_SESSION_STATE_EXITING
                                              : XR_SESSION_STATE_READY);
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_request_exit_session(XrSession handle)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!s->running)
        return tr_violation(XR_ERROR_SESSION_NOT_RUNNING, "xrRequestExitSession: not running");
    s->exit_pending = true;
    tr_session_queue_state(s, XR_SESSION_STATE_STOPPING);
    return XR_SUCCESS;
}

/* ---- Frames ------------------------------------------------------------------------- */

static XrResult XRAPI_CALL
tr_wait_frame(XrSession handle, const XrFrameWaitInfo *info, XrFrameState *state)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if ((info && info->type != XR_TYPE_FRAME_WAIT_INFO) || !state ||
        state->type != XR_TYPE_FRAME_STATE)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrWaitFrame: bad structures");
    if (!s->running)
        return tr_violation(XR_ERROR_SESSION_NOT_RUNNING, "xrWaitFrame: not running");
    if (s->frame_waited)
        return tr_violation(XR_ERROR_CALL_ORDER_INVALID,
                            "xrWaitFrame twice without xrBeginFrame (would block forever)");
    tr_advance_frame();
    s->predicted = tr_frame_time(tr.frame);
    s->frame_waited = true;
    s->views_located = false;
    state->predictedDisplayTime = s->predicted;
    state->predictedDisplayPeriod = TR_FRAME_PERIOD_NS;
    state->shouldRender =
        s->state == XR_SESSION_STATE_VISIBLE || s->state == XR_SESSION_STATE_FOCUSED;
    tr.report.frames_waited++;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_begin_frame(XrSession handle, const XrFrameBeginInfo *info)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (info && info->type != XR_TYPE_FRAME_BEGIN_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrBeginFrame: bad info");
    if (!s->running)
        return tr_violation(XR_ERROR_SESSION_NOT_RUNNING, "xrBeginFrame: not running");
    if (!s->frame_waited)
        return tr_violation(XR_ERROR_CALL_ORDER_INVALID, "xrBeginFrame without xrWaitFrame");
    s->frame_waited = false;
    if (s->frame_begun)
        return XR_FRAME_DISCARDED;
    s->frame_begun = true;
    return XR_SUCCESS;
}

static bool
fov_sane(const XrFovf *f)
{
    return f->angleLeft < f->angleRight && f->angleDown < f->angleUp &&
           f->angleLeft > -1.57f && f->angleRight < 1.57f && f->angleDown > -1.57f &&
           f->angleUp < 1.57f;
}

static XrResult
check_projection(struct tr_session *s, const XrCompositionLayerBaseHeader *base,
                 struct tr_report_layer *out)
{
    if (!base)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrEndFrame: NULL layer");
    if (base->type != XR_TYPE_COMPOSITION_LAYER_PROJECTION)
        return tr_violation(XR_ERROR_LAYER_INVALID, "xrEndFrame: layer type %d",
                            (int)base->type);
    const XrCompositionLayerProjection *p = (const XrCompositionLayerProjection *)base;
    const struct tr_space *space = tr_lookup(p->space, TR_KIND_SPACE);
    if (!space || space->obj.parent != &s->obj)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrEndFrame: layer space invalid");
    if (p->viewCount != 2 || !p->views)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrEndFrame: %u projection views",
                            p->viewCount);
    memset(out, 0, sizeof *out);
    out->view_count = (int)p->viewCount;
    out->views_as_located = s->views_located;
    for (int v = 0; v < 2; ++v) {
        const XrCompositionLayerProjectionView *view = &p->views[v];
        if (view->type != XR_TYPE_COMPOSITION_LAYER_PROJECTION_VIEW)
            return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrEndFrame: view %d type", v);
        if (!tr_pose_is_unit(&view->pose))
            return tr_violation(XR_ERROR_POSE_INVALID, "xrEndFrame: view %d pose", v);
        if (!fov_sane(&view->fov))
            return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrEndFrame: view %d fov", v);
        XrResult r = tr_gl_check_view(s, view, v);
        if (XR_FAILED(r))
            return r;
        const struct tr_swapchain *sc = tr_lookup(view->subImage.swapchain, TR_KIND_SWAPCHAIN);
        out->width[v] = view->subImage.imageRect.extent.width;
        out->height[v] = view->subImage.imageRect.extent.height;
        out->format[v] = sc->format;
        memcpy(out->center_rgba[v], sc->released_center, 4);
        out->views_as_located =
            out->views_as_located &&
            memcmp(&view->pose, &s->located[v].pose, sizeof view->pose) == 0 &&
            memcmp(&view->fov, &s->located[v].fov, sizeof view->fov) == 0;
    }
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_end_frame(XrSession handle, const XrFrameEndInfo *info)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_FRAME_END_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrEndFrame: bad info");
    if (!s->running)
        return tr_violation(XR_ERROR_SESSION_NOT_RUNNING, "xrEndFrame: not running");
    if (!s->frame_begun)
        return tr_violation(XR_ERROR_CALL_ORDER_INVALID, "xrEndFrame without xrBeginFrame");
    if (info->displayTime != s->predicted)
        return tr_violation(XR_ERROR_TIME_INVALID,
                            "xrEndFrame: display time %lld is not the predicted %lld",
                            (long long)info->displayTime, (long long)s->predicted);
    if (info->environmentBlendMode != XR_ENVIRONMENT_BLEND_MODE_OPAQUE)
        return tr_violation(XR_ERROR_ENVIRONMENT_BLEND_MODE_UNSUPPORTED,
                            "xrEndFrame: blend mode %d", (int)info->environmentBlendMode);
    if (info->layerCount > 16)
        return XR_ERROR_LAYER_LIMIT_EXCEEDED;
    if (info->layerCount > 0 && !info->layers)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrEndFrame: layers NULL");
    struct tr_report_layer layer;
    for (uint32_t i = 0; i < info->layerCount; ++i) {
        r = check_projection(s, info->layers[i], &layer);
        if (XR_FAILED(r))
            return r;
    }
    s->frame_begun = false;
    s->frames_ended++;
    tr.report.frames_ended++;
    if (info->layerCount > 0) {
        tr.report.projection_layers++;
        tr.report.layer = layer;
    } else {
        tr.report.empty_frames++;
    }
    tr_gl_frame_done(s);
    if (s->frames_ended == 1)
        synchronize(s);
    return XR_SUCCESS;
}

/* ---- Views ------------------------------------------------------------------------ */

static const XrFovf k_fov[2] = {
    {.angleLeft = -0.90f, .angleRight = 0.80f, .angleUp = 0.85f, .angleDown = -0.95f},
    {.angleLeft = -0.80f, .angleRight = 0.90f, .angleUp = 0.85f, .angleDown = -0.95f},
};

static XrResult XRAPI_CALL
tr_locate_views(XrSession handle, const XrViewLocateInfo *info, XrViewState *state,
                uint32_t capacity, uint32_t *count, XrView *views)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_VIEW_LOCATE_INFO || !state ||
        state->type != XR_TYPE_VIEW_STATE)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrLocateViews: bad structures");
    if (info->viewConfigurationType != XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO)
        return tr_violation(XR_ERROR_VIEW_CONFIGURATION_TYPE_UNSUPPORTED,
                            "xrLocateViews: view configuration %d",
                            (int)info->viewConfigurationType);
    if (info->displayTime <= 0)
        return tr_violation(XR_ERROR_TIME_INVALID, "xrLocateViews: time");
    const struct tr_space *base = tr_lookup(info->space, TR_KIND_SPACE);
    if (!base || base->obj.parent != &s->obj)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrLocateViews: invalid space");
    *count = 2;
    if (capacity == 0)
        return XR_SUCCESS;
    if (capacity < 2)
        return XR_ERROR_SIZE_INSUFFICIENT;
    if (info->displayTime != s->predicted)
        tr.report.locates_off_frame_time++;

    const struct tr_space head_space = {.kind = TR_SPACE_VIEW,
                                        .offset = {.orientation = {0.0f, 0.0f, 0.0f, 1.0f}}};
    XrPosef head, base_pose;
    const XrSpaceLocationFlags flags = tr_space_pose(&head_space, &head);
    tr_space_pose(base, &base_pose);
    state->viewStateFlags = flags; /* the view state bits have the same values */
    for (uint32_t v = 0; v < 2; ++v) {
        if (views[v].type != XR_TYPE_VIEW)
            return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrLocateViews: view type");
        const XrPosef eye = {.orientation = {0.0f, 0.0f, 0.0f, 1.0f},
                             .position = {v == 0 ? -TR_HALF_IPD_M : TR_HALF_IPD_M, 0.0f, 0.0f}};
        const XrPosef eye_in_stage = tr_pose_compose(&head, &eye);
        views[v].pose = tr_pose_relative(&base_pose, &eye_in_stage);
        views[v].fov = k_fov[v];
        if (!(flags & XR_VIEW_STATE_ORIENTATION_VALID_BIT)) {
            views[v].pose.orientation = (XrQuaternionf){NAN, NAN, NAN, NAN};
            views[v].pose.position = (XrVector3f){NAN, NAN, NAN};
        }
        s->located[v] = views[v];
    }
    s->views_located = true;
    return XR_SUCCESS;
}

PFN_xrVoidFunction
tr_session_function(const char *name)
{
    static const struct {
        const char *name;
        PFN_xrVoidFunction function;
    } k_table[] = {
        {"xrCreateSession", (PFN_xrVoidFunction)tr_create_session},
        {"xrDestroySession", (PFN_xrVoidFunction)tr_destroy_session},
        {"xrBeginSession", (PFN_xrVoidFunction)tr_begin_session},
        {"xrEndSession", (PFN_xrVoidFunction)tr_end_session},
        {"xrRequestExitSession", (PFN_xrVoidFunction)tr_request_exit_session},
        {"xrWaitFrame", (PFN_xrVoidFunction)tr_wait_frame},
        {"xrBeginFrame", (PFN_xrVoidFunction)tr_begin_frame},
        {"xrEndFrame", (PFN_xrVoidFunction)tr_end_frame},
        {"xrLocateViews", (PFN_xrVoidFunction)tr_locate_views},
    };
    for (size_t i = 0; i < sizeof k_table / sizeof k_table[0]; ++i) {
        if (strcmp(k_table[i].name, name) == 0)
            return k_table[i].function;
    }
    return NULL;
}
