/*
 * Images for avatars, from Debian's libstb-dev (not copied into this repository):
 * stb_image decodes base-colour textures, stb_image_write encodes the generated avatar's
 * texture. Both are compiled static here (STB_*_STATIC) so they cannot clash with the
 * renderer's copy of stb_image_write; their code is not ours, so our warnings are off.
 */
#include <stdlib.h>
#include <string.h>

#include "avatar/av_internal.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO_WARNINGS
#include <stb_image.h>

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#pragma GCC diagnostic pop

uint8_t *
av_image_decode(const uint8_t *bytes, size_t size, int *out_width, int *out_height)
{
    if (size == 0 || size > (size_t)AV_MAX_FILE_BYTES)
        return NULL;
    int channels = 0;
    /* Check the size before decoding, so an enormous image is refused cheaply. */
    if (!stbi_info_from_memory(bytes, (int)size, out_width, out_height, &channels) ||
        *out_width > AV_MAX_TEXTURE_SIZE || *out_height > AV_MAX_TEXTURE_SIZE)
        return NULL;
    return stbi_load_from_memory(bytes, (int)size, out_width, out_height, &channels, 4);
}

uint8_t *
av_image_load(const char *path, int *out_width, int *out_height)
{
    int channels = 0;
    if (!stbi_info(path, out_width, out_height, &channels) || *out_width > AV_MAX_TEXTURE_SIZE ||
        *out_height > AV_MAX_TEXTURE_SIZE)
        return NULL;
    return stbi_load(path, out_width, out_height, &channels, 4);
}

uint8_t *
av_image_encode_png(const uint8_t *rgba, int width, int height, size_t *out_size)
{
    int len = 0;
    unsigned char *png = stbi_write_png_to_mem(rgba, width * 4, width, height, 4, &len);
    if (!png)
        return NULL;
    /* stb allocates with STBIW_MALLOC (malloc), so free() releases it. */
    *out_size = (size_t)len;
    return png;
}
