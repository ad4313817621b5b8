/*
 * Pieces the eval module's files share (not part of include/embody/eval.h).
 */
#ifndef EMBODY_EV_INTERNAL_H
#define EMBODY_EV_INTERNAL_H

#include <stddef.h>

/* `v` in `width` columns with `precision` decimals into `buf`, or "-" when it is not
 * finite; returns `buf`. */
const char *
ev_format_number(char *buf, size_t size, int width, int precision, double v);

#endif
