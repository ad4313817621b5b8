/* The recording of a live run (app_record.h). */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "app/app_args.h"
#include "app/app_record.h"
#include "util/u_file.h"
#include "util/u_log.h"

/* Tries "STEM.1.EXT" up to this before giving up: a folder with that many is a mistake. */
#define FREE_NAME_TRIES U_FILE_NUMBERED_MAX

static bool
regular_file_at(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool
anything_at(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

enum app_record_name
app_record_free_name(const char *asked, char *out, size_t out_size)
{
    /* Not a regular file (nothing, or a device such as /dev/null) and no live run
     * recording there: written as asked. */
    if (!regular_file_at(asked) && !u_file_partial_in_use(asked)) {
        snprintf(out, out_size, "%s", asked);
        return strlen(asked) < out_size ? APP_RECORD_NAME_FREE : APP_RECORD_NAME_TOO_LONG;
    }
    for (int n = 1; n <= FREE_NAME_TRIES; ++n) {
        if (!u_file_numbered_name(asked, n, out, out_size))
            return APP_RECORD_NAME_TOO_LONG;
        if (!anything_at(out) && !u_file_partial_in_use(out))
            return APP_RECORD_NAME_FREE;
    }
    return APP_RECORD_NAME_ALL_TAKEN;
}

/* Opens the writer on rec->path through "<path>.partial" (st_stream_writer_open_recording),
 * which a crash leaves behind with every row flushed so far. */
static enum em_result
open_writer(struct app_record *rec, struct em_error *err)
{
    if (st_stream_writer_open_recording(rec->path, &rec->writer, err) != EM_OK)
        return EM_ERROR_IO;
    if (rec->writer.leftover_path[0])
        U_LOG_W("%s: a recording left by a run that did not end cleanly is kept as %s (its "
                "whole rows play with --replay)",
                rec->writer.partial_path, rec->writer.leftover_path);
    rec->recording = true;
    rec->recorded = 0;
    rec->refused = 0;
    rec->failed = false;
    rec->on_disk = 0;
    rec->kept[0] = '\0';
    return EM_OK;
}

enum em_result
app_record_start(struct app_record *rec, const char *asked, struct em_error *err)
{
    enum em_result r = EM_ERROR_IO;
    /* Again when another run took the free name between the look and the start. */
    for (int attempt = 0; attempt < 8; ++attempt) {
        const enum app_record_name found = app_record_free_name(asked, rec->path, sizeof rec->path);
        if (found == APP_RECORD_NAME_TOO_LONG) {
            rec->path[0] = '\0';
            return em_fail(err, EM_ERROR_IO,
                           regular_file_at(asked)
                               ? "%.200s...: exists, and a numbered name for it would be too "
                                 "long: give a shorter name"
                               : "%.200s...: cannot record: the name is too long; give a "
                                 "shorter one",
                           asked);
        }
        if (found == APP_RECORD_NAME_ALL_TAKEN) {
            rec->path[0] = '\0';
            return em_fail(err, EM_ERROR_IO,
                           "%s exists, and so do its numbered names (up to .%d): nothing would "
                           "be kept; give another name",
                           asked, FREE_NAME_TRIES);
        }
        if (strcmp(rec->path, asked) != 0) {
            snprintf(rec->asked, sizeof rec->asked, "%s", asked);
            rec->asked_why = regular_file_at(asked) ? "was there already"
                                                    : "was being recorded by another run";
        } else {
            rec->asked[0] = '\0';
        }
        errno = 0;
        r = open_writer(rec, err);
        if (r == EM_OK || errno != EBUSY)
            break;
    }
    if (r != EM_OK) {
        rec->path[0] = '\0'; /* nothing was recorded there */
        return r;
    }
    if (rec->asked[0])
        U_LOG_W("recording to %s: %s %s and is kept as it was", rec->path, rec->asked,
                regular_file_at(rec->asked) ? "is there already"
                                            : "is being recorded by another run");
    return r;
}

enum em_result
app_record_start_dated(struct app_record *rec, struct em_error *err)
{
    const time_t now = time(NULL);
    struct tm local;
    localtime_r(&now, &local);
    char name[64];
    strftime(name, sizeof name, "embody-%Y%m%d-%H%M%S.csv", &local);
    return app_record_start(rec, name, err);
}

/* Whole rows (lines after the header) in the file at `path`: what a failed recording
 * really left, counted rather than assumed. */
static long
whole_rows_in(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    long lines = 0;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        for (size_t i = 0; i < n; ++i)
            lines += chunk[i] == '\n';
    fclose(f);
    return lines > 0 ? lines - 1 : 0;
}

/* After a failed recording: keeps its partial file (`partial`, "" when written in place)
 * with the whole rows it holds, counted, or removes it when there is none (nothing to
 * keep). `flushed`: the rows the writer knew were on disk. */
static void
keep_what_is_on_disk(struct app_record *rec, const char *partial, long flushed)
{
    rec->failed = true;
    rec->on_disk = flushed;
    snprintf(rec->kept, sizeof rec->kept, "%s", partial);
    if (rec->kept[0])
        rec->on_disk = whole_rows_in(rec->kept);
    if (rec->on_disk == 0 && rec->kept[0]) {
        remove(rec->kept);
        rec->kept[0] = '\0';
    }
}

void
app_record_frame(struct app_record *rec, const struct em_tracking_frame *frame,
                 const struct st_fingers *fingers, uint32_t tracker_mask)
{
    if (!rec->recording)
        return;
    if (rec->recorded == 0)
        rec->writer.tracker_mask |= tracker_mask;
    if (rec->recorded > 0 && frame->time_s - rec->last_time_s < ST_STREAM_MIN_STEP_S)
        return;
    struct em_error err = {{0}};
    const enum em_result r = st_stream_writer_write_fingers(&rec->writer, frame, fingers, &err);
    if (r == EM_ERROR_IO) { /* the disk: no further row can be trusted to land */
        U_LOG_E("--record: %s; recording stopped", err.message);
        char partial[sizeof rec->kept];
        snprintf(partial, sizeof partial, "%s", rec->writer.partial_path);
        const long flushed = rec->writer.frames_on_disk;
        st_stream_writer_abort(&rec->writer);
        rec->recording = false;
        keep_what_is_on_disk(rec, partial, flushed);
        return;
    }
    if (r != EM_OK) {
        if (rec->refused++ == 0)
            U_LOG_W("--record: a frame was not recorded: %s (further ones are counted)",
                    err.message);
        return;
    }
    rec->recorded++;
    rec->last_time_s = frame->time_s;
}

int
app_record_close(struct app_record *rec)
{
    if (!rec->recording)
        return rec->failed ? APP_EXIT_FAILURE : APP_EXIT_OK;
    rec->recording = false;
    struct em_error err = {{0}};
    char partial[sizeof rec->kept];
    snprintf(partial, sizeof partial, "%s", rec->writer.partial_path);
    const long flushed = rec->writer.frames_on_disk;
    if (st_stream_writer_close(&rec->writer, &err) != EM_OK) {
        U_LOG_E("--record: %s", err.message);
        keep_what_is_on_disk(rec, partial, flushed);
        return APP_EXIT_FAILURE;
    }
    rec->on_disk = rec->recorded;
    if (rec->writer.saved_path[0] && strcmp(rec->writer.saved_path, rec->path) != 0) {
        /* A file appeared at the name during the recording: it was kept. */
        U_LOG_W("--record: %s appeared while recording and is kept as it was; the recording "
                "is %s",
                rec->path, rec->writer.saved_path);
        if (!rec->asked[0]) {
            snprintf(rec->asked, sizeof rec->asked, "%s", rec->path);
            rec->asked_why = "appeared while recording";
        }
        snprintf(rec->path, sizeof rec->path, "%s", rec->writer.saved_path);
    }
    if (rec->recorded == 0)
        U_LOG_W("--record: no frame was recorded; %s holds only the header", rec->path);
    return APP_EXIT_OK;
}

void
app_record_abandon(struct app_record *rec)
{
    if (!rec->recording)
        return;
    st_stream_writer_close(&rec->writer, NULL);
    rec->recording = false;
}

void
app_record_describe_stop(const struct app_record *rec, long frames, char *out, size_t out_size)
{
    if (!rec->failed)
        snprintf(out, out_size, "recording saved: %.300s (%ld frames)", rec->path, frames);
    else
        snprintf(out, out_size, "recording to %.200s failed: %ld frames kept in %.300s", rec->path,
                 rec->on_disk, rec->kept[0] ? rec->kept : "no file");
}

void
app_record_print_summary(const struct app_record *rec, FILE *out)
{
    if (!rec->failed) {
        fprintf(out, "embody: recorded %ld frames to %s%s", rec->recorded, rec->path,
                rec->refused ? " (some refused: see the warning)" : "");
        if (rec->asked[0])
            fprintf(out, " (%s %s and is kept as it was)", rec->asked,
                    rec->asked_why ? rec->asked_why : "was there already");
        fprintf(out, "\n");
        return;
    }
    if (rec->kept[0])
        fprintf(out,
                "embody: recording to %s failed: %ld of %ld frames are on disk, in %s (%s is "
                "as it was)\n",
                rec->path, rec->on_disk, rec->recorded, rec->kept, rec->path);
    else
        fprintf(out,
                "embody: recording to %s failed: none of its %ld frames is sure to be "
                "there\n",
                rec->path, rec->recorded);
}

void
app_record_tell_leftovers(void)
{
    glob_t found;
    if (glob("embody-*.csv.partial*", 0, NULL, &found) != 0)
        return;
    for (size_t i = 0; i < found.gl_pathc && i < 5; ++i)
        U_LOG_W("%s: a recording left by a run that did not end cleanly (its whole rows play "
                "with --replay)",
                found.gl_pathv[i]);
    if (found.gl_pathc > 5)
        U_LOG_W("... and %zu more embody-*.csv.partial files here", found.gl_pathc - 5);
    globfree(&found);
}
