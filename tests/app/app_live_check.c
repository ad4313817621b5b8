/*
 * The live loop run in the test's process, and key presses through SDL (app_live_check.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "app/app_options.h"
#include "app_live_check.h"

#define MAX_ARGS 32

int
app_live_check_run(const char *const *args, const struct app_live_hooks *hooks,
                   struct app_live_result *result)
{
    char *argv[MAX_ARGS];
    int argc = 0;
    argv[argc++] = "embody";
    for (int i = 0; args[i]; ++i) {
        assert_true(argc < MAX_ARGS - 1);
        argv[argc++] = (char *)args[i];
    }
    argv[argc] = NULL;
    struct app_options options;
    struct em_error err = {{0}};
    if (app_options_parse(argc, argv, 1, &options, &err) != EM_OK)
        fail_msg("%s", err.message);
    return app_live_run(&options, hooks, result);
}

void
app_live_check_press(SDL_Keycode key)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = key;
    assert_int_equal(SDL_PushEvent(&e), 1);
}
