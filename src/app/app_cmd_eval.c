/*
 * embody eval (app_commands.h): hands over to the evaluation runner of src/eval
 * (ev_main in include/embody/eval.h) when the program is built with it.
 */
#include <stdio.h>

#include "app/app_args.h"
#include "app/app_commands.h"

#ifdef EMBODY_HAVE_EVAL
#include "embody/eval.h"
#endif

bool
app_cmd_eval_available(void)
{
#ifdef EMBODY_HAVE_EVAL
    return true;
#else
    return false;
#endif
}

int
app_cmd_eval(int argc, char **argv)
{
#ifdef EMBODY_HAVE_EVAL
    return ev_main(argc, argv);
#else
    (void)argc;
    (void)argv;
    fprintf(stderr, "embody eval: error: this embody was built without the evaluation "
                    "module (src/eval)\n");
    return APP_EXIT_USAGE;
#endif
}
