/*
 * Results and error reports shared by every module.
 *
 * One signed result enum with OpenXR's sign convention: 0 is success, > 0 a special
 * success, < 0 an error. Functions that read something from outside (files, options, a
 * runtime) also fill a `struct em_error` with a sentence naming the file and line or field
 * and what was expected, so the caller can print it; the core itself never prints.
 */
#ifndef EMBODY_RESULT_H
#define EMBODY_RESULT_H

#include <stdarg.h>

#include "embody/export.h"

#ifdef __cplusplus
extern "C" {
#endif

enum em_result {
    EM_OK = 0,
    EM_END_OF_STREAM = 1, /* a source has no more frames; not an error */
    EM_NOT_READY = 2,     /* nothing new yet (for example a session that is not running) */

    EM_ERROR_INVALID_ARGUMENT = -1,
    EM_ERROR_IO = -2,
    EM_ERROR_PARSE = -3,
    EM_ERROR_OUT_OF_MEMORY = -4,
    EM_ERROR_UNSUPPORTED = -5,
    EM_ERROR_RUNTIME = -6, /* the OpenXR runtime or another external service failed */
    EM_ERROR_LIMIT = -7,   /* a fixed capacity (joints, effectors, columns) was exceeded */
};

/* The enum's name for `r` ("EM_ERROR_PARSE"); never NULL. */
EMBODY_API const char *
em_result_string(enum em_result r);

#define EM_ERROR_MESSAGE_MAX 512

/* A human-readable reason for a failure, for example
 * "config/humanoid.json: joints[3].parent: unknown joint \"chst\"". */
struct em_error {
    char message[EM_ERROR_MESSAGE_MAX];
};

/* Writes a printf-style message into `err` (which may be NULL) and returns `r`, so that
 * a failing check reads `return em_fail(err, EM_ERROR_PARSE, "%s:%d: ...", ...);`. */
EMBODY_API enum em_result
em_fail(struct em_error *err, enum em_result r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

EMBODY_API enum em_result
em_vfail(struct em_error *err, enum em_result r, const char *fmt, va_list args)
    __attribute__((format(printf, 3, 0)));

#ifdef __cplusplus
}
#endif

#endif
