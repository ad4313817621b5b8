/*
 * Reading BVH motion capture (include/embody/stream.h): the HIERARCHY section (joints,
 * End Sites, offsets, channels in any order), then the MOTION section (one row of channel
 * values per frame). Every problem is reported with the file and the line.
 *
 * The hierarchy is read token by token; the motion rows, which are nearly all of a clip,
 * are read line by line with a fast exact number reader (st_parse_number), since a CMU
 * clip has a third of a million values.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embody/stream.h"
#include "stream/st_internal.h"
#include "util/u_text.h"

/* Limits against absurd or hostile files. */
#define MAX_JOINTS 4096
#define MAX_DEPTH 256

struct parser {
    struct u_token_reader tok;
    const char *source;
    struct em_error *err;
    struct st_bvh *bvh;
    int joint_capacity;
    char *text_end;
};

/* ---- hierarchy ------------------------------------------------------------------- */

/* A parse error at the line of the last token read. */
__attribute__((format(printf, 2, 3))) static enum em_result
fail_at(struct parser *p, const char *fmt, ...)
{
    char what[400];
    va_list args;
    va_start(args, fmt);
    vsnprintf(what, sizeof what, fmt, args);
    va_end(args);
    return em_fail(p->err, EM_ERROR_PARSE, "%s:%d: %s", p->source, p->tok.line_number, what);
}

