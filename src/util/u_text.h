/*
 * Reading text files for the parsers: the whole file in memory, then lines or
 * whitespace-separated tokens, each with its line number for error messages, and strict
 * number parsing (the whole token must be a finite number).
 */
#ifndef EMBODY_U_TEXT_H
#define EMBODY_U_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "embody/result.h"

struct u_text {
    char *data; /* NUL-terminated, owned */
    size_t size;
};

/* Reads `path` whole. On failure fills `err` with the path and the system's reason. */
enum em_result
u_text_read_file(const char *path, struct u_text *out_text, struct em_error *err);

void
u_text_fini(struct u_text *text);

/* Iterates over lines, writing a NUL over each line end (so the text is consumed). */
struct u_line_reader {
    char *cursor;
    char *end;
    int line_number; /* of the line last returned, 1-based */
};

void
u_line_reader_init(struct u_line_reader *reader, struct u_text *text);

/* Returns the next line without its "\n" or "\r\n", or NULL at the end. */
char *
u_line_next(struct u_line_reader *reader);

/* Iterates over whitespace-separated tokens across lines. */
struct u_token_reader {
    char *cursor;
    char *end;
    int line_number;      /* of the token last returned */
    bool newline_pending; /* the last token's line ended right after it */
};

void
u_token_reader_init(struct u_token_reader *reader, struct u_text *text);

/* Returns the next token (NUL-terminated in place), or NULL at the end of the text. */
char *
u_token_next(struct u_token_reader *reader);

/* Returns the rest of the current line (after the last token), trimmed, NUL-terminated
 * in place, and moves to the next line. */
char *
u_token_rest_of_line(struct u_token_reader *reader);

/* The 1-based line of `at` within `text` (for parsers that point into the text, such as
 * cJSON's error position). */
int
u_text_line_of(const char *text, const char *at);

/* The deepest JSON nesting cJSON accepts (its CJSON_NESTING_LIMIT). */
#define U_JSON_MAX_DEPTH 1000

/* The reason JSON `text` from `source` did not parse, for a parser that stopped at `at`
 * (NULL: unknown): "SOURCE:LINE: JSON nested deeper than 1000 levels" when it nests
 * arrays and objects that deep (strings skipped), "SOURCE: empty file, expected JSON"
 * for nothing but white space, else "SOURCE:LINE:COLUMN: malformed JSON: REASON" with
 * the reason at that place (the text ends early, or what was found there).
 * Returns EM_ERROR_PARSE. */
enum em_result
u_json_parse_error(const char *text, const char *source, const char *at, struct em_error *err);

/* Refuses an object that names a key twice (cJSON keeps both and readers would see only
 * the first): "SOURCE: PATH: given twice" with the key's path from the top
 * ("devices.head.position_m"). Returns EM_OK when every key is unique. */
#define U_JSON_MAX_KEYS 4096
struct cJSON;
enum em_result
u_json_check_unique_keys(const struct cJSON *root, const char *source, struct em_error *err);

/* Parses all of `s` as a finite number. */
bool
u_parse_double(const char *s, double *out);

bool
u_parse_float(const char *s, float *out);

/* Parses all of `s` as a decimal integer in [lo, hi]. */
bool
u_parse_int(const char *s, long lo, long hi, long *out);

#endif
