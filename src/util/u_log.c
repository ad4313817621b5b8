/* Logging to stderr for the outer modules (see u_log.h). */
#include <stdarg.h>
#include <stdio.h>

#include "util/u_log.h"

static enum u_log_level g_level = U_LOG_INFO;

void
u_log_set_level(enum u_log_level level)
{
    g_level = level;
}

enum u_log_level
u_log_get_level(void)
{
    return g_level;
}

void
u_log(enum u_log_level level, const char *fmt, ...)
{
    static const char *const prefix[] = {"debug: ", "", "warning: ", "error: ", ""};
    if (level < g_level || level >= U_LOG_SILENT)
        return;
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "embody: %s", prefix[level]);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
}
