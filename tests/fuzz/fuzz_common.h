/* Shared by the text targets: the input as a NUL-terminated copy (the readers take text). */
#ifndef EMBODY_FUZZ_COMMON_H
#define EMBODY_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline char *
fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

#endif
