/*
 * Numbers in the stream module's text formats (st_internal.h): printing floats and
 * doubles so that reading them back gives the identical value, in the fewest digits that
 * do, and reading plain decimals quickly without giving up correct rounding; and the
 * check of unit scales the readers share.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/st_internal.h"

static bool
same_float(float a, float b)
{
    return a == b && signbit(a) == signbit(b);
}

int
st_format_float(float v, char *out)
{
    int n = 0;
    /* 9 significant digits always read back as the same float (FLT_DECIMAL_DIG). */
    for (int digits = 6; digits <= 9; ++digits) {
        n = snprintf(out, ST_NUMBER_MAX, "%.*g", digits, (double)v);
        if (same_float(strtof(out, NULL), v))
            break;
    }
    return n;
}

int
st_format_double(double v, char *out)
{
    int n = 0;
    /* 17 significant digits always read back as the same double (DBL_DECIMAL_DIG). */
    for (int digits = 15; digits <= 17; ++digits) {
        n = snprintf(out, ST_NUMBER_MAX, "%.*g", digits, v);
        const double back = strtod(out, NULL);
        if (back == v && signbit(back) == signbit(v))
            break;
    }
    return n;
}

/* Longest number text the slow path copies (beyond it the text is refused). */
#define SLOW_PATH_MAX 128

static bool
parse_slow(const char *s, const char *end, double *out)
{
    char buf[SLOW_PATH_MAX];
    const size_t len = (size_t)(end - s);
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (buf[0] == ' ' || buf[0] == '\t')
        return false; /* strtod would skip it; a token never starts with a blank */
    char *stop = NULL;
    errno = 0;
    const double v = strtod(buf, &stop);
    if (stop != buf + len)
        return false;
    /* ERANGE on underflow still gives the nearest representable value (0 or a
     * subnormal); on overflow it gives infinity, which the caller rejects. */
    *out = v;
    return true;
}

bool
st_parse_number(const char *s, const char *end, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *p = s;
    const bool negative = p < end && *p == '-';
    if (p < end && (*p == '-' || *p == '+'))
        ++p;
    uint64_t mantissa = 0;
    int digits = 0, fraction_digits = 0;
    bool seen_point = false;
    for (; p < end; ++p) {
        const char c = *p;
        if (c >= '0' && c <= '9') {
            if (++digits > 19)
                return parse_slow(s, end, out);
            mantissa = mantissa * 10u + (uint64_t)(c - '0');
            fraction_digits += seen_point;
        } else if (c == '.' && !seen_point) {
            seen_point = true;
        } else {
            return parse_slow(s, end, out); /* exponent, hex, inf, nan, or not a number */
        }
    }
    if (digits == 0 || mantissa > (UINT64_C(1) << 53) || fraction_digits > 22)
        return parse_slow(s, end, out);
    const double v = (double)mantissa / pow10[fraction_digits];
    *out = negative ? -v : v;
    return true;
}

enum em_result
st_check_unit_scale(double unit_scale, const char *source, struct em_error *err)
{
    if (!isfinite(unit_scale) || !(unit_scale > 0.0))
        return em_fail(err, EM_ERROR_INVALID_ARGUMENT,
                       "%s: unit scale must be a positive number of metres per file unit, "
                       "got %g",
                       source, unit_scale);
    return EM_OK;
}
