/* Writing output files all or nothing (u_file.h). */
#define _GNU_SOURCE /* realpath, fchmod, renameat2 (glibc 2.28+) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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


/* Moves `from` to `to` unless something is at `to` (then -1 with errno EEXIST): never
 * replaces. renameat2(RENAME_NOREPLACE), or link and unlink where the file system lacks it. */
static int
move_noreplace(const char *from, const char *to)
{
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        return -1;
    if (link(from, to) != 0)
        return -1;
    unlink(from);
    return 0;
}

bool
u_file_partial_in_use(const char *path)
{
    char partial[U_FILE_PATH_MAX];
    const int n = snprintf(partial, sizeof partial, "%s.partial", path);
    if (n <= 0 || (size_t)n >= sizeof partial)
        return false;
    const int fd = open(partial, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return false;
    const bool busy = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return busy;
}

bool
u_file_numbered_name(const char *path, int number, char *out, size_t out_size)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *dot = strrchr(name, '.');
    if (dot == name)
        dot = NULL; /* ".csv" is a name, not an extension */
    const int stem_len = (int)(dot ? (size_t)(dot - path) : strlen(path));
    const int w = snprintf(out, out_size, "%.*s.%d%s", stem_len, path, number, dot ? dot : "");
    return w > 0 && (size_t)w < out_size;
}

/* Moves an earlier run's "<target>.partial" aside to the first free "<...>.partial.N".
 * A partial file another run holds locked (it is recording there now) is left alone:
 * false. */
static bool
move_leftover(struct u_out_file *f)
{
    const int fd = open(f->temp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return errno != ELOOP; /* nothing there (a symbolic link: not ours to move) */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(fd);
        return false; /* a live run's */
    }
    for (int n = 1; n < 1000; ++n) {
        char aside[U_FILE_PATH_MAX];
        const int len = snprintf(aside, sizeof aside, "%.4080s.%d", f->temp, n);
        if (len <= 0 || (size_t)len >= sizeof aside)
            break;
        if (move_noreplace(f->temp, aside) == 0) {
            memcpy(f->leftover, aside, (size_t)len + 1);
            break;
        }
        if (errno != EEXIST)
            break;
    }
    close(fd);
    return true;
}

/* The partial file appears under its name already locked (LOCK_EX, held until the commit
 * moved it): made as a hidden temporary file, locked, then moved there without replacing,
 * so another run never takes a live recording for a crashed one's leftover. */
static enum em_result
open_partial(struct u_out_file *f, const struct stat *existing, struct em_error *err)
{
    const int n = snprintf(f->temp, sizeof f->temp, "%s.partial", f->target);
    if (n <= 0 || (size_t)n >= sizeof f->temp) {
        f->temp[0] = '\0';
        return em_fail(err, EM_ERROR_IO, "%s: cannot write: the path is too long", f->shown);
    }
    if (!move_leftover(f)) {
        const enum em_result r =
            em_fail(err, EM_ERROR_IO, "%s: cannot write: %s is being written by another run",
                    f->shown, f->temp);
        f->temp[0] = '\0';
        errno = EBUSY;
        return r;
    }
    char partial[U_FILE_PATH_MAX];
    memcpy(partial, f->temp, (size_t)n + 1);
    enum em_result r = open_temp(f, existing, err); /* f->temp: the hidden file */
    if (r != EM_OK) {
        f->temp[0] = '\0';
        return r;
    }
    const int fd = fileno(f->file);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 || move_noreplace(f->temp, partial) != 0) {
        const int e = errno;
        fclose(f->file);
        f->file = NULL;
        unlink(f->temp);
        f->temp[0] = '\0';
        if (e == EEXIST || e == EWOULDBLOCK) {
            errno = EBUSY;
            return em_fail(err, EM_ERROR_IO,
                           "%s: cannot write: %s is being written by another run", f->shown,
                           partial);
        }
        errno = e;
        return em_fail(err, EM_ERROR_IO, "%s: cannot write: %s", f->shown, strerror(e));
    }
    memcpy(f->temp, partial, (size_t)n + 1);
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

