/*
 * make_demo: writes the bundled demo stream (demo_recipe.c) from the public clips:
 *
 *     build/tests/stream/make_demo tests/data/mocap config/demo/demo.csv
 */
#include <stdio.h>

#include "demo_recipe.h"

int
main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s CLIP_DIR OUT.csv\n", argv[0]);
        return 2;
    }
    struct em_error err = {{0}};
    struct st_stream demo;
    enum em_result r = demo_make(argv[1], &demo, &err);
    if (r == EM_OK) {
        r = st_stream_save(argv[2], &demo, &err);
        if (r == EM_OK)
            printf("make_demo: %d frames -> %s\n", demo.frame_count, argv[2]);
        st_stream_fini(&demo);
    }
    if (r != EM_OK) {
        fprintf(stderr, "make_demo: %s\n", err.message);
        return 1;
    }
    return 0;
}
