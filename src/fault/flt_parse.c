/*
 * Reading a fault, KIND:DEVICE[:AMOUNT] (src/fault/fault.h): the kind, the devices it
 * names (one, a group or a left/right pair) and its amount in the kind's unit, each checked
 * with an error that says what was expected.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fault/fault.h"
#include "util/u_text.h"

static const char *const k_kind_names[FLT_KIND_COUNT] = {
    [FLT_OFFSET] = "offset",   [FLT_TURN] = "turn", [FLT_DRIFT] = "drift",
    [FLT_NOISE] = "noise",     [FLT_SWAP] = "swap", [FLT_LATENCY] = "latency",
    [FLT_DROPOUT] = "dropout",
};

/* Each kind's unit suffix (accepted after the number) and what the amount means. */
static const struct {
    const char *unit;
    const char *expected;
    double lo, hi;
} k_amount[FLT_KIND_COUNT] = {
    [FLT_OFFSET] = {"cm", "a mount offset in cm along the tracker's +Y", -FLT_MAX_OFFSET_CM,
                    FLT_MAX_OFFSET_CM},
    [FLT_TURN] = {"deg", "a mount turn in degrees", -FLT_MAX_TURN_DEG, FLT_MAX_TURN_DEG},
    [FLT_DRIFT] = {"deg/min", "a yaw drift in degrees per minute", -FLT_MAX_DRIFT_DEG_PER_MIN,
                   FLT_MAX_DRIFT_DEG_PER_MIN},
    [FLT_NOISE] = {"mm", "a position noise deviation in mm", 0.0, FLT_MAX_NOISE_MM},
    [FLT_SWAP] = {"", "nothing", 0.0, 0.0},
    [FLT_LATENCY] = {"ms", "a latency in ms", 0.0, FLT_MAX_LATENCY_MS},
    [FLT_DROPOUT] = {"", "a share of samples (0.1 or 10%) or a window FROM-TOs", 0.0, 1.0},
};

const char *
flt_kind_name(enum flt_kind kind)
{
    return (unsigned)kind < FLT_KIND_COUNT ? k_kind_names[kind] : "unknown";
}

#define PAIR(a, b) (FLT_TRACKER_BIT(a) | FLT_TRACKER_BIT(b))

/* The groups a DEVICE may name besides single devices; the first four are the swap pairs. */
static const struct {
    const char *name;
    uint32_t devices;
} k_groups[] = {
    {"hands", FLT_DEVICE_BIT(EM_DEVICE_LEFT_HAND) | FLT_DEVICE_BIT(EM_DEVICE_RIGHT_HAND)},
    {"feet", PAIR(EM_TRACKER_LEFT_FOOT, EM_TRACKER_RIGHT_FOOT)},
    {"knees", PAIR(EM_TRACKER_LEFT_KNEE, EM_TRACKER_RIGHT_KNEE)},
    {"elbows", PAIR(EM_TRACKER_LEFT_ELBOW, EM_TRACKER_RIGHT_ELBOW)},
    {"trackers", FLT_ALL_DEVICES & ~((1u << EM_DEVICE_COUNT) - 1u)},
    {"all", FLT_ALL_DEVICES},
};
#define PAIR_COUNT 4
#define GROUP_COUNT ((int)(sizeof k_groups / sizeof k_groups[0]))

/* The devices `name` names (0: none). */
static uint32_t
devices_named(const char *name)
{
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        if (strcmp(name, em_device_name((enum em_device)d)) == 0)
            return FLT_DEVICE_BIT(d);
    if (strcmp(name, "left_hand") == 0)
        return FLT_DEVICE_BIT(EM_DEVICE_LEFT_HAND);
    if (strcmp(name, "right_hand") == 0)
        return FLT_DEVICE_BIT(EM_DEVICE_RIGHT_HAND);
    const int t = em_tracker_find(name);
    if (t >= 0)
        return FLT_TRACKER_BIT(t);
    for (int g = 0; g < GROUP_COUNT; ++g)
        if (strcmp(name, k_groups[g].name) == 0)
            return k_groups[g].devices;
    return 0;
}

/* The left/right pair holding `devices` (0: not within one pair). */
static uint32_t
pair_of(uint32_t devices)
{
    for (int g = 0; g < PAIR_COUNT; ++g)
        if (devices && (devices & ~k_groups[g].devices) == 0)
            return k_groups[g].devices;
    return 0;
}

/* `s` without the unit suffix `unit` (when it ends with it) into `out`. */
static void
strip_unit(const char *s, const char *unit, char *out, size_t out_size)
{
    snprintf(out, out_size, "%s", s);
    const size_t n = strlen(out), u = strlen(unit);
    if (u > 0 && n > u && strcmp(out + n - u, unit) == 0)
        out[n - u] = '\0';
}

static enum em_result
parse_window(const char *amount, struct flt_fault *out)
{
    char buf[FLT_TEXT_MAX];
    strip_unit(amount, "s", buf, sizeof buf);
    if (strcmp(buf, amount) == 0)
        return EM_ERROR_PARSE;         /* a window needs its "s" */
    char *dash = strchr(buf + 1, '-'); /* buf + 1: FROM may not be negative anyway */
    if (!dash)
        return EM_ERROR_PARSE;
    *dash = '\0';
    double from = 0.0, to = 0.0;
    if (!u_parse_double(buf, &from) || !u_parse_double(dash + 1, &to) || !(from >= 0.0) ||
        !(to > from) || to > FLT_MAX_WINDOW_S)
        return EM_ERROR_PARSE;
    out->window = true;
    out->window_from_s = from;
    out->window_to_s = to;
    return EM_OK;
}

