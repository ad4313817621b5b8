/*
 * A VMC sender in a child process, for tests of `--vmc-in`: embody's own VMC output
 * sends the same frame to 127.0.0.1:port every 10 ms.
 */
#ifndef EMBODY_TESTS_VMC_SENDER_H
#define EMBODY_TESTS_VMC_SENDER_H

#include <sys/types.h>

#include "embody/tracking.h"

/* Forks; the child sends `frame` `sends` times, 10 ms apart, then exits (status 1 if it
 * could not start). Returns the child's pid to the parent. */
pid_t vmc_sender_start(int port, const struct em_tracking_frame *frame, int sends);

#endif
