/*
 * Test helper for tests that run the program's live loop in their own process (so they
 * can look at its renderer and scene frame by frame): parse arguments as the program
 * does, run the loop with hooks, and press keys through SDL's event queue as a user does.
 * Links embody_app; fails the cmocka test on a bad argument list.
 */
#ifndef EMBODY_TESTS_APP_LIVE_CHECK_H
#define EMBODY_TESTS_APP_LIVE_CHECK_H

#include <SDL.h>

#include "app/app_live.h"

/* Parses `args` (NULL-terminated, without argv[0]) as `embody` would and runs the live
 * loop with `hooks`; `result` may be NULL. Fails the test if the options do not parse.
 * Returns app_live_run's exit code. */
int app_live_check_run(const char *const *args, const struct app_live_hooks *hooks,
                       struct app_live_result *result);

/* Queues a key press of `key` as SDL delivers a user's (the loop reads it next frame);
 * fails the test if SDL's queue refuses it. */
void app_live_check_press(SDL_Keycode key);

#endif
