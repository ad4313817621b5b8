/*
 * The headset view: the session shares the SDL2 window's OpenGL context (Xlib/GLX
 * binding of XR_KHR_opengl_enable), draws the scene for each eye into the runtime's
 * swapchain images through the program's callback, and submits one projection layer.
 *
 * Colour format: GL_SRGB8_ALPHA8 when offered. The program's shaders write display-ready
 * (sRGB-encoded) colours with GL_FRAMEBUFFER_SRGB off, so storing those bytes in an sRGB
 * image tells the compositor what they are; a linear GL_RGBA8 image (the fallback) would
 * show them too bright. The depth buffer is our own renderbuffer per eye.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "embody/m_math.h"
#include "util/u_log.h"
#include "xr/oxr_internal.h"

#define OXR_NEAR_M 0.05f
#define OXR_FAR_M 100.0f

enum em_result
oxr_view_check_system(struct oxr_source *ox, struct em_error *err)
{
    XrViewConfigurationType types[8];
    uint32_t count = 0;
    if (XR_FAILED(OXR_CHECK(ox, xrEnumerateViewConfigurations(ox->instance, ox->system, 8,
                                                              &count, types))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    bool stereo = false;
    for (uint32_t i = 0; i < count; ++i)
        stereo = stereo || types[i] == XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO;
    if (!stereo)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "the headset %s has no stereo view (XR_VIEW_CONFIGURATION_TYPE_PRIMARY_"
                       "STEREO)",
                       ox->system_name);

    XrViewConfigurationView *config = ox->view.config;
    for (int eye = 0; eye < OXR_EYE_COUNT; ++eye)
        config[eye] = (XrViewConfigurationView){.type = XR_TYPE_VIEW_CONFIGURATION_VIEW};
    if (XR_FAILED(OXR_CHECK(ox, xrEnumerateViewConfigurationViews(
                                    ox->instance, ox->system,
                                    XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO, OXR_EYE_COUNT,
                                    &count, config))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    if (count != OXR_EYE_COUNT)
        return em_fail(err, EM_ERROR_RUNTIME, "the stereo view of %s has %u views, not 2",
                       ox->system_name, count);
    for (int eye = 0; eye < OXR_EYE_COUNT; ++eye) {
        if (config[eye].recommendedImageRectWidth == 0 ||
            config[eye].recommendedImageRectHeight == 0)
            return em_fail(err, EM_ERROR_RUNTIME, "view %d of %s recommends an empty image",
                           eye, ox->system_name);
    }

    XrEnvironmentBlendMode modes[8];
    if (XR_FAILED(OXR_CHECK(ox, xrEnumerateEnvironmentBlendModes(
                                    ox->instance, ox->system,
                                    XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO, 8, &count,
                                    modes))) ||
        count == 0)
        return em_fail(err, EM_ERROR_RUNTIME, "%s",
                       count == 0 ? "the headset offers no environment blend mode"
                                  : ox->last_failure);
    /* The runtime lists its preferred mode first; opaque suits a full scene best. */
    ox->view.blend_mode = modes[0];
    for (uint32_t i = 0; i < count; ++i) {
        if (modes[i] == XR_ENVIRONMENT_BLEND_MODE_OPAQUE)
            ox->view.blend_mode = modes[i];
    }
    return EM_OK;
}

/* The GLX frame buffer configuration the current context was made with. */
static GLXFBConfig
current_fbconfig(Display *display, GLXContext context, int *out_visual_id)
{
    int config_id = 0, screen = 0;
    if (glXQueryContext(display, context, GLX_FBCONFIG_ID, &config_id) != Success ||
        glXQueryContext(display, context, GLX_SCREEN, &screen) != Success)
        return NULL;
    const int attribs[] = {GLX_FBCONFIG_ID, config_id, None};
    int count = 0;
    GLXFBConfig *configs = glXChooseFBConfig(display, screen, attribs, &count);
    if (!configs)
        return NULL;
    GLXFBConfig config = count > 0 ? configs[0] : NULL;
    XFree(configs);
    if (config && glXGetFBConfigAttrib(display, config, GLX_VISUAL_ID, out_visual_id) != Success)
        *out_visual_id = 0;
    return config;
}

