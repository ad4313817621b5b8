/* Monotonic clock and sleeping (u_time.h). */
#include <errno.h>
#include <time.h>

#include "util/u_time.h"

int64_t
u_time_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void
u_time_sleep_ns(int64_t ns)
{
    if (ns <= 0)
        return;
    struct timespec req = {.tv_sec = (time_t)(ns / 1000000000LL),
                           .tv_nsec = (long)(ns % 1000000000LL)};
    struct timespec rem;
    for (int tries = 0; tries < 2 && nanosleep(&req, &rem) != 0 && errno == EINTR; ++tries)
        req = rem;
}
