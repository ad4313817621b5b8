/* Writing output files all or nothing (u_file.h). */
#define _XOPEN_SOURCE 700 /* realpath, fchmod */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/u_file.h"

/* The mode a newly created file gets: 0666 less the process's umask. */
static mode_t
new_file_mode(void)
{
    const mode_t mask = umask(0);
    umask(mask);
    return (mode_t)(0666 & ~mask);
}

/* The file the path leads to: a symbolic link's target, so that the link is kept and its
 * file replaced (a dangling link is replaced itself). */
static void
resolve_target(const char *path, char *out, size_t out_size)
{
    struct stat st;
    char *real = NULL;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        real = realpath(path, NULL);
    snprintf(out, out_size, "%s", real ? real : path);
    free(real);
}

/* "<folder>/.<name>.XXXXXX" for `target`. */
static bool
temp_template(const char *target, char *out, size_t out_size)
{
    const char *slash = strrchr(target, '/');
    int n;
    if (!slash)
        n = snprintf(out, out_size, ".%s.XXXXXX", target);
    else
        n = snprintf(out, out_size, "%.*s/.%s.XXXXXX", (int)(slash - target), target, slash + 1);
    return n > 0 && (size_t)n < out_size;
}

static enum em_result
open_in_place(struct u_out_file *f, struct em_error *err)
{
    f->file = fopen(f->target, "w");
    if (!f->file)
        return em_fail(err, EM_ERROR_IO, "%s: cannot write: %s", f->shown, strerror(errno));
    return EM_OK;
}

/* `existing`: the file being replaced, whose mode and (best effort: only root may give
 * files away) owner the new one keeps; NULL for a new file. */
static enum em_result
open_temp(struct u_out_file *f, const struct stat *existing, struct em_error *err)
{
    const mode_t mode = existing ? existing->st_mode & 07777 : new_file_mode();
    if (!temp_template(f->target, f->temp, sizeof f->temp))
        return em_fail(err, EM_ERROR_IO, "%s: cannot write: the path is too long", f->shown);
    const int fd = mkstemp(f->temp);
    if (fd < 0) {
        const int e = errno;
        f->temp[0] = '\0';
        return em_fail(err, EM_ERROR_IO, "%s: cannot write: %s", f->shown, strerror(e));
    }
    if (existing && (existing->st_uid != geteuid() || existing->st_gid != getegid()) &&
        fchown(fd, existing->st_uid, existing->st_gid) != 0) {
        /* Not allowed: the new file is ours, as any file we create. */
    }
    if (fchmod(fd, mode) != 0 || !(f->file = fdopen(fd, "w"))) {
        const int e = errno;
        close(fd);
        unlink(f->temp);
        f->temp[0] = '\0';
        return em_fail(err, EM_ERROR_IO, "%s: cannot write: %s", f->shown, strerror(e));
    }
    return EM_OK;
}


/* Moves an earlier run's "<target>.partial" aside to the first free "<...>.partial.N". */
static void
move_leftover(struct u_out_file *f)
{
    struct stat st;
    if (lstat(f->temp, &st) != 0)
        return;
    for (int n = 1; n < 1000; ++n) {
        char aside[U_FILE_PATH_MAX];
        const int len = snprintf(aside, sizeof aside, "%.4080s.%d", f->temp, n);
        if (len <= 0 || (size_t)len >= sizeof aside)
            return;
        if (lstat(aside, &st) == 0)
            continue;
        if (rename(f->temp, aside) == 0)
            memcpy(f->leftover, aside, (size_t)len + 1);
        return;
    }
}

static enum em_result
open_partial(struct u_out_file *f, const struct stat *existing, struct em_error *err)
{
    const mode_t mode = existing ? existing->st_mode & 07777 : new_file_mode();
    const int n = snprintf(f->temp, sizeof f->temp, "%s.partial", f->target);
    if (n <= 0 || (size_t)n >= sizeof f->temp) {
        f->temp[0] = '\0';
        return em_fail(err, EM_ERROR_IO, "%s: cannot write: the path is too long", f->shown);
    }
    move_leftover(f);
    const int fd = open(f->temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0 || !(f->file = fdopen(fd, "w"))) {
        const int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(f->temp);
        }
        f->temp[0] = '\0';
        return em_fail(err, EM_ERROR_IO, "%s: cannot write: %s", f->shown, strerror(e));
    }
    f->keep_on_failure = true;
    return EM_OK;
}

