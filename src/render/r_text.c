/*
 * HUD text (r_internal.h): a font atlas baked with stb_truetype from a TrueType file found
 * at run time (Debian's DejaVu Sans by default), and batches of textured quads in pixels.
 * The atlas has a fully covered strip at the bottom so panels are drawn from the same
 * texture in the same batch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#include <stb_truetype.h>
#pragma GCC diagnostic pop

#include "render/r_internal.h"
#include "util/u_path.h"

/* What the HUD writes: ASCII, Latin-1 (µ, °, ·) and a few symbols. */
static const int k_extra_codepoints[] = {0x2022, 0x2013, 0x2014, 0x2190, 0x2192, 0x2191,
                                         0x2193, 0x25CF, 0x25CB, 0x2713, 0x2715, 0x2026};
#define EXTRA_COUNT ((int)(sizeof k_extra_codepoints / sizeof k_extra_codepoints[0]))
#define ASCII_FIRST 32
#define ASCII_COUNT 95
#define LATIN_FIRST 160
#define LATIN_COUNT 96
#define GLYPH_COUNT (ASCII_COUNT + LATIN_COUNT + EXTRA_COUNT)
#define WHITE_ROWS 2

static const char *const k_default_fonts[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
};

/* Index of `codepoint` among the packed glyphs, or -1. */
static int
glyph_index(int codepoint)
{
    if (codepoint >= ASCII_FIRST && codepoint < ASCII_FIRST + ASCII_COUNT)
        return codepoint - ASCII_FIRST;
    if (codepoint >= LATIN_FIRST && codepoint < LATIN_FIRST + LATIN_COUNT)
        return ASCII_COUNT + codepoint - LATIN_FIRST;
    for (int i = 0; i < EXTRA_COUNT; ++i)
        if (k_extra_codepoints[i] == codepoint)
            return ASCII_COUNT + LATIN_COUNT + i;
    return -1;
}

/* Decodes one UTF-8 character at *s (advancing it); malformed bytes give U+FFFD. */
static int
utf8_next(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    int cp, extra;
    if (p[0] < 0x80) {
        cp = p[0], extra = 0;
    } else if ((p[0] & 0xE0) == 0xC0) {
        cp = p[0] & 0x1F, extra = 1;
    } else if ((p[0] & 0xF0) == 0xE0) {
        cp = p[0] & 0x0F, extra = 2;
    } else if ((p[0] & 0xF8) == 0xF0) {
        cp = p[0] & 0x07, extra = 3;
    } else {
        *s += 1;
        return 0xFFFD;
    }
    for (int i = 1; i <= extra; ++i) {
        if ((p[i] & 0xC0) != 0x80) {
            *s += i;
            return 0xFFFD;
        }
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    *s += extra + 1;
    return cp;
}

static enum em_result
bake(struct r_font *font, float pixel_height, struct em_error *err)
{
    stbtt_fontinfo info;
    const int offset = stbtt_GetFontOffsetForIndex(font->ttf, 0);
    if (offset < 0 || !stbtt_InitFont(&info, font->ttf, offset))
        return em_fail(err, EM_ERROR_PARSE, "%s: not a TrueType font stb_truetype can read",
                       font->path);
    stbtt_packedchar *packed = calloc(GLYPH_COUNT, sizeof *packed);
    if (!packed)
        return EM_ERROR_OUT_OF_MEMORY;
    unsigned char *pixels = NULL;
    int size = 256;
    for (; size <= 4096; size *= 2) {
        free(pixels);
        pixels = calloc((size_t)size * (size_t)(size + WHITE_ROWS), 1);
        if (!pixels)
            break;
        stbtt_pack_context pack;
        if (!stbtt_PackBegin(&pack, pixels, size, size, size, 1, NULL))
            continue;
        stbtt_PackSetOversampling(&pack, 2, 1); /* sharper horizontal positioning */
        int extra[EXTRA_COUNT];
        memcpy(extra, k_extra_codepoints, sizeof extra);
        stbtt_pack_range ranges[3] = {
            {pixel_height, ASCII_FIRST, NULL, ASCII_COUNT, packed, 0, 0},
            {pixel_height, LATIN_FIRST, NULL, LATIN_COUNT, packed + ASCII_COUNT, 0, 0},
            {pixel_height, 0, extra, EXTRA_COUNT, packed + ASCII_COUNT + LATIN_COUNT, 0, 0},
        };
        const int ok = stbtt_PackFontRanges(&pack, font->ttf, 0, ranges, 3);
        stbtt_PackEnd(&pack);
        if (ok)
            break;
    }
    if (!pixels || size > 4096) {
        free(pixels);
        free(packed);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: cannot bake a %.0f px font atlas",
                       font->path, (double)pixel_height);
    }
    memset(pixels + (size_t)size * (size_t)size, 0xFF, (size_t)size * WHITE_ROWS);

    int ascent, descent, gap;
    stbtt_GetFontVMetrics(&info, &ascent, &descent, &gap);
    const float em_scale = stbtt_ScaleForPixelHeight(&info, pixel_height);
    font->ascent_px = (float)ascent * em_scale;
    font->line_px = (float)(ascent - descent + gap) * em_scale;
    font->pixel_height = pixel_height;
    font->atlas_size = size;
    free(font->packed);
    font->packed = packed;

    if (!font->texture)
        glGenTextures(1, &font->texture);
    glBindTexture(GL_TEXTURE_2D, font->texture);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, size, size + WHITE_ROWS, 0, GL_RED, GL_UNSIGNED_BYTE,
                 pixels);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    free(pixels);
    return EM_OK;
}

