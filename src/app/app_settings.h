/*
 * The program's own part of the settings file (config/body.json, or --config FILE): what
 * the body does not read. Today that is "faults": an array of "KIND:DEVICE:AMOUNT" strings,
 * the faults --fault puts into every frame (src/fault/fault.h), for a setup that
 * should always be tried with, say, a late pelvis tracker.
 */
#ifndef EMBODY_APP_SETTINGS_H
#define EMBODY_APP_SETTINGS_H

#include "fault/fault.h"
#include "embody/result.h"

/* Adds the faults of the settings file at `path` to `set` (after any already there).
 * Errors name the file, the line and column of the bad entry and what was expected
 * ("FILE:LINE:COL: faults[1] "latency:pelvis:soon": bad amount; expected ..."). A file
 * without "faults" adds nothing. */
enum em_result app_settings_faults(const char *path, struct flt_set *set, struct em_error *err);

#endif