/* Flushes (and syncs, for a temporary file); false (with errno's reason in `err`) on any
 * write error. The file stays open: a partial file keeps its lock until it is moved. */
static bool
flush_checked(struct u_out_file *f, struct em_error *err)
{
    bool ok = fflush(f->file) == 0 && !ferror(f->file);
    int e = errno;
    /* Data on the disk before the rename: after a crash the target is old or new, whole. */
    if (ok && f->temp[0] && fsync(fileno(f->file)) != 0 && errno != EINVAL) {
        ok = false;
        e = errno;
    }
    if (!ok)
        em_fail(err, EM_ERROR_IO, "%s: write error: %s", f->shown, strerror(e ? e : EIO));
    return ok;
}

/* Closes; false (with the reason in `err`, unless `ok` was false already) on an error. */
static bool
close_checked(struct u_out_file *f, bool ok, struct em_error *err)
{
    errno = 0;
    if (fclose(f->file) != 0 && ok) {
        ok = false;
        em_fail(err, EM_ERROR_IO, "%s: write error: %s", f->shown, strerror(errno ? errno : EIO));
    }
    f->file = NULL;
    return ok;
}

/* A partial file's end: moved to the target, never over a file that appeared there
 * meanwhile (then to the first free "STEM.N.EXT" with no live partial file, named in
 * `saved`). */
static enum em_result
commit_partial(struct u_out_file *f, char *saved, size_t saved_size, struct em_error *err)
{
    if (move_noreplace(f->temp, f->target) == 0) {
        if (saved)
            snprintf(saved, saved_size, "%s", f->target);
        return EM_OK;
    }
    for (int n = 1; errno == EEXIST && n <= U_FILE_NUMBERED_MAX; ++n) {
        char other[U_FILE_PATH_MAX];
        if (!u_file_numbered_name(f->target, n, other, sizeof other))
            return em_fail(err, EM_ERROR_IO,
                           "%s: cannot write: a file appeared there and a numbered name "
                           "would be too long",
                           f->shown);
        if (u_file_partial_in_use(other)) {
            errno = EEXIST;
            continue;
        }
        if (move_noreplace(f->temp, other) == 0) {
            if (saved)
                snprintf(saved, saved_size, "%s", other);
            return EM_OK;
        }
    }
    return em_fail(err, EM_ERROR_IO, "%s: cannot write: %s", f->shown, strerror(errno));
}

enum em_result
u_out_file_commit_as(struct u_out_file **file, char *saved, size_t saved_size,
                     struct em_error *err)
{
    if (saved && saved_size)
        saved[0] = '\0';
    struct u_out_file *f = *file;
    if (!f)
        return EM_OK;
    *file = NULL;
    errno = 0;
    bool ok = flush_checked(f, err);
    enum em_result r = EM_OK;
    if (f->keep_on_failure) {
        /* Moved while still open and locked: no other run takes it for a leftover. */
        if (ok && commit_partial(f, saved, saved_size, err) == EM_OK) {
            fclose(f->file); /* synced and moved: the recording is whole where it is */
            f->file = NULL;
        } else {
            ok = false;
            close_checked(f, false, err);
        }
    } else {
        ok = close_checked(f, ok, err);
        if (ok && f->temp[0] && rename(f->temp, f->target) != 0) {
            em_fail(err, EM_ERROR_IO, "%s: cannot write: %s", f->shown, strerror(errno));
            ok = false;
        }
        if (ok && saved)
            snprintf(saved, saved_size, "%s", f->target);
    }
    if (!ok)
        r = EM_ERROR_IO;
    if (r != EM_OK && f->temp[0] && !f->keep_on_failure)
        unlink(f->temp);
    free(f);
    return r;
}

enum em_result
u_out_file_commit(struct u_out_file **file, struct em_error *err)
{
    return u_out_file_commit_as(file, NULL, 0, err);
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
