/* Text files, lines, tokens and strict numbers for the parsers (u_text.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "util/u_text.h"

enum em_result
u_text_read_file(const char *path, struct u_text *out_text, struct em_error *err)
{
    out_text->data = NULL;
    out_text->size = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return em_fail(err, EM_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, size = 0;
    char *data = malloc(cap);
    while (data) {
        size += fread(data + size, 1, cap - size - 1, f);
        if (size < cap - 1)
            break;
        cap *= 2;
        char *grown = realloc(data, cap);
        if (!grown) {
            free(data);
            data = NULL;
        }
        data = grown;
    }
    const bool failed = ferror(f);
    fclose(f);
    if (!data)
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory reading the file", path);
    if (failed) {
        free(data);
        return em_fail(err, EM_ERROR_IO, "%s: read error", path);
    }
    data[size] = '\0';
    if (memchr(data, '\0', size)) {
        free(data);
        return em_fail(err, EM_ERROR_PARSE, "%s: is a binary file (contains NUL bytes), "
                                            "expected text", path);
    }
    out_text->data = data;
    out_text->size = size;
    return EM_OK;
}

void
u_text_fini(struct u_text *text)
{
    free(text->data);
    text->data = NULL;
    text->size = 0;
}

void
u_line_reader_init(struct u_line_reader *reader, struct u_text *text)
{
    reader->cursor = text->data;
    reader->end = text->data + text->size;
    reader->line_number = 0;
}

char *
u_line_next(struct u_line_reader *reader)
{
    if (reader->cursor >= reader->end)
        return NULL;
    char *line = reader->cursor;
    char *nl = memchr(line, '\n', (size_t)(reader->end - line));
    char *stop = nl ? nl : reader->end;
    reader->cursor = nl ? nl + 1 : reader->end;
    if (stop > line && stop[-1] == '\r')
        --stop;
    *stop = '\0';
    reader->line_number++;
    return line;
}

void
u_token_reader_init(struct u_token_reader *reader, struct u_text *text)
{
    reader->cursor = text->data;
    reader->end = text->data + text->size;
    reader->line_number = 1;
    reader->newline_pending = false;
}

static bool
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* A token is cut off by writing NUL over the character after it; when that character was
 * a newline, the line count moves on at the next call instead. */
static char *
cut_token_end(struct u_token_reader *reader, char *p)
{
    if (p >= reader->end)
        return p;
    if (*p == '\n')
        reader->newline_pending = true;
    *p = '\0';
    return p + 1;
}

char *
u_token_next(struct u_token_reader *reader)
{
    if (reader->newline_pending) {
        reader->line_number++;
        reader->newline_pending = false;
    }
    char *p = reader->cursor;
    while (p < reader->end && is_space(*p)) {
        if (*p == '\n')
            reader->line_number++;
        ++p;
    }
    if (p >= reader->end) {
        reader->cursor = p;
        return NULL;
    }
    char *token = p;
    while (p < reader->end && !is_space(*p))
        ++p;
    reader->cursor = cut_token_end(reader, p);
    return token;
}

char *
u_token_rest_of_line(struct u_token_reader *reader)
{
    if (reader->newline_pending) {
        /* The last token ended its line: the rest is empty (the NUL written over the
         * newline, just behind the cursor). */
        return reader->cursor - 1;
    }
    char *p = reader->cursor;
    while (p < reader->end && (*p == ' ' || *p == '\t'))
        ++p;
    char *start = p;
    while (p < reader->end && *p != '\n')
        ++p;
    char *stop = p;
    while (stop > start && is_space(stop[-1]))
        --stop;
    if (p < reader->end)
        reader->newline_pending = true;
    reader->cursor = p < reader->end ? p + 1 : p;
    *stop = '\0';
    return start;
}

int
u_text_line_of(const char *text, const char *at)
{
    int line = 1;
    for (const char *p = text; p < at && *p; ++p)
        line += *p == '\n';
    return line;
}

bool
u_parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return false;
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return false;
    *out = v;
    return true;
}

