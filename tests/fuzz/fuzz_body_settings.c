/* libFuzzer target: the body settings reader (body_desc_parse_json) over the defaults. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embody/body.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    struct body_desc desc;
    memset(&desc, 0, sizeof desc);
    struct em_error err;
    body_desc_parse_json(text, "fuzz.json", &desc, &err);
    free(text);
    return 0;
}
