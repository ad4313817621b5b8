/* libFuzzer target: the skeleton JSON reader (sk_skeleton_parse_json). */
#include <stdint.h>
#include <stdlib.h>

#include "embody/skeleton.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    struct sk_skeleton sk;
    struct em_error err;
    if (sk_skeleton_parse_json(text, "fuzz.json", &sk, &err) == EM_OK)
        sk_skeleton_fini(&sk);
    free(text);
    return 0;
}
