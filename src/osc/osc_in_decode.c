/*
 * The checked OSC reader (osc_in_decode.h). Two passes over the same walk: the first only
 * checks, the second (run only when the first found the packet whole) calls back, so a
 * refused datagram changes nothing. Spec: OSC 1.0 (opensoundcontrol.org), big-endian,
 * 4-byte aligned.
 */
#include "osc_in_decode.h"

#include <stdbool.h>
#include <string.h>

struct walk {
    osc_in_message_fn on_message; /* NULL: check only */
    void *user;
    int messages;
    const char *why;
};

static uint32_t
read_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static bool
refuse(struct walk *w, const char *why)
{
    w->why = why;
    return false;
}

/* The size of the padded OSC string at `p` (`size` bytes left), or 0 when it is not
 * terminated within them. */
static size_t
string_size(const uint8_t *p, size_t size)
{
    const uint8_t *nul = memchr(p, 0, size);
    if (!nul)
        return 0;
    const size_t padded = ((size_t)(nul - p) + 4) & ~(size_t)3;
    return padded <= size ? padded : 0;
}

/* The size of the argument of type `tag` at `p` (`size` bytes left); false when it does
 * not fit or the tag is unknown. */
static bool
argument_size(struct walk *w, char tag, const uint8_t *p, size_t size, size_t *out_size)
{
    switch (tag) {
    case 'i': case 'f': case 'c': case 'r': case 'm': *out_size = 4; break;
    case 'h': case 't': case 'd': *out_size = 8; break;
    case 'T': case 'F': case 'N': case 'I': case '[': case ']': *out_size = 0; break;
    case 's': case 'S':
        *out_size = string_size(p, size);
        if (!*out_size)
            return refuse(w, "a string argument is not terminated within the message");
        return true;
    case 'b': {
        if (size < 4)
            return refuse(w, "a blob's size runs past the message");
        const uint32_t n = read_u32(p);
        if (n > size - 4)
            return refuse(w, "a blob runs past the message");
        *out_size = 4 + (((size_t)n + 3) & ~(size_t)3);
        break;
    }
    default: return refuse(w, "an unknown type tag");
    }
    if (*out_size > size)
        return refuse(w, "the type tags ask for more data than the message has");
    return true;
}

static bool
walk_message(struct walk *w, const uint8_t *p, size_t size)
{
    struct osc_in_message m = {.types = ""};
    const size_t path_size = string_size(p, size);
    if (!path_size || p[0] != '/')
        return refuse(w, "the address is not a terminated string starting with '/'");
    m.path = (const char *)p;
    size_t at = path_size;
    if (at < size) {
        if (p[at] != ',')
            return refuse(w, "the type tags do not start with ','");
        const size_t types_size = string_size(p + at, size - at);
        if (!types_size)
            return refuse(w, "the type tags are not terminated within the message");
        m.types = (const char *)p + at + 1;
        at += types_size;
    }
    m.argc = (int)strlen(m.types);
    for (int i = 0; i < m.argc; ++i) {
        size_t arg_size = 0;
        if (!argument_size(w, m.types[i], p + at, size - at, &arg_size))
            return false;
        if (i < OSC_IN_MAX_ARGS)
            m.arg[i] = p + at;
        at += arg_size;
    }
    if (at != size)
        return refuse(w, "the message has data its type tags do not account for");
    w->messages++;
    if (w->on_message)
        w->on_message(&m, w->user);
    return true;
}

static bool walk_packet(struct walk *w, const uint8_t *p, size_t size, int depth);

static bool
walk_bundle(struct walk *w, const uint8_t *p, size_t size, int depth)
{
    if (depth >= OSC_IN_MAX_DEPTH)
        return refuse(w, "bundles nested too deep");
    if (size < 16)
        return refuse(w, "a bundle shorter than its header and timetag");
    /* The timetag (bytes 8..15) is ignored: a live stream is dispatched at once. */
    size_t at = 16;
    while (at < size) {
        if (size - at < 4)
            return refuse(w, "a bundle element's size runs past the bundle");
        const uint32_t n = read_u32(p + at);
        at += 4;
        if (n == 0 || n % 4 != 0 || n > size - at)
            return refuse(w, "a bundle element's size is not within what remains of it");
        if (!walk_packet(w, p + at, n, depth + 1))
            return false;
        at += n;
    }
    return true;
}

static bool
walk_packet(struct walk *w, const uint8_t *p, size_t size, int depth)
{
    if (size == 0 || size % 4 != 0)
        return refuse(w, "a size that is not a positive multiple of 4");
    if (size >= 8 && memcmp(p, "#bundle", 8) == 0)
        return walk_bundle(w, p, size, depth);
    if (p[0] == '/')
        return walk_message(w, p, size);
    return refuse(w, "neither a message nor a bundle");
}

int
osc_in_decode(const uint8_t *data, size_t size, osc_in_message_fn on_message, void *user,
              const char **out_why)
{
    struct walk check = {0};
    if (!data || !walk_packet(&check, data, size, 0)) {
        if (out_why)
            *out_why = check.why ? check.why : "no data";
        return -1;
    }
    struct walk run = {.on_message = on_message, .user = user};
    walk_packet(&run, data, size, 0);
    if (out_why)
        *out_why = NULL;
    return run.messages;
}

float
osc_in_float(const struct osc_in_message *message, int i)
{
    const uint32_t bits = read_u32(message->arg[i]);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

void
osc_in_printable(const char *text, size_t max_chars, char *out, size_t out_size)
{
    if (out_size == 0)
        return;
    size_t n = 0;
    size_t i = 0;
    for (; text[i] && i < max_chars && n + 1 < out_size; ++i)
        out[n++] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
    if (text[i] && n + 4 <= out_size - 1) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}
