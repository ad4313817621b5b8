/*
 * embody: a full body for a VR player from a headset and two controllers.
 *
 * `embody [OPTIONS]` runs the live program (app_live.c, options in app_options.c);
 * `embody COMMAND ...` runs a subcommand (app_cmd_*.c).
 */
#include <stdio.h>
#include <string.h>

#include "app/app_args.h"
#include "app/app_commands.h"
#include "app/app_live.h"
#include "app/app_options.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
};

static const struct command k_commands[] = {
    {"mocap2stream", app_cmd_mocap2stream},
    {"solve", app_cmd_solve},
    {"eval", app_cmd_eval},
    {"make-avatar", app_cmd_make_avatar},
    {"train", app_cmd_train},
    {"proportions", app_cmd_proportions},
};

int
main(int argc, char **argv)
{
    if (argc > 1 && argv[1][0] != '-') {
        for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; ++i)
            if (strcmp(argv[1], k_commands[i].name) == 0)
                return k_commands[i].run(argc - 1, argv + 1);
        fprintf(stderr,
                "embody: error: unknown command \"%s\" (commands: mocap2stream, solve, eval, "
                "make-avatar, train, proportions; see embody --help)\n",
                argv[1]);
        return APP_EXIT_USAGE;
    }
    struct app_options options;
    struct em_error err = {{0}};
    if (app_options_parse(argc, argv, 1, &options, &err) != EM_OK) {
        fprintf(stderr, "embody: error: %s\n", err.message);
        return APP_EXIT_USAGE;
    }
    if (options.show_help) {
        app_options_print_help(stdout);
        return APP_EXIT_OK;
    }
    if (options.show_version) {
        printf("embody %s\n", EMBODY_VERSION);
        return APP_EXIT_OK;
    }
    return app_live_run(&options, NULL, NULL);
}
