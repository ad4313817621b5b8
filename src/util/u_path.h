/*
 * Finding the program's data (config/, shaders/, the demo stream) wherever it is started
 * from: $EMBODY_DATA_DIR, then beside the executable (and ../share/embody from it), then
 * ../share/embody from the installed shared library, then the source tree the program was
 * built from, then the install prefix it was configured for.
 */
#ifndef EMBODY_U_PATH_H
#define EMBODY_U_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* Writes the first existing "<dir>/<relative>" into `out` (absolute, without ".." or
 * symbolic links) and returns true; on failure
 * writes the list of places tried (for an error message) and returns false. */
bool
u_path_find_data(const char *relative, char *out, size_t out_size);

/* True when `path` names an existing regular file or directory. */
bool
u_path_exists(const char *path);

#endif
