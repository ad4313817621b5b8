/*
 * Logging for the program's outer modules (app, xr, render, out). The core (math,
 * skeleton, ik, body, stream) never logs: it returns results and error messages.
 *
 * Messages go to stderr as "embody: warning: ...". The level is set once at start.
 */
#ifndef EMBODY_U_LOG_H
#define EMBODY_U_LOG_H

#include <stdbool.h>

enum u_log_level {
    U_LOG_DEBUG = 0,
    U_LOG_INFO = 1,
    U_LOG_WARN = 2,
    U_LOG_ERROR = 3,
    U_LOG_SILENT = 4,
};

void
u_log_set_level(enum u_log_level level);

enum u_log_level
u_log_get_level(void);

void
u_log(enum u_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define U_LOG_D(...) u_log(U_LOG_DEBUG, __VA_ARGS__)
#define U_LOG_I(...) u_log(U_LOG_INFO, __VA_ARGS__)
#define U_LOG_W(...) u_log(U_LOG_WARN, __VA_ARGS__)
#define U_LOG_E(...) u_log(U_LOG_ERROR, __VA_ARGS__)

#endif
