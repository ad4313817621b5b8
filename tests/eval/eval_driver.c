/*
 * A test-only driver for the evaluation: `eval_driver [DIR] [options]` is `embody eval`
 * (ev_main) without the rest of the program, for the CTest regression run.
 */
#include "eval/eval.h"

int
main(int argc, char **argv)
{
    return ev_main(argc, argv);
}
