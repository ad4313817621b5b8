/* Running the embody program from tests (app_run.h). */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "app_run.h"

#define MAX_ARGS 64

static const char *g_program;
static long g_file_size_limit; /* bytes; 0 = none */

void
app_run_set_file_size_limit(long bytes)
{
    g_file_size_limit = bytes;
}

void
app_run_set_program(const char *path)
{
    g_program = path;
}

bool
app_run_set_program_from_args(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH/TO/embody\n", argv[0]);
        return false;
    }
    app_run_set_program(argv[1]);
    return true;
}

const char *
app_run_program(void)
{
    if (!g_program)
        fail_msg("the test needs the program's path as its first argument");
    return g_program;
}

static double
now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A growing buffer for one of the child's outputs. */
struct buffer {
    char *data;
    size_t size;
    size_t capacity;
};

static void
buffer_append(struct buffer *b, const char *bytes, size_t n)
{
    if (b->size + n + 1 > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 4096;
        while (b->size + n + 1 > capacity)
            capacity *= 2;
        char *grown = realloc(b->data, capacity);
        if (!grown)
            fail_msg("out of memory capturing the program's output");
        b->data = grown;
        b->capacity = capacity;
    }
    memcpy(b->data + b->size, bytes, n);
    b->size += n;
    b->data[b->size] = '\0';
}

/* In the child: applies the environment changes, connects the pipes, runs the program. */
static void
exec_child(const char *const *argv, const char *const *env, int out_fd, int err_fd)
{
    for (int i = 0; env && env[i]; ++i) {
        const char *eq = strchr(env[i], '=');
        if (eq) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
            setenv(name, eq + 1, 1);
        } else {
            unsetenv(env[i]);
        }
    }
    if (g_file_size_limit > 0) {
        /* A "full disk": writes past the limit fail with EFBIG (the signal ignored). */
        const struct rlimit limit = {(rlim_t)g_file_size_limit, (rlim_t)g_file_size_limit};
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &limit);
    }
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    close(out_fd);
    close(err_fd);
    execv(argv[0], (char *const *)argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* Reads both pipes until they close or the time is up. */
static bool
collect(int out_fd, int err_fd, double deadline_s, struct buffer *out, struct buffer *err)
{
    struct pollfd fds[2] = {{.fd = out_fd, .events = POLLIN}, {.fd = err_fd, .events = POLLIN}};
    struct buffer *into[2] = {out, err};
    int open_count = 2;
    while (open_count > 0) {
        const double left_s = deadline_s - now_s();
        if (left_s <= 0.0)
            return false;
        const int ready = poll(fds, 2, (int)(left_s * 1000.0) + 1);
        if (ready < 0 && errno != EINTR)
            return false;
        for (int i = 0; i < 2 && ready > 0; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char chunk[8192];
            const ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
            if (n > 0) {
                buffer_append(into[i], chunk, (size_t)n);
            } else if (n == 0 || errno != EINTR) {
                fds[i].fd = -1;
                open_count--;
            }
        }
    }
    return true;
}

void
app_run(const char *const *args, const char *const *env, int timeout_ms,
        struct app_run_result *out_result)
{
    memset(out_result, 0, sizeof *out_result);
    const char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = app_run_program();
    for (int i = 0; args[i]; ++i) {
        assert_true(argc < MAX_ARGS);
        argv[argc++] = args[i];
    }
    argv[argc] = NULL;

    int out_pipe[2], err_pipe[2];
    assert_int_equal(pipe(out_pipe), 0);
    assert_int_equal(pipe(err_pipe), 0);
    fflush(NULL);
    const double start_s = now_s();
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(out_pipe[0]);
        close(err_pipe[0]);
        exec_child(argv, env, out_pipe[1], err_pipe[1]);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    struct buffer out = {0}, err = {0};
    buffer_append(&out, "", 0);
    buffer_append(&err, "", 0);
    const bool finished =
        collect(out_pipe[0], err_pipe[0], start_s + timeout_ms * 1e-3, &out, &err);
    if (!finished)
        kill(pid, SIGKILL);
    close(out_pipe[0]);
    close(err_pipe[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    out_result->seconds = now_s() - start_s;
    out_result->timed_out = !finished;
    out_result->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    out_result->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    out_result->out = out.data;
    out_result->err = err.data;
}

void
app_run_result_fini(struct app_run_result *result)
{
    free(result->out);
    free(result->err);
    memset(result, 0, sizeof *result);
}

void
app_run_expect_exit(const struct app_run_result *result, int code)
{
    if (result->timed_out)
        fail_msg("the program ran past its time limit (%.1f s)\nstdout:\n%s\nstderr:\n%s",
                 result->seconds, result->out, result->err);
    if (result->exit_code != code)
        fail_msg("exit code %d (signal %d), expected %d\nstdout:\n%s\nstderr:\n%s",
                 result->exit_code, result->signal, code, result->out, result->err);
}

void
app_run_expect_text(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("expected \"%s\" in:\n%s", needle, text);
}

int
app_run_count_text(const char *text, const char *needle)
{
    int count = 0;
    const size_t n = strlen(needle);
    for (const char *p = strstr(text, needle); p; p = strstr(p + n, needle))
        count++;
    return count;
}

void
app_run_scratch_path(const char *tag, const char *ext, char *out, size_t size)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/app/tmp", EMBODY_BINARY_DIR);
    mkdir(dir, 0777);
    snprintf(out, size, "%s/%s-%d.%s", dir, tag, (int)getpid(), ext);
}

void
app_run_source_path(const char *relative, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", EMBODY_SOURCE_DIR, relative);
}

char *
app_run_read_file(const char *path, size_t *out_size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    struct buffer b = {0};
    buffer_append(&b, "", 0);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buffer_append(&b, chunk, n);
    fclose(f);
    if (out_size)
        *out_size = b.size;
    return b.data;
}

void
app_run_copy_file(const char *from, const char *to)
{
    size_t size = 0;
    char *text = app_run_read_file(from, &size);
    FILE *f = fopen(to, "wb");
    if (!f)
        fail_msg("cannot create %s: %s", to, strerror(errno));
    assert_int_equal(fwrite(text, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
    free(text);
}
