/* libFuzzer target: the bone map reader (sk_bone_map_parse, --bone-map). A map it takes
 * must print (sk_bone_map_format, --print-rig) as text it takes back unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embody/skeleton.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    static struct sk_bone_map map, back;
    static char printed[SK_BONE_COUNT * (SK_BONE_MAP_NODE_MAX * 6 + 32) + 8];
    struct em_error err;
    if (sk_bone_map_parse(text, size, "fuzz.json", &map, &err) == EM_OK) {
        const int n = sk_bone_map_format(&map, printed, sizeof printed);
        if (n < 0 || (size_t)n >= sizeof printed ||
            sk_bone_map_parse(printed, (size_t)n, "printed", &back, &err) != EM_OK ||
            memcmp(back.node, map.node, sizeof map.node) != 0)
            abort();
    }
    free(text);
    return 0;
}
