/*
 * The settings file's "faults" (src/fault/fault.h): an array of the strings --fault
 * takes, each checked by flt_parse and named by its line and column when refused.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fault/fault.h"
#include "util/u_text.h"

/* Where an entry is in the file: the first `"TEXT"` after `from`, or `from` itself (an
 * entry with escapes is not found as written: its array is named instead). */
static const char *
find_entry(const char *from, const char *text)
{
    const size_t n = strlen(text);
    for (const char *p = strchr(from, '"'); p; p = strchr(p + 1, '"'))
        if (strncmp(p + 1, text, n) == 0 && p[n + 1] == '"')
            return p;
    return from;
}

static int
column_of(const char *text, const char *at)
{
    const char *line = at;
    while (line > text && line[-1] != '\n')
        --line;
    return (int)(at - line) + 1;
}

static enum em_result
add_entries(const cJSON *faults, const char *text, const char *path, struct flt_set *set,
            struct em_error *err)
{
    const char *key = strstr(text, "\"faults\"");
    const char *at = key ? key : text;
    int i = 0;
    for (const cJSON *item = faults->child; item; item = item->next, ++i) {
        char what[1200];
        if (!cJSON_IsString(item)) {
            at += strspn(at, " \t\r\n,[");
            return em_fail(err, EM_ERROR_PARSE,
                           "%s:%d:%d: faults[%d]: expected a string \"KIND:DEVICE:AMOUNT\" (as "
                           "--fault takes)",
                           path, u_text_line_of(text, at), column_of(text, at), i);
        }
        at = find_entry(at, item->valuestring);
        snprintf(what, sizeof what, "%s:%d:%d: faults[%d]", path, u_text_line_of(text, at),
                 column_of(text, at), i);
        const enum em_result r = flt_set_add(set, item->valuestring, what, err);
        if (r != EM_OK)
            return r == EM_ERROR_LIMIT ? r : EM_ERROR_PARSE;
        at += strlen(item->valuestring) + 2;
    }
    return EM_OK;
}

enum em_result
flt_settings_parse(const char *text, const char *source, struct flt_set *set, struct em_error *err)
{
    cJSON *root = cJSON_Parse(text);
    /* Malformed JSON is the settings reader's to report (body_desc_parse_json names where). */
    const cJSON *faults = root ? cJSON_GetObjectItemCaseSensitive(root, "faults") : NULL;
    enum em_result r = EM_OK;
    if (faults && !cJSON_IsArray(faults))
        r = em_fail(err, EM_ERROR_PARSE,
                    "%s: faults: expected an array of \"KIND:DEVICE:AMOUNT\" strings (as --fault "
                    "takes)",
                    source);
    else if (faults)
        r = add_entries(faults, text, source, set, err);
    cJSON_Delete(root);
    return r;
}
