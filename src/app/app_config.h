/*
 * --print-config: every setting the program resolved, one "key = value" line each, in
 * groups (input, avatar, body, output, window, data), so a user can see what a run would
 * use without running it.
 */
#ifndef EMBODY_APP_CONFIG_H
#define EMBODY_APP_CONFIG_H

#include <stdio.h>

#include "app/app_avatar.h"
#include "app/app_options.h"
#include "embody/body.h"
#include "fault/fault.h"

/* `faults`: the faults the run puts into its frames (the settings file's and --fault's). */
void app_config_print(FILE *out, const struct app_options *options, const struct app_avatar *avatar,
                      const struct body *body, const struct flt_set *faults);

#endif
