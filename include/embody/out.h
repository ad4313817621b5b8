/*
 * Live pose output to other programs over OSC (liblo): the VMC protocol for VTubing and
 * avatar apps, and VRChat's OSC trackers. Sending never blocks the frame loop; an
 * unreachable destination is reported once, not every frame.
 */
#ifndef EMBODY_OUT_H
#define EMBODY_OUT_H

#include <stdbool.h>

#include "embody/result.h"
#include "embody/skeleton.h"
#include "embody/tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OSC_VMC_DEFAULT_PORT 39539
#define OSC_VRCHAT_DEFAULT_PORT 9000

/* Parses "HOST:PORT", "HOST" or ":PORT" (NULL or "" = all defaults) into `out_host`
 * (at least 256 bytes) and `out_port`; a bad value gets an error naming `option`. */
enum em_result
osc_parse_destination(const char *text, const char *option, const char *default_host,
                      int default_port, char *out_host, int *out_port, struct em_error *err);

struct osc_sender;

enum osc_protocol {
    OSC_PROTOCOL_VMC = 0,
    OSC_PROTOCOL_VRCHAT = 1,
};

enum em_result
osc_sender_create(enum osc_protocol protocol, const char *host, int port,
                  struct osc_sender **out_sender, struct em_error *err);

void
osc_sender_destroy(struct osc_sender **sender);

/* Sends one frame of the humanoid's pose (global and local rotations, positions in our
 * conventions), converted to the protocol's conventions. `time_s` is the frame time. */
void
osc_sender_send(struct osc_sender *sender, const struct sk_skeleton *skeleton,
                const struct sk_pose *pose, double time_s);

#ifdef __cplusplus
}
#endif

#endif
