/*
 * Loading a prior model file: read it whole (bounded), parse it (pr_model_parse) and check
 * that its network can drive a body (pr_model_check), in that order, each refusal naming
 * the file. Above both the format (pr_model.c) and the check (pr_check.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "embody/prior.h"

/* Far above any model's size: a file larger is not one. */
#define MAX_FILE_BYTES (64L * 1024 * 1024)

enum em_result
pr_model_load(const char *path, struct pr_model *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return em_fail(err, EM_ERROR_IO, "%s: not a file; expected a prior model file", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return em_fail(err, EM_ERROR_IO, "%s: cannot open the prior model: %s", path,
                       strerror(errno));
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return em_fail(err, EM_ERROR_IO, "%s: cannot read the prior model (not a file?)", path);
    }
    if (size > MAX_FILE_BYTES) {
        fclose(f);
        return em_fail(err, EM_ERROR_LIMIT, "%s: %ld bytes, larger than any prior model (%ld)",
                       path, size, MAX_FILE_BYTES);
    }
    unsigned char *buf = malloc(size > 0 ? (size_t)size : 1);
    if (!buf) {
        fclose(f);
        return em_fail(err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    const bool read_all = fread(buf, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    enum em_result r = read_all ? pr_model_parse(buf, size, path, out, err)
                                : em_fail(err, EM_ERROR_IO, "%s: read error", path);
    free(buf);
    if (r == EM_OK && (r = pr_model_check(out, path, err)) != EM_OK)
        pr_model_fini(out);
    return r;
}