/* What u_out_file_open and u_out_file_open_partial share: the path's checks, the target
 * behind links, a folder refused, a device written in place; `open_new` opens a regular
 * or new file the way its caller writes it. `reserve` is what the way adds to the path. */
static enum em_result
out_file_open_with(const char *path, size_t reserve,
                   enum em_result (*open_new)(struct u_out_file *, const struct stat *,
                                              struct em_error *),
                   struct u_out_file **out_file, struct em_error *err)
{
    *out_file = NULL;
    if (!path || !path[0])
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "expected a file name to write, got \"\"");
    if (strlen(path) >= U_FILE_PATH_MAX - reserve)
        return em_fail(err, EM_ERROR_IO, "%.80s...: cannot write: the path is too long", path);
    struct u_out_file *f = calloc(1, sizeof *f);
    if (!f)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    snprintf(f->shown, sizeof f->shown, "%s", path);
    resolve_target(path, f->target, sizeof f->target);
    struct stat st;
    enum em_result r;
    if (stat(f->target, &st) != 0)
        r = open_new(f, NULL, err);
    else if (S_ISDIR(st.st_mode))
        r = em_fail(err, EM_ERROR_IO, "%s: cannot write: is a folder, expected a file name",
                    f->shown);
    else if (!S_ISREG(st.st_mode))
        r = open_in_place(f, err);
    else
        r = open_new(f, &st, err);
    if (r != EM_OK) {
        free(f);
        return r;
    }
    *out_file = f;
    return EM_OK;
}

enum em_result
u_out_file_open(const char *path, struct u_out_file **out_file, struct em_error *err)
{
    return out_file_open_with(path, 0, open_temp, out_file, err);
}

enum em_result
u_out_file_open_partial(const char *path, struct u_out_file **out_file, struct em_error *err)
{
    return out_file_open_with(path, 16, open_partial, out_file, err);
}

/* Flushes and closes; false (with errno's reason in `err`) on any write error. */
static bool
close_checked(struct u_out_file *f, struct em_error *err)
{
    bool ok = fflush(f->file) == 0 && !ferror(f->file);
    int e = errno;
    /* Data on the disk before the rename: after a crash the target is old or new, whole. */
    if (ok && f->temp[0] && fsync(fileno(f->file)) != 0 && errno != EINVAL) {
        ok = false;
        e = errno;
    }
    if (fclose(f->file) != 0 && ok) {
        ok = false;
        e = errno;
    }
    f->file = NULL;
    if (!ok)
        em_fail(err, EM_ERROR_IO, "%s: write error: %s", f->shown, strerror(e ? e : EIO));
    return ok;
}

enum em_result
u_out_file_commit(struct u_out_file **file, struct em_error *err)
{
    struct u_out_file *f = *file;
    if (!f)
        return EM_OK;
    *file = NULL;
    errno = 0;
    enum em_result r = close_checked(f, err) ? EM_OK : EM_ERROR_IO;
    if (r == EM_OK && f->temp[0] && rename(f->temp, f->target) != 0)
        r = em_fail(err, EM_ERROR_IO, "%s: cannot write: %s", f->shown, strerror(errno));
    if (r != EM_OK && f->temp[0] && !f->keep_on_failure)
        unlink(f->temp);
    free(f);
    return r;
}

void
u_out_file_abort(struct u_out_file **file)
{
    struct u_out_file *f = *file;
    if (!f)
        return;
    *file = NULL;
    if (f->file)
        fclose(f->file);
    if (f->temp[0] && !f->keep_on_failure)
        unlink(f->temp);
    free(f);
}

enum em_result
u_file_write_all(const char *path, const void *data, size_t size, struct em_error *err)
{
    struct u_out_file *f = NULL;
    const enum em_result r = u_out_file_open(path, &f, err);
    if (r != EM_OK)
        return r;
    if (size > 0 && fwrite(data, 1, size, f->file) != size) {
        const int e = errno;
        u_out_file_abort(&f);
        return em_fail(err, EM_ERROR_IO, "%s: write error: %s", path, strerror(e ? e : EIO));
    }
    return u_out_file_commit(&f, err);
}

bool
u_file_same(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}