/* Reads a whole binary file (a font: u_text wants text). */
static enum em_result
read_binary(const char *path, unsigned char **out_data, struct em_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return em_fail(err, EM_ERROR_IO, "%s: cannot open the font: %s", path, strerror(errno));
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 12 || size > (64L << 20) || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return em_fail(err, EM_ERROR_PARSE, "%s: not a font file (size %ld bytes)", path, size);
    }
    unsigned char *data = malloc((size_t)size);
    const bool ok = data && fread(data, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok) {
        free(data);
        return em_fail(err, EM_ERROR_IO, "%s: cannot read the font", path);
    }
    *out_data = data;
    return EM_OK;
}

enum em_result
r_font_create(struct r_font *font, const char *path, float pixel_height, struct em_error *err)
{
    memset(font, 0, sizeof *font);
    char tried[1024] = "";
    if (path && path[0]) {
        snprintf(font->path, sizeof font->path, "%s", path);
    } else {
        const int n = (int)(sizeof k_default_fonts / sizeof k_default_fonts[0]);
        for (int i = 0; i < n && !font->path[0]; ++i) {
            if (u_path_exists(k_default_fonts[i]))
                snprintf(font->path, sizeof font->path, "%s", k_default_fonts[i]);
            else
                snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s", i ? ", " : "",
                         k_default_fonts[i]);
        }
        if (!font->path[0])
            return em_fail(err, EM_ERROR_IO,
                           "no HUD font: tried %s (install fonts-dejavu-core or pass a font)",
                           tried);
    }
    const enum em_result r = read_binary(font->path, &font->ttf, err);
    if (r != EM_OK)
        return r;
    const enum em_result b = bake(font, pixel_height, err);
    if (b != EM_OK)
        r_font_destroy(font);
    return b;
}

enum em_result
r_font_resize(struct r_font *font, float pixel_height, struct em_error *err)
{
    return bake(font, pixel_height, err);
}

void
r_font_destroy(struct r_font *font)
{
    if (font->texture)
        glDeleteTextures(1, &font->texture);
    free(font->packed);
    free(font->ttf);
    memset(font, 0, sizeof *font);
}

static bool
batch_reserve(struct r_text_batch *batch, int more)
{
    if (batch->count + more <= batch->capacity)
        return true;
    int capacity = batch->capacity ? batch->capacity : 1024;
    while (capacity < batch->count + more)
        capacity *= 2;
    struct r_text_vertex *v = realloc(batch->vertices, (size_t)capacity * sizeof *v);
    if (!v)
        return false;
    batch->vertices = v;
    batch->capacity = capacity;
    return true;
}

static void
push_quad(struct r_text_batch *batch, float x0, float y0, float x1, float y1, float u0, float v0,
          float u1, float v1, const uint8_t rgba[4])
{
    if (!batch_reserve(batch, 6))
        return; /* out of memory: the HUD loses a glyph, nothing else */
    const struct r_text_vertex corners[4] = {
        {x0, y0, u0, v0, {rgba[0], rgba[1], rgba[2], rgba[3]}},
        {x1, y0, u1, v0, {rgba[0], rgba[1], rgba[2], rgba[3]}},
        {x1, y1, u1, v1, {rgba[0], rgba[1], rgba[2], rgba[3]}},
        {x0, y1, u0, v1, {rgba[0], rgba[1], rgba[2], rgba[3]}},
    };
    static const int order[6] = {0, 1, 2, 0, 2, 3};
    for (int i = 0; i < 6; ++i)
        batch->vertices[batch->count++] = corners[order[i]];
}

float
r_text_add(struct r_text_batch *batch, const struct r_font *font, float x, float y,
           const char *text, const uint8_t rgba[4])
{
    const stbtt_packedchar *packed = font->packed;
    float pen_x = x, pen_y = y + font->ascent_px;
    const int atlas_w = font->atlas_size, atlas_h = font->atlas_size + WHITE_ROWS;
    for (const char *s = text; *s;) {
        int g = glyph_index(utf8_next(&s));
        if (g < 0)
            g = glyph_index('?');
        stbtt_aligned_quad q;
        stbtt_GetPackedQuad(packed, atlas_w, atlas_h, g, &pen_x, &pen_y, &q, 0);
        if (q.x1 > q.x0)
            push_quad(batch, q.x0, q.y0, q.x1, q.y1, q.s0, q.t0, q.s1, q.t1, rgba);
    }
    return pen_x;
}

float
r_text_width(const struct r_font *font, const char *text)
{
    const stbtt_packedchar *packed = font->packed;
    float width = 0.0f;
    for (const char *s = text; *s;) {
        int g = glyph_index(utf8_next(&s));
        if (g < 0)
            g = glyph_index('?');
        width += packed[g].xadvance;
    }
    return width;
}

void
r_text_rect(struct r_text_batch *batch, const struct r_font *font, float x, float y, float w,
            float h, const uint8_t rgba[4])
{
    const float atlas_h = (float)(font->atlas_size + WHITE_ROWS);
    const float u = 0.5f / (float)font->atlas_size;
    const float v = ((float)font->atlas_size + 1.0f) / atlas_h;
    push_quad(batch, x, y, x + w, y + h, u, v, u, v, rgba);
}

void
r_text_batch_fini(struct r_text_batch *batch)
{
    free(batch->vertices);
    memset(batch, 0, sizeof *batch);
}
