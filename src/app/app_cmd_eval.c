/*
 * embody eval (app_commands.h): the evaluation protocol, run by src/eval's command line
 * (ev_main in include/embody/eval.h), which takes argv from the command's name on; its
 * --plot figures drawn by the plot module (include/embody/plot.h).
 */
#include "app/app_commands.h"
#include "embody/eval.h"
#include "embody/plot.h"

int
app_cmd_eval(int argc, char **argv)
{
    return ev_main_observed(argc, argv, pl_eval_observer());
}
