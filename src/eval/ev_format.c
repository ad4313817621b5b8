/*
 * The eval module's number formatting (ev_internal.h), shared by every table it prints;
 * the bottom of the module, calling nothing of it.
 */
#include <math.h>
#include <stdio.h>

#include "ev_internal.h"

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
