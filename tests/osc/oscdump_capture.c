/*
 * Test helper: runs Debian's oscdump as an independent OSC receiver and parses what it
 * prints (see oscdump_capture.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lo/lo.h>

#include "oscdump_capture.h"

#define READY_ADDRESS "/oscdump_capture/ready"

static long long
now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int
oscdump_free_udp_port(void)
{
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* ---- Parsing ------------------------------------------------------------------------ */

/* Copies the next space-separated token (a "quoted string" whole, without its quotes)
 * into `out`; returns false at the end of the line. */
static bool
next_token(const char **cursor, char *out, size_t out_size)
{
    const char *c = *cursor;
    while (*c == ' ' || *c == '\t')
        ++c;
    if (!*c)
        return false;
    const char *begin = c, *end;
    if (*c == '"') {
        begin = ++c;
        /* The closing quote is the last '"' before a space or the end. */
        end = NULL;
        for (; *c; ++c)
            if (*c == '"' && (c[1] == ' ' || c[1] == '\0'))
                end = c;
            else if (end && *c == ' ')
                break;
        if (!end)
            return false;
        c = end + 1;
    } else {
        while (*c && *c != ' ' && *c != '\t')
            ++c;
        end = c;
    }
    size_t n = (size_t)(end - begin);
    if (n >= out_size)
        n = out_size - 1;
    memcpy(out, begin, n);
    out[n] = '\0';
    *cursor = c;
    return true;
}

/* Copies `token` into `out` if it fits whole. */
static bool
copy_whole(char *out, size_t out_size, const char *token)
{
    const size_t n = strlen(token);
    if (n >= out_size)
        return false;
    memcpy(out, token, n + 1);
    return true;
}

bool
oscdump_parse_line(const char *line, struct oscdump_message *out)
{
    memset(out, 0, sizeof *out);
    const char *c = line;
    char token[256];
    if (!next_token(&c, token, sizeof token))
        return false;
    if (token[0] != '/') { /* oscdump starts with the time tag "xxxxxxxx.xxxxxxxx" */
        if (!next_token(&c, token, sizeof token))
            return false;
    }
    if (token[0] != '/' || !copy_whole(out->address, sizeof out->address, token))
        return false;
    if (!next_token(&c, token, sizeof token))
        return true; /* no arguments */
    if (!copy_whole(out->types, sizeof out->types, token))
        return false;
    for (const char *t = out->types; *t; ++t) {
        struct oscdump_arg *a = &out->arg[out->arg_count];
        a->type = *t;
        if (!next_token(&c, token, sizeof token))
            return false;
        if (!copy_whole(a->text, sizeof a->text, token))
            return false;
        if (*t == 'i' || *t == 'h' || *t == 'f' || *t == 'd') {
            char *end = NULL;
            a->number = strtod(token, &end);
            if (end == token || *end != '\0')
                return false;
        }
        ++out->arg_count;
    }
    return true;
}

/* ---- The child process ---------------------------------------------------------------- */

static void
add_line(struct oscdump_capture *cap, const char *line)
{
    struct oscdump_message m;
    if (!oscdump_parse_line(line, &m)) {
        if (*line) {
            ++cap->unparsed_lines;
            snprintf(cap->last_unparsed, sizeof cap->last_unparsed, "%s", line);
        }
        return;
    }
    if (cap->count == cap->capacity) {
        const int capacity = cap->capacity ? cap->capacity * 2 : 256;
        struct oscdump_message *grown =
            realloc(cap->messages, (size_t)capacity * sizeof *cap->messages);
        if (!grown)
            return; /* the test then misses messages and says so */
        cap->messages = grown;
        cap->capacity = capacity;
    }
    cap->messages[cap->count++] = m;
}

int
oscdump_poll(struct oscdump_capture *cap, int timeout_ms)
{
    if (cap->out_fd < 0)
        return cap->count;
    struct pollfd p = {.fd = cap->out_fd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) <= 0)
        return cap->count;
    for (;;) {
        const size_t room = sizeof cap->pending - 1 - cap->pending_len;
        const ssize_t n = read(cap->out_fd, cap->pending + cap->pending_len, room);
        if (n <= 0)
            break;
        cap->pending_len += (size_t)n;
        cap->pending[cap->pending_len] = '\0';
        char *line = cap->pending, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            add_line(cap, line);
            line = nl + 1;
        }
        cap->pending_len = strlen(line);
        memmove(cap->pending, line, cap->pending_len + 1);
        if (cap->pending_len == sizeof cap->pending - 1) /* an absurd line: drop it */
            cap->pending_len = 0;
    }
    return cap->count;
}