bool
u_parse_float(const char *s, float *out)
{
    double v;
    if (!u_parse_double(s, &v) || fabs(v) > 3.0e38)
        return false;
    *out = (float)v;
    return true;
}

bool
u_parse_int(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return false;
    char *end = NULL;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* Where `text` first nests deeper than `limit`, or NULL. */
static const char *
json_too_deep(const char *text, int limit)
{
    int depth = 0;
    bool in_string = false;
    for (const char *c = text; *c; ++c) {
        if (in_string) {
            if (*c == '\\' && c[1])
                ++c;
            else if (*c == '"')
                in_string = false;
        } else if (*c == '"') {
            in_string = true;
        } else if (*c == '[' || *c == '{') {
            if (++depth > limit)
                return c;
        } else if ((*c == ']' || *c == '}') && depth > 0) {
            --depth;
        }
    }
    return NULL;
}

enum em_result
u_json_parse_error(const char *text, const char *source, const char *at, struct em_error *err)
{
    const char *deep = json_too_deep(text, U_JSON_MAX_DEPTH);
    if (deep)
        return em_fail(err, EM_ERROR_PARSE, "%s:%d: JSON nested deeper than %d levels", source,
                       u_text_line_of(text, deep), U_JSON_MAX_DEPTH);
    const char *first = text + strspn(text, " \t\r\n");
    if (!*first)
        return em_fail(err, EM_ERROR_PARSE, "%s: empty file, expected JSON", source);
    if (!at)
        return em_fail(err, EM_ERROR_PARSE, "%s:1: malformed JSON", source);
    /* cJSON stops just past what it could not take, on white space: name that. */
    while (at > text && *at && strchr(" \t\r\n", *at) && !strchr(" \t\r\n", at[-1]))
        --at;
    const char *line_start = at;
    while (line_start > text && line_start[-1] != '\n')
        --line_start;
    const int column = (int)(at - line_start) + 1;
    char found[48];
    if (!*at)
        snprintf(found, sizeof found, "the text ends early (something left open)");
    else if ((unsigned char)*at >= 0x20 && (unsigned char)*at < 0x7f)
        snprintf(found, sizeof found, "unexpected '%c'", *at);
    else
        snprintf(found, sizeof found, "unexpected byte 0x%02x", (unsigned)(unsigned char)*at);
    return em_fail(err, EM_ERROR_PARSE, "%s:%d:%d: malformed JSON: %s", source,
                   u_text_line_of(text, at), column, found);
}

/* The first key given twice in `node` or below it, its path written to `path`, or an
 * object of more than U_JSON_MAX_KEYS keys (the pairwise check would take too long; no
 * settings file has that many), its path ending in "(more than ...)". */
static bool
duplicate_key(const cJSON *node, char *path, size_t size, size_t used)
{
    if (cJSON_IsObject(node) && cJSON_GetArraySize(node) > U_JSON_MAX_KEYS) {
        snprintf(path + used, size - used, "%s(more than %d keys)", used ? " " : "",
                 U_JSON_MAX_KEYS);
        return true;
    }
    for (const cJSON *a = node ? node->child : NULL; a; a = a->next) {
        size_t n = used;
        if (a->string) {
            for (const cJSON *b = node->child; b != a; b = b->next)
                if (b->string && strcmp(a->string, b->string) == 0) {
                    snprintf(path + used, size - used, "%s%s", used ? "." : "", a->string);
                    return true;
                }
            const int w = snprintf(path + used, size - used, "%s%s", used ? "." : "", a->string);
            n = w > 0 && used + (size_t)w < size ? used + (size_t)w : size - 1;
        }
        if ((cJSON_IsObject(a) || cJSON_IsArray(a)) && duplicate_key(a, path, size, n))
            return true;
        path[used] = '\0';
    }
    return false;
}

enum em_result
u_json_check_unique_keys(const cJSON *root, const char *source, struct em_error *err)
{
    char path[256] = "";
    if (duplicate_key(root, path, sizeof path, 0))
        return em_fail(err, EM_ERROR_PARSE, "%s: %s: %s", source, path,
                       strstr(path, "(more than") ? "too many keys" : "given twice (each key once)");
    return EM_OK;
}