static enum em_result
parse_amount(const char *amount, struct flt_fault *out)
{
    char buf[FLT_TEXT_MAX];
    const enum flt_kind k = out->kind;
    if (k == FLT_DROPOUT && strchr(amount, '-'))
        return parse_window(amount, out);
    double v = 0.0;
    if (k == FLT_DROPOUT) {
        strip_unit(amount, "%", buf, sizeof buf);
        const bool percent = strcmp(buf, amount) != 0;
        if (!u_parse_double(buf, &v))
            return EM_ERROR_PARSE;
        v = percent ? v / 100.0 : v;
    } else {
        strip_unit(amount, k_amount[k].unit, buf, sizeof buf);
        if (!u_parse_double(buf, &v))
            return EM_ERROR_PARSE;
    }
    if (!(v >= k_amount[k].lo && v <= k_amount[k].hi))
        return EM_ERROR_PARSE;
    out->amount = v;
    return EM_OK;
}

static enum em_result bad(struct em_error *err, const char *what, const char *text, const char *fmt,
                          ...) __attribute__((format(printf, 4, 5)));

/* "WHAT "TEXT": REASON" */
static enum em_result
bad(struct em_error *err, const char *what, const char *text, const char *fmt, ...)
{
    char reason[384];
    va_list args;
    va_start(args, fmt);
    vsnprintf(reason, sizeof reason, fmt, args);
    va_end(args);
    return em_fail(err, EM_ERROR_INVALID_ARGUMENT, "%s %s: %s", what, text, reason);
}

enum em_result
flt_parse(const char *text, const char *what, struct flt_fault *out, struct em_error *err)
{
    memset(out, 0, sizeof *out);
    char shown[FLT_TEXT_MAX + 8];
    snprintf(shown, sizeof shown, "\"%.*s%s\"", FLT_TEXT_MAX - 1, text,
             strlen(text) >= FLT_TEXT_MAX ? "..." : "");
    if (strlen(text) >= FLT_TEXT_MAX)
        return bad(err, what, shown, "too long (at most %d characters)", FLT_TEXT_MAX - 1);
    char buf[FLT_TEXT_MAX];
    snprintf(buf, sizeof buf, "%s", text);
    snprintf(out->text, sizeof out->text, "%s", text);
    char *device = strchr(buf, ':');
    if (!device)
        return bad(err, what, shown, "expected KIND:DEVICE:AMOUNT, KIND one of %s",
                   "drift, noise, latency, dropout, offset, turn, swap");
    *device++ = '\0';
    char *amount = strchr(device, ':');
    if (amount)
        *amount++ = '\0';
    int kind = -1;
    for (int k = 0; k < FLT_KIND_COUNT; ++k)
        if (strcmp(buf, k_kind_names[k]) == 0)
            kind = k;
    if (kind < 0)
        return bad(err, what, shown, "unknown kind; expected %s",
                   "drift, noise, latency, dropout, offset, turn or swap");
    out->kind = (enum flt_kind)kind;
    out->devices = devices_named(device);
    if (!out->devices)
        return bad(err, what, shown, "unknown device; expected %s",
                   "head, left, right, a body tracker (pelvis, chest, left_foot, right_foot, "
                   "left_knee, right_knee, left_elbow, right_elbow) or hands, feet, knees, "
                   "elbows, trackers, all");
    if (out->kind == FLT_SWAP) {
        out->devices = pair_of(out->devices);
        if (!out->devices)
            return bad(err, what, shown, "swap: expected a left/right pair, %s",
                       "hands, feet, knees or elbows");
        if (amount)
            return bad(err, what, shown, "swap takes no amount (%s)", "swap:PAIR");
        return EM_OK;
    }
    if (!amount || !amount[0])
        return bad(err, what, shown, "expected an amount after the device: %s",
                   k_amount[kind].expected);
    if (parse_amount(amount, out) != EM_OK) {
        char expected[160];
        if (kind == FLT_DROPOUT)
            snprintf(expected, sizeof expected, "%s, share from 0 to 1, window 0 <= FROM < TO",
                     k_amount[kind].expected);
        else
            snprintf(expected, sizeof expected, "%s from %g to %g", k_amount[kind].expected,
                     k_amount[kind].lo, k_amount[kind].hi);
        return bad(err, what, shown, "bad amount; expected %s", expected);
    }
    return EM_OK;
}

enum em_result
flt_set_add(struct flt_set *set, const char *text, const char *what, struct em_error *err)
{
    if (set->count >= FLT_MAX_FAULTS)
        return em_fail(err, EM_ERROR_LIMIT, "%s: at most %d faults", what, FLT_MAX_FAULTS);
    struct flt_fault f;
    const enum em_result r = flt_parse(text, what, &f, err);
    if (r == EM_OK)
        set->fault[set->count++] = f;
    return r;
}

void
flt_set_describe(const struct flt_set *set, char *out, size_t out_size)
{
    snprintf(out, out_size, "%s", set->count ? "" : "none");
    size_t used = strlen(out);
    for (int i = 0; i < set->count && used < out_size; ++i)
        used += (size_t)snprintf(out + used, out_size - used, "%s%s", i ? ", " : "",
                                 set->fault[i].text);
}

uint32_t
flt_set_trackers(const struct flt_set *set)
{
    uint32_t t = 0;
    for (int i = 0; i < set->count; ++i)
        t |= set->fault[i].devices >> EM_DEVICE_COUNT;
    return t & EM_TRACKER_ALL;
}
