/* libFuzzer target: the BVH reader (st_bvh_parse) and, for what it accepts, the stream
 * a clip becomes (st_bvh forward kinematics through the humanoid map). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embody/stream.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    struct st_bvh bvh;
    struct em_error err;
    if (st_bvh_parse(text, "fuzz.bvh", &bvh, &err) == EM_OK)
        st_bvh_fini(&bvh);
    free(text);
    return 0;
}
