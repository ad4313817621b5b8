/*
 * The recording of a live run (--record FILE.csv, F9 in the mirror window): the tracking
 * frames exactly as they came, through "<path>.partial" (whole rows flushed at least every
 * ST_RECORD_FLUSH_S, renamed to the path at a clean end), so neither a crash nor a full
 * disk loses what was already written.
 *
 * Nothing is lost either when the name is taken: a recording asked for onto a file that
 * exists goes to the next free name beside it ("keep.csv" -> "keep.1.csv", "keep.2.csv",
 * ...), and the program says so when it starts and in its summary. The file that was
 * there stays as it was, and so does one that appears there while the recording runs or
 * another run's recording to the same name: the recording is moved to its name without
 * replacing anything at the end, and goes to the next free name when that one was taken.
 */
#ifndef EMBODY_APP_RECORD_H
#define EMBODY_APP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "embody/input.h"
#include "embody/stream.h"

#define APP_RECORD_PATH_MAX 4096

struct app_record {
    struct st_stream_writer writer;
    char path[APP_RECORD_PATH_MAX];  /* where the recording goes; "" before one started */
    char asked[APP_RECORD_PATH_MAX]; /* the name asked for when it was taken, else "" */
    const char *asked_why; /* how it was taken: "was there already", ... (with `asked`) */
    bool recording;
    long recorded; /* frames written */
    double last_time_s;
    long refused;                   /* frames the writer refused (counted after the first) */
    bool failed;                    /* a write error stopped or spoiled the recording */
    long on_disk;                   /* frames sure to be on disk when it ended */
    char kept[APP_RECORD_PATH_MAX]; /* where they are when not at `path`: the partial file */
};

enum app_record_name {
    APP_RECORD_NAME_FREE,      /* `out` holds the name */
    APP_RECORD_NAME_TOO_LONG,  /* the name (or the numbered one needed) does not fit */
    APP_RECORD_NAME_ALL_TAKEN, /* every numbered name up to .9999 is there */
};

/* The name a recording asked for as `asked` goes to: `asked` itself unless a regular file
 * is there or a live run records there ("<asked>.partial" locked), else the first of
 * "STEM.1.EXT", "STEM.2.EXT", ... (u_file_numbered_name) with neither. */
enum app_record_name app_record_free_name(const char *asked, char *out, size_t out_size);

/* Starts recording to the free name for `asked` (app_record_free_name), saying on stderr
 * when that is another name and where a partial file a crashed run left there was put.
 * Fails (with the reason in `err`) when the file cannot be made. */
enum em_result app_record_start(struct app_record *rec, const char *asked, struct em_error *err);

/* Starts recording to embody-YYYYmmdd-HHMMSS.csv (local time) in the current folder, as
 * F9 does. */
enum em_result app_record_start_dated(struct app_record *rec, struct em_error *err);

/* Writes `frame` as read, unless it comes less than ST_STREAM_MIN_STEP_S after the last
 * one written (a paused source repeats its frame; a headless runtime catching up gives
 * frames microseconds apart). `fingers`: the frame's fingers (in_source_fingers), or NULL
 * for a source without fingers; the file has the finger columns (PROTOCOL.md section 1b)
 * when the first frame recorded has them. `tracker_mask`: the source's trackers, taken
 * for the header at the first frame. A disk error stops the recording (said on stderr,
 * kept in `failed`); a frame the writer refuses is counted and the first one said. */
void app_record_frame(struct app_record *rec, const struct em_tracking_frame *frame,
                      const struct st_fingers *fingers, uint32_t tracker_mask);

/* Ends the recording under way: the partial file becomes the file. Returns APP_EXIT_OK,
 * or APP_EXIT_FAILURE when this or an earlier write failed. Safe when not recording. */
int app_record_close(struct app_record *rec);

/* Closes without caring for the outcome (teardown after an error). */
void app_record_abandon(struct app_record *rec);

/* What a stopped recording left, for the window: "recording saved: PATH (N frames)" or
 * "recording to PATH failed: N frames kept in FILE". `frames`: those recorded before the
 * stop. */
void app_record_describe_stop(const struct app_record *rec, long frames, char *out,
                              size_t out_size);

/* The summary's line: what is on disk and where, not what was asked for. */
void app_record_print_summary(const struct app_record *rec, FILE *out);

/* Says where F9 recordings of earlier runs that did not end (embody-*.csv.partial in the
 * current folder) are, so a crashed session's recording is found. */
void app_record_tell_leftovers(void);

#endif