static enum em_result
add_joint(struct parser *p, const char *name, int parent, bool is_end_site, int *out_index)
{
    struct st_bvh *bvh = p->bvh;
    if (strlen(name) >= SK_NAME_MAX)
        return em_fail(p->err, EM_ERROR_LIMIT, "%s:%d: joint name \"%.60s...\" is longer than %d "
                       "bytes", p->source, p->tok.line_number, name, SK_NAME_MAX - 1);
    if (bvh->joint_count == MAX_JOINTS)
        return em_fail(p->err, EM_ERROR_LIMIT, "%s:%d: more than %d joints", p->source,
                       p->tok.line_number, MAX_JOINTS);
    for (int i = 0; i < bvh->joint_count; ++i)
        if (strcmp(bvh->joints[i].name, name) == 0)
            return fail_at(p, "joint \"%s\" is defined twice", name);
    if (bvh->joint_count == p->joint_capacity) {
        const int cap = p->joint_capacity ? p->joint_capacity * 2 : 64;
        struct st_bvh_joint *grown = realloc(bvh->joints, (size_t)cap * sizeof *grown);
        if (!grown)
            return em_fail(p->err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory", p->source);
        bvh->joints = grown;
        p->joint_capacity = cap;
    }
    struct st_bvh_joint *j = &bvh->joints[bvh->joint_count];
    memset(j, 0, sizeof *j);
    strcpy(j->name, name);
    j->parent = parent;
    j->is_end_site = is_end_site;
    j->first_channel = bvh->channel_count;
    *out_index = bvh->joint_count++;
    return EM_OK;
}

static enum em_result
read_offset(struct parser *p, struct st_bvh_joint *j)
{
    for (int k = 0; k < 3; ++k) {
        const char *t = u_token_next(&p->tok);
        if (!t)
            return fail_at(p, "unexpected end of file in the OFFSET of joint \"%s\"", j->name);
        if (!st_parse_number(t, t + strlen(t), &j->offset[k]) || !isfinite(j->offset[k]))
            return fail_at(p, "OFFSET of joint \"%s\": expected a finite number, got \"%s\"",
                           j->name, t);
        if (fabs(j->offset[k]) > ST_BVH_MAX_OFFSET) /* the root's too */
            return fail_at(p, "OFFSET of joint \"%s\": %s is beyond %g file units (1 km in "
                           "millimetres); expected a skeleton's offset",
                           j->name, t, ST_BVH_MAX_OFFSET);
    }
    return EM_OK;
}

static bool
channel_from_name(const char *name, enum st_bvh_channel *out)
{
    static const char *const names[] = {"Xposition", "Yposition", "Zposition",
                                        "Xrotation", "Yrotation", "Zrotation"};
    for (int c = 0; c < 6; ++c)
        if (strcmp(name, names[c]) == 0) {
            *out = (enum st_bvh_channel)c;
            return true;
        }
    return false;
}

static enum em_result
read_channels(struct parser *p, struct st_bvh_joint *j)
{
    const char *t = u_token_next(&p->tok);
    long n = 0;
    if (!t || !u_parse_int(t, 0, ST_BVH_MAX_CHANNELS, &n))
        return fail_at(p, "CHANNELS of joint \"%s\": expected a count from 0 to 6, got \"%s\"",
                       j->name, t ? t : "end of file");
    j->channel_count = (int)n;
    j->first_channel = p->bvh->channel_count;
    for (int c = 0; c < j->channel_count; ++c) {
        t = u_token_next(&p->tok);
        if (!t)
            return fail_at(p, "unexpected end of file in the CHANNELS of joint \"%s\"", j->name);
        if (!channel_from_name(t, &j->channel[c]))
            return fail_at(p,
                           "joint \"%s\": unknown channel \"%s\" (expected Xposition, "
                           "Yposition, Zposition, Xrotation, Yrotation or Zrotation)",
                           j->name, t);
        for (int k = 0; k < c; ++k)
            if (j->channel[k] == j->channel[c])
                return fail_at(p, "joint \"%s\": channel \"%s\" is given twice", j->name, t);
    }
    p->bvh->channel_count += j->channel_count;
    return EM_OK;
}

static enum em_result parse_block(struct parser *p, int index, int depth);

/* After ROOT, JOINT or End: the name (rest of the line), then the block. */
static enum em_result
parse_joint(struct parser *p, const char *keyword, int parent, int depth)
{
    if (depth > MAX_DEPTH)
        return em_fail(p->err, EM_ERROR_LIMIT, "%s:%d: joints nested deeper than %d",
                       p->source, p->tok.line_number, MAX_DEPTH);
    const bool end_site = strcmp(keyword, "End") == 0;
    char *rest = u_token_rest_of_line(&p->tok);
    /* Allow the block's brace on the same line ("End Site {"). */
    bool brace = false;
    size_t len = strlen(rest);
    if (len > 0 && rest[len - 1] == '{') {
        brace = true;
        rest[--len] = '\0';
        while (len > 0 && (rest[len - 1] == ' ' || rest[len - 1] == '\t'))
            rest[--len] = '\0';
    }
    char name[SK_NAME_MAX + 8];
    if (end_site) {
        if (strcmp(rest, "Site") != 0)
            return fail_at(p, "expected \"End Site\", got \"End %s\"", rest);
        const char *pname = p->bvh->joints[parent].name;
        if (strlen(pname) + 4 >= SK_NAME_MAX)
            return fail_at(p, "End Site name \"%s_End\" is too long", pname);
        snprintf(name, sizeof name, "%s_End", pname);
    } else {
        if (!rest[0])
            return fail_at(p, "%s without a name", keyword);
        if (len >= SK_NAME_MAX)
            return em_fail(p->err, EM_ERROR_LIMIT, "%s:%d: joint name is longer than %d bytes",
                           p->source, p->tok.line_number, SK_NAME_MAX - 1);
        snprintf(name, sizeof name, "%s", rest);
    }
    int index = 0;
    enum em_result r = add_joint(p, name, parent, end_site, &index);
    if (r != EM_OK)
        return r;
    if (!brace) {
        const char *t = u_token_next(&p->tok);
        if (!t || strcmp(t, "{") != 0)
            return fail_at(p, "expected { after %s \"%s\"", keyword, name);
    }
    return parse_block(p, index, depth);
}

static enum em_result
parse_block(struct parser *p, int index, int depth)
{
    const int open_line = p->tok.line_number;
    bool have_offset = false, have_channels = false;
    for (;;) {
        const char *t = u_token_next(&p->tok);
        struct st_bvh_joint *j = &p->bvh->joints[index];
        const bool end_site = j->is_end_site;
        if (!t)
            return fail_at(p,
                           "unexpected end of file in the block of joint \"%s\" opened on "
                           "line %d: unbalanced braces or a truncated file",
                           j->name, open_line);
        enum em_result r = EM_OK;
        if (strcmp(t, "}") == 0) {
            if (!have_offset)
                return fail_at(p, "joint \"%s\" has no OFFSET", j->name);
            if (!end_site && !have_channels)
                return fail_at(p, "joint \"%s\" has no CHANNELS", j->name);
            return EM_OK;
        }
        if (strcmp(t, "OFFSET") == 0) {
            if (have_offset)
                return fail_at(p, "joint \"%s\" has a second OFFSET", j->name);
            have_offset = true;
            r = read_offset(p, j);
        } else if (strcmp(t, "CHANNELS") == 0 && !end_site) {
            if (have_channels)
                return fail_at(p, "joint \"%s\" has a second CHANNELS", j->name);
            have_channels = true;
            r = read_channels(p, j);
        } else if ((strcmp(t, "JOINT") == 0 || strcmp(t, "End") == 0) && !end_site) {
            r = parse_joint(p, t, index, depth + 1);
        } else if (strcmp(t, "MOTION") == 0) {
            return fail_at(p,
                           "MOTION inside the block of joint \"%s\" opened on line %d: "
                           "unbalanced braces (a } is missing)",
                           j->name, open_line);
        } else {
            return fail_at(p, "unexpected \"%s\" in joint \"%s\"; expected OFFSET, CHANNELS, "
                              "JOINT, End Site or }",
                           t, j->name);
        }
        if (r != EM_OK)
            return r;
    }
}

static enum em_result
parse_hierarchy(struct parser *p)
{
    const char *t = u_token_next(&p->tok);
    if (!t)
        return em_fail(p->err, EM_ERROR_PARSE, "%s: empty file; expected a BVH file starting "
                       "with HIERARCHY", p->source);
    if (strcmp(t, "HIERARCHY") != 0)
        return fail_at(p, "expected HIERARCHY at the start of a BVH file, got \"%s\"", t);
    t = u_token_next(&p->tok);
    if (!t || strcmp(t, "ROOT") != 0)
        return fail_at(p, "expected ROOT after HIERARCHY, got \"%s\"",
                       t ? t : "end of file");
    enum em_result r = parse_joint(p, "ROOT", -1, 0);
    if (r != EM_OK)
        return r;
    t = u_token_next(&p->tok);
    if (!t)
        return fail_at(p, "missing MOTION section after the hierarchy (end of file)");
    if (strcmp(t, "}") == 0)
        return fail_at(p, "unbalanced braces: } with no open block");
    if (strcmp(t, "ROOT") == 0)
        return fail_at(p, "a second ROOT; only one skeleton per file is supported");
    if (strcmp(t, "MOTION") != 0)
        return fail_at(p, "expected MOTION after the hierarchy, got \"%s\"", t);
    if (p->bvh->channel_count == 0)
        return fail_at(p, "the hierarchy has no channels, so there is no motion to read");
    return EM_OK;
}

/* ---- motion ---------------------------------------------------------------------- */

static bool
is_blank_char(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

struct motion_header {
    long frames;
    int frames_line;
    char *rows;     /* the text after the Frame Time line */
    int rows_line;  /* line number of `rows` */
};

/* The next token, which must be `word`. */
static bool
expect_word(struct parser *p, const char *word)
{
    const char *t = u_token_next(&p->tok);
    return t && strcmp(t, word) == 0;
}

static enum em_result
parse_motion_header(struct parser *p, struct motion_header *out)
{
    if (!expect_word(p, "Frames:"))
        return fail_at(p, "expected \"Frames: <count>\" after MOTION");
    const char *v = u_token_next(&p->tok);
    if (!v || !u_parse_int(v, 0, INT32_MAX, &out->frames))
        return fail_at(p, "Frames: expected a count of frames, got \"%s\"",
                       v ? v : "end of file");
    out->frames_line = p->tok.line_number;
    if (!expect_word(p, "Frame") || !expect_word(p, "Time:"))
        return fail_at(p, "expected \"Frame Time: <seconds>\" after Frames");
    v = u_token_next(&p->tok);
    double ft;
    if (!v || !st_parse_number(v, v + strlen(v), &ft) || !isfinite(ft) || !(ft > 0.0))
        return fail_at(p, "Frame Time: expected a positive number of seconds, got \"%s\"",
                       v ? v : "end of file");
    if (!(ft >= ST_BVH_MIN_FRAME_TIME_S && ft <= ST_BVH_MAX_FRAME_TIME_S))
        return fail_at(p, "Frame Time: %s s is not a frame time; expected %g to %g seconds", v,
                       ST_BVH_MIN_FRAME_TIME_S, ST_BVH_MAX_FRAME_TIME_S);
    p->bvh->frame_time_s = ft;
    const int line = p->tok.line_number;
    const char *rest = u_token_rest_of_line(&p->tok);
    if (rest[0])
        return fail_at(p, "unexpected \"%s\" after Frame Time; the rows start on the next line",
                       rest);
    out->rows = p->tok.cursor;
    out->rows_line = line + 1;
    return EM_OK;
}

/* Reads one row's values (stored into `dest` unless NULL); `line_end` is its end. */
static enum em_result
parse_row(struct parser *p, char *s, char *line_end, int line, long row, double *dest,
          bool last_line)
{
    const int want = p->bvh->channel_count;
    int n = 0;
    while (s < line_end) {
        while (s < line_end && is_blank_char(*s))
            ++s;
        if (s >= line_end)
            break;
        char *start = s;
        while (s < line_end && !is_blank_char(*s))
            ++s;
        if (n == want)
            return em_fail(p->err, EM_ERROR_PARSE,
                           "%s:%d: row %ld has more than %d values; expected one per channel",
                           p->source, line, row + 1, want);
        double v;
        if (!st_parse_number(start, s, &v) || !isfinite(v)) {
            const int len = (int)(s - start) > 40 ? 40 : (int)(s - start);
            return em_fail(p->err, EM_ERROR_PARSE,
                           "%s:%d: row %ld, value %d: expected a finite number, got \"%.*s\"",
                           p->source, line, row + 1, n + 1, len, start);
        }
        if (dest)
            dest[n] = v;
        ++n;
    }
    if (n < want)
        return em_fail(p->err, EM_ERROR_PARSE,
                       "%s:%d: row %ld has %d values, expected %d (one per channel)%s",
                       p->source, line, row + 1, n, want, last_line ? ": truncated file?" : "");
    return EM_OK;
}

static bool
line_is_blank(const char *s, const char *end)
{
    for (; s < end; ++s)
        if (!is_blank_char(*s))
            return false;
    return true;
}

/* Walks the rows; counts them, and when `motion` is given checks and stores them. */
static enum em_result
walk_rows(struct parser *p, const struct motion_header *h, double *motion, long *out_rows)
{
    char *s = h->rows;
    int line = h->rows_line;
    long rows = 0;
    const size_t channels = (size_t)p->bvh->channel_count;
    int last_row_line = h->frames_line;
    while (s < p->text_end) {
        char *nl = memchr(s, '\n', (size_t)(p->text_end - s));
        char *line_end = nl ? nl : p->text_end;
        if (!line_is_blank(s, line_end)) {
            if (motion && rows >= h->frames)
                return em_fail(p->err, EM_ERROR_PARSE,
                               "%s:%d: more rows than \"Frames: %ld\" (line %d) says", p->source,
                               line, h->frames, h->frames_line);
            if (motion || rows < h->frames) {
                const enum em_result r =
                    parse_row(p, s, line_end, line, rows,
                              motion ? motion + (size_t)rows * channels : NULL, nl == NULL);
                if (r != EM_OK)
                    return r;
            }
            last_row_line = line;
            ++rows;
        }
        s = nl ? nl + 1 : p->text_end;
        ++line;
    }
    if (rows < h->frames)
        return em_fail(p->err, EM_ERROR_PARSE,
                       "%s:%d: \"Frames: %ld\" (line %d) but the file ends after %ld rows: "
                       "truncated file?",
                       p->source, last_row_line, h->frames, h->frames_line, rows);
    *out_rows = rows;
    return EM_OK;
}

static enum em_result
parse_motion(struct parser *p)
{
    struct motion_header h;
    enum em_result r = parse_motion_header(p, &h);
    if (r != EM_OK)
        return r;
    struct st_bvh *bvh = p->bvh;
    /* Every value takes at least two characters, so a Frames count the text cannot hold
     * means a short row or a missing one somewhere: find it without allocating. */
    const size_t values = (size_t)h.frames * (size_t)bvh->channel_count;
    const size_t room = (size_t)(p->text_end - h.rows) / 2 + 1;
    long rows = 0;
    if (values > room) {
        r = walk_rows(p, &h, NULL, &rows);
        if (r != EM_OK)
            return r;
        return em_fail(p->err, EM_ERROR_PARSE, "%s:%d: \"Frames: %ld\" does not fit the file",
                       p->source, h.frames_line, h.frames);
    }
    bvh->motion = malloc((values > 0 ? values : 1) * sizeof *bvh->motion);
    if (!bvh->motion)
        return em_fail(p->err, EM_ERROR_OUT_OF_MEMORY, "%s: out of memory for %ld frames",
                       p->source, h.frames);
    r = walk_rows(p, &h, bvh->motion, &rows);
    if (r != EM_OK)
        return r;
    bvh->frame_count = (int)h.frames;
    return EM_OK;
}

/* ---- public ---------------------------------------------------------------------- */

enum em_result
st_bvh_parse(char *text, const char *source, struct st_bvh *out_bvh, struct em_error *err)
{
    memset(out_bvh, 0, sizeof *out_bvh);
    if (!source)
        source = "bvh";
    if (strncmp(text, "\xEF\xBB\xBF", 3) == 0)
        text += 3; /* a UTF-8 byte order mark some editors write */
    struct u_text t = {.data = text, .size = strlen(text)};
    struct parser p = {.source = source, .err = err, .bvh = out_bvh, .text_end = text + t.size};
    u_token_reader_init(&p.tok, &t);
    enum em_result r = parse_hierarchy(&p);
    if (r == EM_OK)
        r = parse_motion(&p);
    if (r != EM_OK)
        st_bvh_fini(out_bvh);
    return r;
}

enum em_result
st_bvh_load(const char *path, struct st_bvh *out_bvh, struct em_error *err)
{
    memset(out_bvh, 0, sizeof *out_bvh);
    struct u_text text;
    enum em_result r = u_text_read_file(path, &text, err);
    if (r != EM_OK)
        return r;
    r = st_bvh_parse(text.data, path, out_bvh, err);
    u_text_fini(&text);
    return r;
}

void
st_bvh_fini(struct st_bvh *bvh)
{
    free(bvh->joints);
    free(bvh->motion);
    memset(bvh, 0, sizeof *bvh);
}

int
st_bvh_find(const struct st_bvh *bvh, const char *name)
{
    for (int i = 0; i < bvh->joint_count; ++i)
        if (strcmp(bvh->joints[i].name, name) == 0)
            return i;
    return -1;
}

double
st_bvh_guess_unit_scale(const struct st_bvh *bvh)
{
    static const double scales[] = {1.0, 0.056444, 0.01, 0.0254};
    const double typical_height_m = 1.7;
    const double inf = (double)INFINITY;
    double lo[3] = {inf, inf, inf}, hi[3] = {-inf, -inf, -inf};
    double(*rest)[3] = malloc((size_t)(bvh->joint_count > 0 ? bvh->joint_count : 1) *
                              sizeof *rest);
    if (!rest)
        return 1.0;
    for (int i = 0; i < bvh->joint_count; ++i) {
        const int parent = bvh->joints[i].parent;
        for (int k = 0; k < 3; ++k) {
            rest[i][k] = bvh->joints[i].offset[k] + (parent >= 0 ? rest[parent][k] : 0.0);
            lo[k] = fmin(lo[k], rest[i][k]);
            hi[k] = fmax(hi[k], rest[i][k]);
        }
    }
    free(rest);
    /* The rest pose's largest extent is about the body's height (or arm span). */
    double extent = 0.0;
    for (int k = 0; k < 3; ++k)
        extent = fmax(extent, hi[k] - lo[k]);
    if (!(extent > 0.0) || !isfinite(extent))
        return 1.0;
    double best = 1.0, best_miss = (double)INFINITY;
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; ++i) {
        const double miss = fabs(log(extent * scales[i] / typical_height_m));
        if (miss < best_miss) {
            best_miss = miss;
            best = scales[i];
        }
    }
    return best;
}
