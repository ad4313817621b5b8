/*
 * The test runtime's OpenGL side (XR_KHR_opengl_enable with the Xlib binding): the
 * graphics requirements, the check of the binding against the GLX state (the visual and
 * frame buffer configuration must be those of the context), swapchains whose images are
 * GL textures in the application's context, and the checks xrEndFrame makes of the
 * images a projection layer uses. On each release the middle pixel of the image is read
 * back, so the tests can see what the application drew.
 *
 * The specification lets the application call the swapchain functions without its
 * context current; then the runtime makes it current for the call and restores the
 * previous one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_runtime.h"

struct tr_gl_scope {
    bool switched;
    Display *display;
    GLXDrawable drawable;
    GLXContext context;
};

static struct tr_gl_scope
gl_enter(const struct tr_session *s)
{
    struct tr_gl_scope scope = {.switched = false};
    if (glXGetCurrentContext() == s->gl.glxContext)
        return scope;
    scope.switched = true;
    scope.display = glXGetCurrentDisplay();
    scope.drawable = glXGetCurrentDrawable();
    scope.context = glXGetCurrentContext();
    glXMakeCurrent(s->gl.xDisplay, s->gl.glxDrawable, s->gl.glxContext);
    return scope;
}

static void
gl_leave(const struct tr_session *s, const struct tr_gl_scope *scope)
{
    if (!scope->switched)
        return;
    if (scope->context)
        glXMakeCurrent(scope->display, scope->drawable, scope->context);
    else
        glXMakeCurrent(s->gl.xDisplay, None, NULL);
}

static XrResult XRAPI_CALL
tr_get_gl_requirements(XrInstance handle, XrSystemId system,
                       XrGraphicsRequirementsOpenGLKHR *req)
{
    TR_LOCKED();
    struct tr_instance *inst = NULL;
    XrResult r = tr_instance_check(handle, &inst);
    if (XR_FAILED(r))
        return r;
    if (!inst->gl_enabled)
        return tr_violation(XR_ERROR_FUNCTION_UNSUPPORTED,
                            "xrGetOpenGLGraphicsRequirementsKHR without its extension");
    if (system != TR_SYSTEM_ID)
        return tr_violation(XR_ERROR_SYSTEM_INVALID, "xrGetOpenGLGraphicsRequirementsKHR: system");
    if (!req || req->type != XR_TYPE_GRAPHICS_REQUIREMENTS_OPENGL_KHR)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                            "xrGetOpenGLGraphicsRequirementsKHR: bad type");
    req->minApiVersionSupported = XR_MAKE_VERSION(3, 3, 0);
    req->maxApiVersionSupported = XR_MAKE_VERSION(4, 6, 0);
    inst->gl_requirements_called = true;
    return XR_SUCCESS;
}

XrResult
tr_gl_check_binding(const XrGraphicsBindingOpenGLXlibKHR *b)
{
    if (!b->xDisplay || !b->glxContext || !b->glxDrawable || !b->glxFBConfig)
        return tr_violation(XR_ERROR_GRAPHICS_DEVICE_INVALID,
                            "OpenGL Xlib binding: a field is empty");
    int visual = 0, config_id = 0, context_config_id = 0;
    glXGetFBConfigAttrib(b->xDisplay, b->glxFBConfig, GLX_VISUAL_ID, &visual);
    glXGetFBConfigAttrib(b->xDisplay, b->glxFBConfig, GLX_FBCONFIG_ID, &config_id);
    glXQueryContext(b->xDisplay, b->glxContext, GLX_FBCONFIG_ID, &context_config_id);
    if ((uint32_t)visual != b->visualid)
        return tr_violation(XR_ERROR_GRAPHICS_DEVICE_INVALID,
                            "OpenGL Xlib binding: visualid 0x%x is not the config's 0x%x",
                            b->visualid, (unsigned)visual);
    if (config_id != context_config_id)
        return tr_violation(XR_ERROR_GRAPHICS_DEVICE_INVALID,
                            "OpenGL Xlib binding: the FBConfig (id %d) is not the context's "
                            "(id %d)",
                            config_id, context_config_id);
    return XR_SUCCESS;
}

/* Swapchain formats, the runtime's preference first. */
static const int64_t k_formats[] = {GL_RGBA16F, GL_SRGB8_ALPHA8, GL_RGBA8,
                                    GL_DEPTH_COMPONENT24};
