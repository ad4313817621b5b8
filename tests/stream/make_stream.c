/*
 * make_stream: turns a CMU BVH clip into the 3-point stream of PROTOCOL.md section 2
 * (what a headset and two controllers would have reported), with st_mocap_to_stream.
 * It made config/demo/demo.csv:
 *
 *     make_stream tests/data/mocap/cmu_14_14.bvh config/demo/demo.csv 0.056444
 *
 * Usage: make_stream CLIP.bvh OUT.csv [METRES_PER_UNIT]   (default: guessed from the
 * skeleton's size; CMU clips are 0.056444)
 */
#include <stdio.h>
#include <stdlib.h>

#include "embody/stream.h"
#include "util/u_text.h"

int
main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s CLIP.bvh OUT.csv [METRES_PER_UNIT]\n", argv[0]);
        return 2;
    }
    struct em_error err = {{0}};
    struct st_bvh bvh;
    if (st_bvh_load(argv[1], &bvh, &err) != EM_OK) {
        fprintf(stderr, "make_stream: %s\n", err.message);
        return 1;
    }
    double scale = st_bvh_guess_unit_scale(&bvh);
    if (argc == 4 && (!u_parse_double(argv[3], &scale) || !(scale > 0.0))) {
        fprintf(stderr, "make_stream: METRES_PER_UNIT: expected a positive number, got \"%s\"\n",
                argv[3]);
        st_bvh_fini(&bvh);
        return 2;
    }
    struct st_stream stream;
    enum em_result r = st_mocap_to_stream(&bvh, scale, argv[1], &stream, &err);
    if (r == EM_OK) {
        r = st_stream_save(argv[2], &stream, &err);
        if (r == EM_OK)
            printf("make_stream: %s: %d frames (%g m per unit) -> %s\n", argv[1],
                   stream.frame_count, scale, argv[2]);
        st_stream_fini(&stream);
    }
    st_bvh_fini(&bvh);
    if (r != EM_OK) {
        fprintf(stderr, "make_stream: %s\n", err.message);
        return 1;
    }
    return 0;
}
