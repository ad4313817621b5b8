/* libFuzzer target: the settings file's readers: the body's (body_desc_parse_json) over
 * the defaults, and the program's "faults" (flt_settings_parse). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embody/body.h"
#include "fault/fault.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    struct body_desc desc;
    memset(&desc, 0, sizeof desc);
    struct em_error err;
    body_desc_parse_json(text, "fuzz.json", &desc, &err);
    struct flt_set faults;
    memset(&faults, 0, sizeof faults);
    flt_settings_parse(text, "fuzz.json", &faults, &err);
    free(text);
    return 0;
}