#define TR_FORMAT_COUNT ((uint32_t)(sizeof k_formats / sizeof k_formats[0]))

static XrResult XRAPI_CALL
tr_enumerate_swapchain_formats(XrSession handle, uint32_t capacity, uint32_t *count,
                               int64_t *formats)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    /* XR_MND_headless: a headless session enumerates no formats. */
    const uint32_t n = s->headless ? 0 : TR_FORMAT_COUNT;
    *count = n;
    if (capacity == 0)
        return XR_SUCCESS;
    if (capacity < n)
        return XR_ERROR_SIZE_INSUFFICIENT;
    memcpy(formats, k_formats, n * sizeof k_formats[0]);
    return XR_SUCCESS;
}

static bool
texture_format(int64_t format, GLenum *out_format, GLenum *out_type)
{
    switch (format) {
    case GL_RGBA8:
    case GL_SRGB8_ALPHA8:
        *out_format = GL_RGBA;
        *out_type = GL_UNSIGNED_BYTE;
        return true;
    case GL_RGBA16F:
        *out_format = GL_RGBA;
        *out_type = GL_HALF_FLOAT;
        return true;
    case GL_DEPTH_COMPONENT24:
        *out_format = GL_DEPTH_COMPONENT;
        *out_type = GL_UNSIGNED_INT;
        return true;
    default:
        return false;
    }
}

static XrResult XRAPI_CALL
tr_create_swapchain(XrSession handle, const XrSwapchainCreateInfo *info, XrSwapchain *out)
{
    TR_LOCKED();
    struct tr_session *s = NULL;
    XrResult r = tr_session_check(handle, &s);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_SWAPCHAIN_CREATE_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrCreateSwapchain: bad info");
    GLenum format, type;
    if (s->headless || !texture_format(info->format, &format, &type))
        return tr_violation(XR_ERROR_SWAPCHAIN_FORMAT_UNSUPPORTED,
                            "xrCreateSwapchain: format 0x%llx", (unsigned long long)info->format);
    if (info->usageFlags == 0 || info->sampleCount != 1 || info->faceCount != 1 ||
        info->arraySize != 1 || info->mipCount != 1 || info->width == 0 ||
        info->height == 0 || info->width > 1024 || info->height > 1024)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                            "xrCreateSwapchain: %ux%u, %u samples, %u faces, %u layers, %u mips, "
                            "usage 0x%llx",
                            info->width, info->height, info->sampleCount, info->faceCount,
                            info->arraySize, info->mipCount,
                            (unsigned long long)info->usageFlags);
    struct tr_swapchain *sc = calloc(1, sizeof *sc);
    if (!sc)
        return XR_ERROR_OUT_OF_MEMORY;
    sc->format = info->format;
    sc->width = info->width;
    sc->height = info->height;
    sc->last_released = -1;
    const struct tr_gl_scope scope = gl_enter(s);
    GLint old_texture = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &old_texture);
    glGenTextures(TR_SWAPCHAIN_IMAGES, sc->texture);
    for (int i = 0; i < TR_SWAPCHAIN_IMAGES; ++i) {
        glBindTexture(GL_TEXTURE_2D, sc->texture[i]);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
        glTexImage2D(GL_TEXTURE_2D, 0, (GLint)info->format, (GLsizei)info->width,
                     (GLsizei)info->height, 0, format, type, NULL);
    }
    glBindTexture(GL_TEXTURE_2D, (GLuint)old_texture);
    gl_leave(s, &scope);
    tr_register(&sc->obj, TR_KIND_SWAPCHAIN, &s->obj);
    tr.report.swapchains_created++;
    *out = (XrSwapchain)sc;
    return XR_SUCCESS;
}

void
tr_gl_destroy_swapchain(struct tr_swapchain *sc)
{
    const struct tr_session *s = (const struct tr_session *)sc->obj.parent;
    const struct tr_gl_scope scope = gl_enter(s);
    glDeleteTextures(TR_SWAPCHAIN_IMAGES, sc->texture);
    gl_leave(s, &scope);
}

static XrResult XRAPI_CALL
tr_destroy_swapchain(XrSwapchain handle)
{
    TR_LOCKED();
    struct tr_swapchain *sc = tr_lookup(handle, TR_KIND_SWAPCHAIN);
    if (!sc)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrDestroySwapchain: invalid handle");
    tr_destroy_object(&sc->obj);
    return XR_SUCCESS;
}

