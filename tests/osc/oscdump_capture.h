/*
 * Test helper: an independent OSC receiver to check what embody sends. Starts Debian's
 * `oscdump` (liblo-tools) on a free loopback UDP port as a child process, reads what it
 * prints ("[timetag] /address typetags values..." per message, bundles unpacked), and
 * parses each line into a message. Reusable by any test that sends OSC (the out module's
 * tests, the program's end-to-end test).
 *
 *     struct oscdump_capture cap;
 *     char why[256];
 *     if (!oscdump_start(&cap, 0, why, sizeof why)) fail_msg("%s", why);
 *     ... send to 127.0.0.1:cap.port ...
 *     oscdump_wait_for_count(&cap, 25, 5000);
 *     ... look at cap.messages[0 .. cap.count) ...
 *     oscdump_stop(&cap);   // always: kills and reaps the child
 */
#ifndef EMBODY_TESTS_OSCDUMP_CAPTURE_H
#define EMBODY_TESTS_OSCDUMP_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define OSCDUMP_PATH "/usr/bin/oscdump"
#define OSCDUMP_MAX_ARGS 16
#define OSCDUMP_TEXT_MAX 64

struct oscdump_arg {
    char type;                   /* the OSC type tag: 'i', 'f', 's', ... */
    double number;               /* i, h, f, d */
    char text[OSCDUMP_TEXT_MAX]; /* s, S; and the raw token of any other type */
};

struct oscdump_message {
    char address[128];
    char types[OSCDUMP_MAX_ARGS + 1]; /* the type tags without the leading ',' */
    int arg_count;
    struct oscdump_arg arg[OSCDUMP_MAX_ARGS];
};

struct oscdump_capture {
    int port;    /* the UDP port oscdump listens on (all interfaces) */
    pid_t pid;   /* the child, or -1 */
    int out_fd;  /* its stdout and stderr, or -1 */
    char pending[16384]; /* output not yet ending in a newline */
    size_t pending_len;
    struct oscdump_message *messages; /* parsed, in arrival order */
    int count;
    int capacity;
    int unparsed_lines; /* lines that were not a message (oscdump's own errors...) */
    char last_unparsed[256];
};

/* Starts oscdump listening on `port` (0 = pick a free one) and waits until it is ready
 * (probe messages sent with liblo arrive), then clears what was captured. On failure
 * returns false, writes why into `out_reason`, and leaves nothing running. */
bool
oscdump_start(struct oscdump_capture *cap, int port, char *out_reason, size_t reason_size);

/* Kills and reaps oscdump (safe to call twice, and on a capture that never started) and
 * frees the captured messages. */
void
oscdump_stop(struct oscdump_capture *cap);

/* Reads whatever oscdump printed, waiting up to `timeout_ms` for the first bytes; returns
 * the number of messages captured so far. */
int
oscdump_poll(struct oscdump_capture *cap, int timeout_ms);

/* Polls until at least `count` messages are captured or `timeout_ms` has passed. */
bool
oscdump_wait_for_count(struct oscdump_capture *cap, int count, int timeout_ms);

/* Forgets the captured messages (keeps oscdump running). */
void
oscdump_clear(struct oscdump_capture *cap);

/* Index of the first message at or after `from` with `address` (and, when `first_text` is
 * not NULL, a first string argument equal to it), or -1. */
int
oscdump_find(const struct oscdump_capture *cap, int from, const char *address,
             const char *first_text);

/* Parses one line of oscdump's output. */
bool
oscdump_parse_line(const char *line, struct oscdump_message *out);

/* A UDP port on loopback that nothing listens on right now (the kernel's pick). */
int
oscdump_free_udp_port(void);

#endif