static enum em_result
check_gl_version(struct oxr_source *ox, struct em_error *err)
{
    XrGraphicsRequirementsOpenGLKHR req = {.type = XR_TYPE_GRAPHICS_REQUIREMENTS_OPENGL_KHR};
    /* Required before xrCreateSession, every time (the system may have changed). */
    if (XR_FAILED(OXR_CHECK(ox, ox->get_gl_requirements(ox->instance, ox->system, &req))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    const int version = epoxy_gl_version(); /* 33 for 3.3 */
    const XrVersion have = XR_MAKE_VERSION(version / 10, version % 10, 0);
    if (have < req.minApiVersionSupported)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "the OpenXR runtime needs OpenGL %u.%u, the window has %d.%d",
                       XR_VERSION_MAJOR(req.minApiVersionSupported),
                       XR_VERSION_MINOR(req.minApiVersionSupported), version / 10,
                       version % 10);
    if (XR_VERSION_MAJOR(have) > XR_VERSION_MAJOR(req.maxApiVersionSupported))
        U_LOG_W("openxr: the runtime was tested with OpenGL up to %u.%u; the window has %d.%d",
                XR_VERSION_MAJOR(req.maxApiVersionSupported),
                XR_VERSION_MINOR(req.maxApiVersionSupported), version / 10, version % 10);
    return EM_OK;
}

enum em_result
oxr_view_binding(struct oxr_source *ox, XrGraphicsBindingOpenGLXlibKHR *out_binding,
                 struct em_error *err)
{
    Display *display = glXGetCurrentDisplay();
    GLXContext context = glXGetCurrentContext();
    GLXDrawable drawable = glXGetCurrentDrawable();
    if (!display || !context || !drawable)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "the headset view needs the window's OpenGL context current through "
                       "GLX (X11)");
    int visual_id = 0;
    GLXFBConfig config = current_fbconfig(display, context, &visual_id);
    if (!config || visual_id == 0)
        return em_fail(err, EM_ERROR_UNSUPPORTED,
                       "the window's OpenGL context has no GLX frame buffer configuration "
                       "with a visual");
    const enum em_result r = check_gl_version(ox, err);
    if (r != EM_OK)
        return r;
    *out_binding = (XrGraphicsBindingOpenGLXlibKHR){
        .type = XR_TYPE_GRAPHICS_BINDING_OPENGL_XLIB_KHR,
        .xDisplay = display,
        .visualid = (uint32_t)visual_id,
        .glxFBConfig = config,
        .glxDrawable = drawable,
        .glxContext = context,
    };
    ox->view.display = display;
    ox->view.context = context;
    ox->view.drawable = drawable;
    return EM_OK;
}

static bool
context_current(const struct oxr_source *ox)
{
    return ox->view.context != NULL && glXGetCurrentContext() == ox->view.context;
}