static XrResult
swapchain_check(XrSwapchain handle, struct tr_swapchain **out)
{
    struct tr_swapchain *sc = tr_lookup(handle, TR_KIND_SWAPCHAIN);
    if (!sc)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "invalid XrSwapchain");
    *out = sc;
    return tr_session_check((XrSession)sc->obj.parent, NULL);
}

static XrResult XRAPI_CALL
tr_enumerate_swapchain_images(XrSwapchain handle, uint32_t capacity, uint32_t *count,
                              XrSwapchainImageBaseHeader *images)
{
    TR_LOCKED();
    struct tr_swapchain *sc = NULL;
    XrResult r = swapchain_check(handle, &sc);
    if (XR_FAILED(r))
        return r;
    *count = TR_SWAPCHAIN_IMAGES;
    if (capacity == 0)
        return XR_SUCCESS;
    if (capacity < TR_SWAPCHAIN_IMAGES)
        return XR_ERROR_SIZE_INSUFFICIENT;
    XrSwapchainImageOpenGLKHR *gl = (XrSwapchainImageOpenGLKHR *)images;
    for (int i = 0; i < TR_SWAPCHAIN_IMAGES; ++i) {
        if (gl[i].type != XR_TYPE_SWAPCHAIN_IMAGE_OPENGL_KHR)
            return tr_violation(XR_ERROR_VALIDATION_FAILURE,
                                "xrEnumerateSwapchainImages: image %d type", i);
        gl[i].image = sc->texture[i];
    }
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_acquire_image(XrSwapchain handle, const XrSwapchainImageAcquireInfo *info, uint32_t *index)
{
    TR_LOCKED();
    struct tr_swapchain *sc = NULL;
    XrResult r = swapchain_check(handle, &sc);
    if (XR_FAILED(r))
        return r;
    if (info && info->type != XR_TYPE_SWAPCHAIN_IMAGE_ACQUIRE_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrAcquireSwapchainImage: bad info");
    if (sc->acquired_count == TR_SWAPCHAIN_IMAGES)
        return tr_violation(XR_ERROR_CALL_ORDER_INVALID,
                            "xrAcquireSwapchainImage: every image is acquired");
    *index = (uint32_t)sc->next_image;
    sc->acquired[sc->acquired_count++] = sc->next_image;
    sc->next_image = (sc->next_image + 1) % TR_SWAPCHAIN_IMAGES;
    return XR_SUCCESS;
}

static XrResult XRAPI_CALL
tr_wait_image(XrSwapchain handle, const XrSwapchainImageWaitInfo *info)
{
    TR_LOCKED();
    struct tr_swapchain *sc = NULL;
    XrResult r = swapchain_check(handle, &sc);
    if (XR_FAILED(r))
        return r;
    if (!info || info->type != XR_TYPE_SWAPCHAIN_IMAGE_WAIT_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrWaitSwapchainImage: bad info");
    if (sc->acquired_count == 0 || sc->waited)
        return tr_violation(XR_ERROR_CALL_ORDER_INVALID,
                            "xrWaitSwapchainImage: no acquired image to wait for");
    sc->waited = true;
    return XR_SUCCESS;
}

static void
read_center(const struct tr_session *s, struct tr_swapchain *sc, int image)
{
    memset(sc->released_center, 0, 4);
    if (sc->format == GL_DEPTH_COMPONENT24)
        return;
    const struct tr_gl_scope scope = gl_enter(s);
    GLint old = 0;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &old);
    GLuint fb = 0;
    glGenFramebuffers(1, &fb);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fb);
    glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D,
                           sc->texture[image], 0);
    if (glCheckFramebufferStatus(GL_READ_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE)
        glReadPixels((GLint)sc->width / 2, (GLint)sc->height / 2, 1, 1, GL_RGBA,
                     GL_UNSIGNED_BYTE, sc->released_center);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)old);
    glDeleteFramebuffers(1, &fb);
    gl_leave(s, &scope);
}

