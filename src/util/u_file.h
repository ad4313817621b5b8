/*
 * Writing output files so that nothing is ever lost: every file the program writes goes
 * into a temporary file beside its target (same folder, so the same file system) and is
 * renamed over the target only once everything was written and flushed. A failed write
 * (a full disk, a read-only folder, a size limit) leaves whatever was at the target as it
 * was and removes only the temporary file the program itself created.
 *
 * A target that exists and is not a regular file (a device such as /dev/null or
 * /dev/full, a pipe) is written in place and never removed or replaced: renaming over it
 * would destroy the device node.
 */
#ifndef EMBODY_U_FILE_H
#define EMBODY_U_FILE_H

#include <stdbool.h>
#include <stdio.h>

#include "embody/result.h"

#define U_FILE_PATH_MAX 4096

/* An output file being written. `file` is where to write; the rest is bookkeeping. */
struct u_out_file {
    FILE *file;
    char target[U_FILE_PATH_MAX]; /* the path to produce (symbolic links followed) */
    char temp[U_FILE_PATH_MAX];   /* the temporary file beside it, "" when in place */
    char shown[U_FILE_PATH_MAX];  /* the path as the user gave it, for messages */
    bool keep_on_failure;         /* a partial file (u_out_file_open_partial) */
    char leftover[U_FILE_PATH_MAX]; /* where an earlier run's partial file was moved, or "" */
};

/* Starts writing `path`: creates "<folder>/.<name>.XXXXXX" (mode: the existing file's, or
 * 0666 less the umask; owner: the existing file's where allowed) or, for an existing non-regular
 * file, opens it in place. Creates nothing on failure ("PATH: cannot write: REASON"). On success
 * `*out_file` is the caller's to finish with u_out_file_commit or u_out_file_abort. */
enum em_result u_out_file_open(const char *path, struct u_out_file **out_file,
                               struct em_error *err);

/* Starts writing `path` for a recording that must survive a crash: the data goes into
 * "<path>.partial", a name the user can find, held locked (flock LOCK_EX) while it is
 * written and moved to `path` by u_out_file_commit, never over a file: when one appeared
 * at `path` meanwhile, the recording goes to the first free u_file_numbered_name instead
 * (u_out_file_commit_as names it). A "<path>.partial" left by an earlier run that did not
 * end (not locked) is moved to "<path>.partial.N" (first free N from 1) and named in
 * `(*out_file)->leftover`; one a live run holds is left alone and this fails with errno
 * EBUSY ("... is being written by another run"). On failure (commit's or abort) the
 * partial file is kept, not removed: it holds what was written. An existing non-regular
 * target is written in place as u_out_file_open does. */
enum em_result u_out_file_open_partial(const char *path, struct u_out_file **out_file,
                                       struct em_error *err);

/* Flushes, syncs and closes the file, then renames the temporary file over the target.
 * On any failure the temporary file is removed, the target is untouched and `err` says
 * why ("PATH: write error: No space left on device"). Frees `*file` and sets it to NULL;
 * a NULL `*file` is EM_OK. */
enum em_result u_out_file_commit(struct u_out_file **file, struct em_error *err);

/* As u_out_file_commit, and `saved` (when not NULL) gets where the file is: the target,
 * or for a partial file the numbered name it went to when a file appeared at the target. */
enum em_result u_out_file_commit_as(struct u_out_file **file, char *saved, size_t saved_size,
                                    struct em_error *err);

/* Gives up: closes and removes the temporary file (a partial file is kept); the target is
 * untouched. Frees `*file`
 * and sets it to NULL; takes NULL. */
void u_out_file_abort(struct u_out_file **file);

/* Writes `size` bytes to `path` through u_out_file (all or nothing). */
enum em_result u_file_write_all(const char *path, const void *data, size_t size,
                                struct em_error *err);

/* How far u_file_numbered_name is tried for a free name. */
#define U_FILE_NUMBERED_MAX 9999

/* "STEM.N.EXT" for `path` ("keep.csv" -> "keep.3.csv"; EXT: the part after the file
 * name's last dot, if any, so "session" -> "session.3"). False when it does not fit. */
bool u_file_numbered_name(const char *path, int number, char *out, size_t out_size);

/* True when "<path>.partial" is a recording a live run holds (locked; u_out_file_open_partial). */
bool u_file_partial_in_use(const char *path);

/* True when both paths exist and are the same file (same device and inode, however they
 * are spelled: links, "..", symbolic links). */
bool u_file_same(const char *a, const char *b);

#endif
