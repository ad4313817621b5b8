/* Monotonic time for timing solves and pacing replay. */
#ifndef EMBODY_U_TIME_H
#define EMBODY_U_TIME_H

#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC. */
int64_t
u_time_now_ns(void);

/* Sleeps for `ns` nanoseconds (returns early only if interrupted twice). */
void
u_time_sleep_ns(int64_t ns);

#endif
