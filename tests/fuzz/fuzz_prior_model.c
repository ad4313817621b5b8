/* libFuzzer target: the prior's model file reader (pr_model_parse), then the check that
 * the network can drive a body (pr_model_check: a forward pass on a probe). */
#include <stdint.h>
#include <stdlib.h>

#include "embody/prior.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pr_model model;
    struct em_error err;
    if (pr_model_parse(data, (long)size, "fuzz.bin", &model, &err) == EM_OK) {
        pr_model_check(&model, "fuzz.bin", &err);
        pr_model_fini(&model);
    }
    return 0;
}