static enum em_result
choose_color_format(struct oxr_source *ox, struct em_error *err)
{
    int64_t formats[64];
    uint32_t count = 0;
    if (XR_FAILED(OXR_CHECK(ox, xrEnumerateSwapchainFormats(ox->session, 0, &count, NULL))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    if (count > 64)
        count = 64;
    if (XR_FAILED(OXR_CHECK(ox, xrEnumerateSwapchainFormats(ox->session, count, &count,
                                                            formats))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    static const int64_t preferred[] = {GL_SRGB8_ALPHA8, GL_RGBA8};
    for (size_t p = 0; p < sizeof preferred / sizeof preferred[0]; ++p) {
        for (uint32_t i = 0; i < count; ++i) {
            if (formats[i] == preferred[p]) {
                ox->view.color_format = formats[i];
                if (p > 0)
                    U_LOG_W("openxr: no sRGB swapchain format: the headset view will look "
                            "brighter than the mirror");
                return EM_OK;
            }
        }
    }
    return em_fail(err, EM_ERROR_UNSUPPORTED,
                   "the OpenXR runtime offers neither GL_SRGB8_ALPHA8 nor GL_RGBA8 swapchains "
                   "(%u formats)",
                   count);
}

static enum em_result
create_eye_target(struct oxr_source *ox, int eye, struct em_error *err)
{
    struct oxr_eye_target *t = &ox->view.eye[eye];
    const XrViewConfigurationView *config = &ox->view.config[eye];
    XrSwapchainCreateInfo info = {
        .type = XR_TYPE_SWAPCHAIN_CREATE_INFO,
        .usageFlags = XR_SWAPCHAIN_USAGE_COLOR_ATTACHMENT_BIT | XR_SWAPCHAIN_USAGE_SAMPLED_BIT,
        .format = ox->view.color_format,
        .sampleCount = 1,
        .width = config->recommendedImageRectWidth,
        .height = config->recommendedImageRectHeight,
        .faceCount = 1,
        .arraySize = 1,
        .mipCount = 1,
    };
    if (XR_FAILED(OXR_CHECK(ox, xrCreateSwapchain(ox->session, &info, &t->swapchain)))) {
        t->swapchain = XR_NULL_HANDLE;
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    }
    t->width = (int32_t)info.width;
    t->height = (int32_t)info.height;

    XrSwapchainImageOpenGLKHR images[OXR_MAX_SWAPCHAIN_IMAGES];
    for (int i = 0; i < OXR_MAX_SWAPCHAIN_IMAGES; ++i)
        images[i] = (XrSwapchainImageOpenGLKHR){.type = XR_TYPE_SWAPCHAIN_IMAGE_OPENGL_KHR};
    uint32_t count = 0;
    if (XR_FAILED(OXR_CHECK(ox, xrEnumerateSwapchainImages(t->swapchain, 0, &count, NULL))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    if (count == 0 || count > OXR_MAX_SWAPCHAIN_IMAGES)
        return em_fail(err, EM_ERROR_LIMIT, "the runtime's swapchain has %u images (1 to %d "
                       "expected)", count, OXR_MAX_SWAPCHAIN_IMAGES);
    if (XR_FAILED(OXR_CHECK(ox, xrEnumerateSwapchainImages(
                                    t->swapchain, count, &count,
                                    (XrSwapchainImageBaseHeader *)images))))
        return em_fail(err, EM_ERROR_RUNTIME, "%s", ox->last_failure);
    t->image_count = count;
    for (uint32_t i = 0; i < count; ++i)
        t->image[i] = images[i].image;

    glGenFramebuffers(1, &t->framebuffer);
    glGenRenderbuffers(1, &t->depth);
    glBindRenderbuffer(GL_RENDERBUFFER, t->depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, t->width, t->height);
    glBindRenderbuffer(GL_RENDERBUFFER, 0);
    return EM_OK;
}

enum em_result
oxr_view_create_swapchains(struct oxr_source *ox, struct em_error *err)
{
    if (!context_current(ox))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "the window's OpenGL context must be current to make the headset view");
    enum em_result r = choose_color_format(ox, err);
    for (int eye = 0; eye < OXR_EYE_COUNT && r == EM_OK; ++eye)
        r = create_eye_target(ox, eye, err);
    if (r == EM_OK)
        U_LOG_I("openxr: headset view %dx%d per eye, %s", ox->view.eye[0].width,
                ox->view.eye[0].height,
                ox->view.color_format == GL_SRGB8_ALPHA8 ? "sRGB" : "linear RGBA8");
    return r;
}

void
oxr_view_destroy_swapchains(struct oxr_source *ox)
{
    /* Our GL objects can only be deleted in their context; without it they are left to
     * die with the context. */
    const bool gl = context_current(ox);
    if (!gl && ox->view.eye[0].framebuffer != 0)
        U_LOG_D("openxr: the OpenGL context is not current: eye framebuffers not deleted");
    for (int eye = 0; eye < OXR_EYE_COUNT; ++eye) {
        struct oxr_eye_target *t = &ox->view.eye[eye];
        if (gl && t->framebuffer)
            glDeleteFramebuffers(1, &t->framebuffer);
        if (gl && t->depth)
            glDeleteRenderbuffers(1, &t->depth);
        if (t->swapchain != XR_NULL_HANDLE)
            OXR_CHECK(ox, xrDestroySwapchain(t->swapchain));
        memset(t, 0, sizeof *t);
    }
}

void
oxr_projection_from_fov(const XrFovf *fov, float near_m, float far_m, mat4 out)
{
    const float left = tanf(fov->angleLeft);
    const float right = tanf(fov->angleRight);
    const float down = tanf(fov->angleDown);
    const float up = tanf(fov->angleUp);
    const float width = right - left;
    const float height = up - down;
    memset(out, 0, sizeof(mat4));
    /* out[column][row], OpenGL clip space (z in -1..1). */
    out[0][0] = 2.0f / width;
    out[1][1] = 2.0f / height;
    out[2][0] = (right + left) / width;
    out[2][1] = (up + down) / height;
    out[2][2] = -(far_m + near_m) / (far_m - near_m);
    out[2][3] = -1.0f;
    out[3][2] = -2.0f * far_m * near_m / (far_m - near_m);
}

void
oxr_view_from_pose(const XrPosef *eye_pose, mat4 out)
{
    const float q[4] = {eye_pose->orientation.x, eye_pose->orientation.y,
                        eye_pose->orientation.z, eye_pose->orientation.w};
    const float p[3] = {eye_pose->position.x, eye_pose->position.y, eye_pose->position.z};
    float axis[3][3];
    m_quat_to_columns(q, axis[0], axis[1], axis[2]);
    /* The inverse of a rigid transform: rotation transposed, translation -R^T p. */
    memset(out, 0, sizeof(mat4));
    for (int col = 0; col < 3; ++col) {
        for (int row = 0; row < 3; ++row)
            out[col][row] = axis[row][col];
    }
    for (int row = 0; row < 3; ++row)
        out[3][row] = -m_vec3_dot(axis[row], p);
    out[3][3] = 1.0f;
}

static enum em_result
draw_eye(struct oxr_source *ox, int eye, const XrView *view,
         XrCompositionLayerProjectionView *out_view)
{
    struct oxr_eye_target *t = &ox->view.eye[eye];
    uint32_t index = 0;
    XrSwapchainImageAcquireInfo acquire = {.type = XR_TYPE_SWAPCHAIN_IMAGE_ACQUIRE_INFO};
    if (XR_FAILED(OXR_CHECK(ox, xrAcquireSwapchainImage(t->swapchain, &acquire, &index))))
        return EM_ERROR_RUNTIME;
    XrSwapchainImageWaitInfo wait = {.type = XR_TYPE_SWAPCHAIN_IMAGE_WAIT_INFO,
                                     .timeout = XR_INFINITE_DURATION};
    XrResult r = OXR_CHECK(ox, xrWaitSwapchainImage(t->swapchain, &wait));
    if (XR_FAILED(r) || index >= t->image_count)
        return EM_ERROR_RUNTIME;

    glBindFramebuffer(GL_FRAMEBUFFER, t->framebuffer);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, t->image[index],
                           0);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, t->depth);
    const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    if (status == GL_FRAMEBUFFER_COMPLETE) {
        glViewport(0, 0, t->width, t->height);
        struct oxr_eye_view ev = {.eye = eye, .width = t->width, .height = t->height};
        oxr_view_from_pose(&view->pose, ev.view);
        oxr_projection_from_fov(&view->fov, OXR_NEAR_M, OXR_FAR_M, ev.projection);
        ox->draw_eye(ox->user, &ev);
    } else {
        U_LOG_E("openxr: eye %d framebuffer incomplete (0x%04x)", eye, status);
    }
    glBindFramebuffer(GL_FRAMEBUFFER, 0);

    XrSwapchainImageReleaseInfo release = {.type = XR_TYPE_SWAPCHAIN_IMAGE_RELEASE_INFO};
    r = OXR_CHECK(ox, xrReleaseSwapchainImage(t->swapchain, &release));
    if (XR_FAILED(r) || status != GL_FRAMEBUFFER_COMPLETE)
        return EM_ERROR_RUNTIME;

    *out_view = (XrCompositionLayerProjectionView){
        .type = XR_TYPE_COMPOSITION_LAYER_PROJECTION_VIEW,
        .pose = view->pose,
        .fov = view->fov,
        .subImage = {.swapchain = t->swapchain,
                     .imageRect = {.offset = {0, 0}, .extent = {t->width, t->height}},
                     .imageArrayIndex = 0},
    };
    return EM_OK;
}

enum em_result
oxr_view_render(struct oxr_source *ox, XrCompositionLayerProjection *out_layer,
                XrCompositionLayerProjectionView out_views[OXR_EYE_COUNT], bool *out_drawn)
{
    *out_drawn = false;
    if (!context_current(ox)) {
        if (!ox->view.warned_no_context)
            U_LOG_W("openxr: the window's OpenGL context is not current: headset frames are "
                    "skipped until it is");
        ox->view.warned_no_context = true;
        return EM_OK;
    }
    XrViewLocateInfo info = {.type = XR_TYPE_VIEW_LOCATE_INFO,
                             .viewConfigurationType = XR_VIEW_CONFIGURATION_TYPE_PRIMARY_STEREO,
                             .displayTime = ox->frame_state.predictedDisplayTime,
                             .space = ox->base_space};
    XrViewState state = {.type = XR_TYPE_VIEW_STATE};
    XrView views[OXR_EYE_COUNT] = {{.type = XR_TYPE_VIEW}, {.type = XR_TYPE_VIEW}};
    uint32_t count = 0;
    if (XR_FAILED(OXR_CHECK(ox, xrLocateViews(ox->session, &info, &state, OXR_EYE_COUNT,
                                              &count, views))))
        return EM_ERROR_RUNTIME;
    const XrViewStateFlags need =
        XR_VIEW_STATE_ORIENTATION_VALID_BIT | XR_VIEW_STATE_POSITION_VALID_BIT;
    if ((state.viewStateFlags & need) != need || count != OXR_EYE_COUNT)
        return EM_OK; /* nothing sensible to draw: show nothing this frame */

    GLint old_framebuffer = 0;
    GLint old_viewport[4];
    glGetIntegerv(GL_FRAMEBUFFER_BINDING, &old_framebuffer);
    glGetIntegerv(GL_VIEWPORT, old_viewport);
    enum em_result r = EM_OK;
    for (int eye = 0; eye < OXR_EYE_COUNT && r == EM_OK; ++eye)
        r = draw_eye(ox, eye, &views[eye], &out_views[eye]);
    glBindFramebuffer(GL_FRAMEBUFFER, (GLuint)old_framebuffer);
    glViewport(old_viewport[0], old_viewport[1], old_viewport[2], old_viewport[3]);
    if (r != EM_OK)
        return r;

    *out_layer = (XrCompositionLayerProjection){
        .type = XR_TYPE_COMPOSITION_LAYER_PROJECTION,
        .space = ox->base_space,
        .viewCount = OXR_EYE_COUNT,
        .views = out_views,
    };
    *out_drawn = true;
    return EM_OK;
}
