/*
 * embody eval (app_commands.h): the evaluation protocol, run by src/eval's command line
 * (ev_main in src/eval/eval.h), which takes argv from the command's name on; its
 * --plot figures drawn by the plot module (src/plot/plot.h).
 */
#include "app/app_commands.h"
#include "eval/eval.h"
#include "plot/plot.h"

int
app_cmd_eval(int argc, char **argv)
{
    return ev_main_observed(argc, argv, pl_eval_observer());
}