static XrResult XRAPI_CALL
tr_release_image(XrSwapchain handle, const XrSwapchainImageReleaseInfo *info)
{
    TR_LOCKED();
    struct tr_swapchain *sc = NULL;
    XrResult r = swapchain_check(handle, &sc);
    if (XR_FAILED(r))
        return r;
    if (info && info->type != XR_TYPE_SWAPCHAIN_IMAGE_RELEASE_INFO)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrReleaseSwapchainImage: bad info");
    if (!sc->waited)
        return tr_violation(XR_ERROR_CALL_ORDER_INVALID,
                            "xrReleaseSwapchainImage: no image waited for");
    const int image = sc->acquired[0];
    memmove(&sc->acquired[0], &sc->acquired[1],
            (size_t)(TR_SWAPCHAIN_IMAGES - 1) * sizeof sc->acquired[0]);
    sc->acquired_count--;
    sc->waited = false;
    sc->released_this_frame = true;
    sc->last_released = image;
    read_center((const struct tr_session *)sc->obj.parent, sc, image);
    return XR_SUCCESS;
}

XrResult
tr_gl_check_view(struct tr_session *s, const XrCompositionLayerProjectionView *view, int index)
{
    const struct tr_swapchain *sc = tr_lookup(view->subImage.swapchain, TR_KIND_SWAPCHAIN);
    if (!sc || sc->obj.parent != &s->obj)
        return tr_violation(XR_ERROR_HANDLE_INVALID, "xrEndFrame: view %d swapchain invalid",
                            index);
    const XrRect2Di *rect = &view->subImage.imageRect;
    if (rect->offset.x < 0 || rect->offset.y < 0 || rect->extent.width <= 0 ||
        rect->extent.height <= 0 ||
        (uint32_t)(rect->offset.x + rect->extent.width) > sc->width ||
        (uint32_t)(rect->offset.y + rect->extent.height) > sc->height)
        return tr_violation(XR_ERROR_SWAPCHAIN_RECT_INVALID,
                            "xrEndFrame: view %d rect %d,%d %dx%d outside %ux%u", index,
                            rect->offset.x, rect->offset.y, rect->extent.width,
                            rect->extent.height, sc->width, sc->height);
    if (view->subImage.imageArrayIndex != 0)
        return tr_violation(XR_ERROR_VALIDATION_FAILURE, "xrEndFrame: view %d array index %u",
                            index, view->subImage.imageArrayIndex);
    if (sc->format == GL_DEPTH_COMPONENT24)
        return tr_violation(XR_ERROR_LAYER_INVALID, "xrEndFrame: view %d shows a depth image",
                            index);
    /* Stricter than the specification (which uses the last released image): this
     * application renders every frame, so every swapchain must have been released. */
    if (!sc->released_this_frame)
        return tr_violation(XR_ERROR_LAYER_INVALID,
                            "xrEndFrame: view %d: no image of its swapchain released this frame",
                            index);
    return XR_SUCCESS;
}

void
tr_gl_frame_done(struct tr_session *s)
{
    for (int i = 0; i < tr.object_count; ++i) {
        struct tr_object *o = tr.objects[i];
        if (o->kind == TR_KIND_SWAPCHAIN && o->parent == &s->obj)
            ((struct tr_swapchain *)o)->released_this_frame = false;
    }
}

PFN_xrVoidFunction
tr_gl_function(const char *name)
{
    static const struct {
        const char *name;
        PFN_xrVoidFunction function;
    } k_table[] = {
        {"xrGetOpenGLGraphicsRequirementsKHR", (PFN_xrVoidFunction)tr_get_gl_requirements},
        {"xrEnumerateSwapchainFormats", (PFN_xrVoidFunction)tr_enumerate_swapchain_formats},
        {"xrCreateSwapchain", (PFN_xrVoidFunction)tr_create_swapchain},
        {"xrDestroySwapchain", (PFN_xrVoidFunction)tr_destroy_swapchain},
        {"xrEnumerateSwapchainImages", (PFN_xrVoidFunction)tr_enumerate_swapchain_images},
        {"xrAcquireSwapchainImage", (PFN_xrVoidFunction)tr_acquire_image},
        {"xrWaitSwapchainImage", (PFN_xrVoidFunction)tr_wait_image},
        {"xrReleaseSwapchainImage", (PFN_xrVoidFunction)tr_release_image},
    };
    for (size_t i = 0; i < sizeof k_table / sizeof k_table[0]; ++i) {
        if (strcmp(k_table[i].name, name) == 0)
            return k_table[i].function;
    }
    return NULL;
}
