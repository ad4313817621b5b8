/*
 * A small checked OSC 1.0 reader for untrusted datagrams (VMC input, osc_vmc_in.c): the
 * whole packet's structure is checked before any message in it is handed on, so a
 * datagram is either read whole or refused whole. Why our own: liblo's bundle decoder
 * reads past the datagram when a nested bundle's element runs past its end (issue 20),
 * and it queues bundles timetagged in the future without bound; a tracker stream is live,
 * so every bundle is dispatched at once, whatever its timetag, and nothing is kept.
 */
#ifndef EMBODY_OSC_IN_DECODE_H
#define EMBODY_OSC_IN_DECODE_H

#include <stddef.h>
#include <stdint.h>

#define OSC_IN_MAX_DEPTH 8 /* bundles within bundles; deeper is refused */
#define OSC_IN_MAX_ARGS 16 /* arguments kept per message (more are checked, not kept) */

/* One message of a checked packet; pointers into the packet (valid during the call). */
struct osc_in_message {
    const char *path;  /* NUL-terminated, starts with '/' */
    const char *types; /* the type tags without the ',' ("" when none) */
    int argc;          /* strlen(types) */
    const uint8_t *arg[OSC_IN_MAX_ARGS]; /* each argument's bytes (big-endian) */
};

typedef void (*osc_in_message_fn)(const struct osc_in_message *message, void *user);

/* Checks the OSC packet `data` (`size` bytes: a message or a bundle) and, only when all
 * of it is well formed, calls `on_message` for every message in order (bundles dispatched
 * at once, their timetags ignored). Well formed: sizes multiples of 4, every bundle
 * element's size within what remains of its bundle, bundles nested at most
 * OSC_IN_MAX_DEPTH deep, strings NUL-terminated and padded within bounds, addresses
 * starting with '/', every type tag known and matched by exactly the data that follows.
 * Returns the number of messages, or -1 when the packet is refused (nothing called);
 * `out_why` (may be NULL) then says why, a static string. */
int osc_in_decode(const uint8_t *data, size_t size, osc_in_message_fn on_message, void *user,
                  const char **out_why);

/* The float argument `i` of `message` (type 'f'). */
float osc_in_float(const struct osc_in_message *message, int i);

/* Writes at most `max_chars` characters of network text `text` into `out` (`out_size`
 * bytes), every character outside printable ASCII as '?', and "..." when cut: what may
 * be logged of a string that came from the network. */
void osc_in_printable(const char *text, size_t max_chars, char *out, size_t out_size);

#endif
