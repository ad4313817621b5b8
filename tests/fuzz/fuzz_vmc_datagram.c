/* libFuzzer target: a VMC datagram through the checked OSC reader (osc_in_decode), each
 * message read as the VMC source reads it (its address, types, and floats when the types
 * say "sfffffff"). */
#include <stdint.h>
#include <string.h>

#include "osc/osc_in_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
on_message(const struct osc_in_message *m, void *user)
{
    float *sum = user;
    if (strcmp(m->types, "sfffffff") == 0) {
        char shown[40];
        osc_in_printable((const char *)m->arg[0], 32, shown, sizeof shown);
        for (int i = 1; i < 8; ++i)
            *sum += osc_in_float(m, i);
    }
    *sum += (float)strlen(m->path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    float sum = 0.0f;
    const char *why = NULL;
    osc_in_decode(data, size, on_message, &sum, &why);
    return 0;
}
