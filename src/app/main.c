/* The embody program (being built up: see README). */
#include <stdio.h>

int
main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "embody: the program is not wired up yet\n");
    return 1;
}
