/* Result names and error messages (include/embody/result.h). */
#include <stdio.h>
#include <string.h>

#include "embody/result.h"
#include "embody/tracking.h"

const char *
em_result_string(enum em_result r)
{
    switch (r) {
    case EM_OK: return "EM_OK";
    case EM_END_OF_STREAM: return "EM_END_OF_STREAM";
    case EM_NOT_READY: return "EM_NOT_READY";
    case EM_ERROR_INVALID_ARGUMENT: return "EM_ERROR_INVALID_ARGUMENT";
    case EM_ERROR_IO: return "EM_ERROR_IO";
    case EM_ERROR_PARSE: return "EM_ERROR_PARSE";
    case EM_ERROR_OUT_OF_MEMORY: return "EM_ERROR_OUT_OF_MEMORY";
    case EM_ERROR_UNSUPPORTED: return "EM_ERROR_UNSUPPORTED";
    case EM_ERROR_RUNTIME: return "EM_ERROR_RUNTIME";
    case EM_ERROR_LIMIT: return "EM_ERROR_LIMIT";
    }
    return "EM_RESULT_UNKNOWN";
}

enum em_result
em_vfail(struct em_error *err, enum em_result r, const char *fmt, va_list args)
{
    if (err)
        vsnprintf(err->message, sizeof err->message, fmt, args);
    return r;
}

enum em_result
em_fail(struct em_error *err, enum em_result r, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    em_vfail(err, r, fmt, args);
    va_end(args);
    return r;
}

const char *
em_device_name(enum em_device device)
{
    switch (device) {
    case EM_DEVICE_HEAD: return "head";
    case EM_DEVICE_LEFT_HAND: return "left";
    case EM_DEVICE_RIGHT_HAND: return "right";
    case EM_DEVICE_COUNT: break;
    }
    return "unknown";
}

static const char *const k_tracker_names[EM_TRACKER_COUNT] = {
    "pelvis",    "chest",      "left_foot",  "right_foot",
    "left_knee", "right_knee", "left_elbow", "right_elbow",
};

const char *
em_tracker_name(enum em_tracker tracker)
{
    if ((int)tracker < 0 || tracker >= EM_TRACKER_COUNT)
        return "unknown";
    return k_tracker_names[tracker];
}

int
em_tracker_find(const char *name)
{
    for (int t = 0; t < EM_TRACKER_COUNT; ++t)
        if (strcmp(name, k_tracker_names[t]) == 0)
            return t;
    return -1;
}
