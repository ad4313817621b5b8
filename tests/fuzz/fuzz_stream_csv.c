/* libFuzzer target: the 3-point stream reader (st_stream_parse) on any bytes, with its
 * optional groups (body trackers, fingers; seeds/stream_csv has a file of each). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embody/stream.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    struct st_stream s;
    struct em_error err;
    if (st_stream_parse(text, "fuzz.csv", &s, &err) == EM_OK) {
        /* Fingers are read exactly when the header has a finger group. */
        if ((s.finger_mask != 0) != (s.fingers != NULL))
            abort();
        st_stream_fini(&s);
    }
    free(text);
    return 0;
}
