/*
 * The one place every XrResult is checked: failures are logged with the call's text, the
 * result's name (from the Khronos reflection header) and file:line, remembered for error
 * messages, and losses of the session or instance are noted for the state machine.
 */
#include <stdio.h>
#include <string.h>

#include <openxr/openxr_reflection.h>

#include "util/u_log.h"
#include "xr/oxr_internal.h"

const char *
oxr_result_name(XrResult result)
{
#define OXR_RESULT_CASE(name, value)                                                       \
    case name:                                                                             \
        return #name;
    switch (result) {
        XR_LIST_ENUM_XrResult(OXR_RESULT_CASE)
    default:
        break;
    }
#undef OXR_RESULT_CASE
    return XR_SUCCEEDED(result) ? "XR_UNKNOWN_SUCCESS" : "XR_UNKNOWN_FAILURE";
}

const char *
oxr_session_state_name(XrSessionState state)
{
#define OXR_STATE_CASE(name, value)                                                        \
    case name:                                                                             \
        return &#name[sizeof "XR_SESSION_STATE_" - 1];
    switch (state) {
        XR_LIST_ENUM_XrSessionState(OXR_STATE_CASE)
    default:
        break;
    }
#undef OXR_STATE_CASE
    return "UNKNOWN";
}

/* The path from "src/" on, so messages name files the same way wherever the build is. */
static const char *
short_file(const char *file)
{
    const char *src = strstr(file, "src/xr/");
    return src ? src : file;
}

/* True the first time `result` is seen by this source (always without one). */
static bool
first_of_its_kind(struct oxr_source *ox, XrResult result)
{
    if (!ox)
        return true;
    const int n = ox->specials_logged_count;
    for (int i = 0; i < n; ++i)
        if (ox->specials_logged[i] == result)
            return false;
    if (n < (int)(sizeof ox->specials_logged / sizeof ox->specials_logged[0])) {
        ox->specials_logged[n] = result;
        ox->specials_logged_count = n + 1;
    }
    return true;
}

XrResult
oxr_check(struct oxr_source *ox, XrResult result, bool quiet, const char *call,
          const char *file, int line)
{
    if (result == XR_SUCCESS)
        return result;
    const char *name = oxr_result_name(result);
    if (XR_SUCCEEDED(result)) {
        /* Special successes (XR_SESSION_NOT_FOCUSED, XR_FRAME_DISCARDED, ...) are
         * information, not problems; many come every frame, so each kind is logged once. */
        if (first_of_its_kind(ox, result))
            U_LOG_D("openxr: %s: %s (%s:%d; further ones not logged)", call, name, short_file(file),
                    line);
        return result;
    }
    if (ox) {
        snprintf(ox->last_failure, sizeof ox->last_failure, "%.*s: %s (%s:%d)",
                 (int)strcspn(call, "("), call, name, short_file(file), line);
        if (result == XR_ERROR_SESSION_LOST)
            ox->session_lost = true;
        if (result == XR_ERROR_INSTANCE_LOST)
            ox->instance_lost = true;
    }
    const bool loss = result == XR_ERROR_SESSION_LOST || result == XR_ERROR_INSTANCE_LOST;
    u_log(quiet ? U_LOG_DEBUG : (loss ? U_LOG_WARN : U_LOG_ERROR), "openxr: %s failed: %s (%s:%d)",
          call, name, short_file(file), line);
    return result;
}
