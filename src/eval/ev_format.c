/*
 * The eval module's number formatting (ev_internal.h), shared by every table it prints;
 * the bottom of the module, calling nothing of it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ev_internal.h"
#include "util/u_file.h"

/* A number in `width` columns with `precision` decimals, or "-" when it is not finite. */
const char *
ev_format_number(char *buf, size_t size, int width, int precision, double v)
{
    if (isfinite(v))
        snprintf(buf, size, "%*.*f", width, precision, v);
    else
        snprintf(buf, size, "%*s", width, "-");
    return buf;
}

bool
ev_json_write(struct cJSON *root, bool made, const char *path)
{
    char *text = made ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    struct em_error err = {{0}};
    const bool ok = text && u_file_write_all(path, text, strlen(text), &err) == EM_OK;
    if (!ok)
        fprintf(stderr, "embody eval: %s\n", text ? err.message : "out of memory");
    cJSON_free(text);
    return ok;
}