bool
oscdump_wait_for_count(struct oscdump_capture *cap, int count, int timeout_ms)
{
    const long long deadline = now_ms() + timeout_ms;
    while (cap->count < count) {
        const long long left = deadline - now_ms();
        if (left <= 0)
            return false;
        oscdump_poll(cap, (int)(left < 50 ? left : 50));
    }
    return true;
}

void
oscdump_clear(struct oscdump_capture *cap)
{
    cap->count = 0;
    cap->unparsed_lines = 0;
    cap->last_unparsed[0] = '\0';
}

int
oscdump_find(const struct oscdump_capture *cap, int from, const char *address,
             const char *first_text)
{
    for (int i = from < 0 ? 0 : from; i < cap->count; ++i) {
        const struct oscdump_message *m = &cap->messages[i];
        if (strcmp(m->address, address) != 0)
            continue;
        if (first_text && (m->arg_count < 1 || strcmp(m->arg[0].text, first_text) != 0))
            continue;
        return i;
    }
    return -1;
}

void
oscdump_stop(struct oscdump_capture *cap)
{
    if (cap->pid > 0) {
        kill(cap->pid, SIGTERM);
        int status;
        const long long deadline = now_ms() + 2000;
        while (waitpid(cap->pid, &status, WNOHANG) == 0) {
            if (now_ms() > deadline) {
                kill(cap->pid, SIGKILL);
                waitpid(cap->pid, &status, 0);
                break;
            }
            const struct timespec pause = {.tv_sec = 0, .tv_nsec = 5000000};
            nanosleep(&pause, NULL);
        }
    }
    cap->pid = -1;
    if (cap->out_fd >= 0)
        close(cap->out_fd);
    cap->out_fd = -1;
    free(cap->messages);
    cap->messages = NULL;
    cap->count = cap->capacity = 0;
}

static pid_t
spawn_oscdump(int port, int *out_fd)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        /* The child: stdout and stderr into the pipe; dies with the test. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        char port_text[16];
        snprintf(port_text, sizeof port_text, "%d", port);
        execl(OSCDUMP_PATH, "oscdump", "-L", port_text, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    *out_fd = fds[0];
    return pid;
}

/* Sends probes until one comes out of oscdump, which proves it listens. */
static bool
wait_ready(struct oscdump_capture *cap, int timeout_ms, char *out_reason, size_t reason_size)
{
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", cap->port);
    lo_address to = lo_address_new("127.0.0.1", port_text);
    if (!to) {
        snprintf(out_reason, reason_size, "liblo cannot make an address for port %d", cap->port);
        return false;
    }
    const long long deadline = now_ms() + timeout_ms;
    bool ready = false;
    for (int probe = 0; !ready && now_ms() < deadline; ++probe) {
        lo_message m = lo_message_new();
        lo_message_add_int32(m, probe);
        lo_send_message(to, READY_ADDRESS, m);
        lo_message_free(m);
        oscdump_poll(cap, 20);
        ready = oscdump_find(cap, 0, READY_ADDRESS, NULL) >= 0;
        int status;
        if (!ready && waitpid(cap->pid, &status, WNOHANG) == cap->pid) {
            cap->pid = -1;
            oscdump_poll(cap, 0);
            snprintf(out_reason, reason_size, "oscdump on port %d exited: %s", cap->port,
                     cap->last_unparsed[0] ? cap->last_unparsed : "(no output)");
            break;
        }
    }
    lo_address_free(to);
    if (!ready && cap->pid > 0)
        snprintf(out_reason, reason_size, "oscdump on port %d printed nothing within %d ms",
                 cap->port, timeout_ms);
    return ready;
}

bool
oscdump_start(struct oscdump_capture *cap, int port, char *out_reason, size_t reason_size)
{
    memset(cap, 0, sizeof *cap);
    cap->pid = -1;
    cap->out_fd = -1;
    snprintf(out_reason, reason_size, "not started");
    if (access(OSCDUMP_PATH, X_OK) != 0) {
        snprintf(out_reason, reason_size, "%s is missing: install liblo-tools", OSCDUMP_PATH);
        return false;
    }
    /* A port picked by the kernel may be taken again before oscdump binds it: retry. */
    for (int attempt = 0; attempt < (port ? 1 : 5); ++attempt) {
        cap->port = port ? port : oscdump_free_udp_port();
        cap->pid = spawn_oscdump(cap->port, &cap->out_fd);
        if (cap->pid < 0) {
            snprintf(out_reason, reason_size, "cannot start oscdump: %s", strerror(errno));
            return false;
        }
        if (wait_ready(cap, 5000, out_reason, reason_size)) {
            oscdump_clear(cap);
            return true;
        }
        oscdump_stop(cap);
    }
    return false;
}
