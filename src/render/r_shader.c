/*
 * Shader files and programs for the mirror view (r_internal.h). Sources are looked up at
 * run time so they can be edited without rebuilding; the build also embeds a copy so an
 * installed or moved program still finds them. Compile errors are reported as
 * "<file>:<line>: error: ..." whatever the driver's own log format.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/r_internal.h"
#include "util/u_path.h"
#include "util/u_text.h"

void
r_shader_source_fini(struct r_shader_source *source)
{
    free(source->text);
    source->text = NULL;
}

static enum em_result
read_file_into(const char *path, struct r_shader_source *out_source, struct em_error *err)
{
    struct u_text text = {0};
    const enum em_result r = u_text_read_file(path, &text, err);
    if (r != EM_OK)
        return r;
    snprintf(out_source->path, sizeof out_source->path, "%s", path);
    out_source->text = text.data; /* ownership moves to the source */
    return EM_OK;
}

enum em_result
r_shader_read(const char *dir, const char *name, struct r_shader_source *out_source,
              struct em_error *err)
{
    memset(out_source, 0, sizeof *out_source);
    char path[PATH_MAX];
    if (dir && dir[0]) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (!u_path_exists(path))
            return em_fail(err, EM_ERROR_IO, "%s: shader file not found (shader_dir is \"%s\")",
                           path, dir);
        return read_file_into(path, out_source, err);
    }
    char relative[128];
    snprintf(relative, sizeof relative, "shaders/%s", name);
    if (u_path_find_data(relative, path, sizeof path))
        return read_file_into(path, out_source, err);
    const char *builtin = r_shader_builtin(name);
    if (!builtin)
        return em_fail(err, EM_ERROR_IO, "shader %s not found; tried %s", relative, path);
    snprintf(out_source->path, sizeof out_source->path, "%s (built in)", relative);
    out_source->text = strdup(builtin);
    return out_source->text ? EM_OK : EM_ERROR_OUT_OF_MEMORY;
}

/* Parses a decimal number at *s, advancing it; false if there is none. */
static bool
take_number(const char **s, long *out)
{
    if (!isdigit((unsigned char)**s))
        return false;
    char *end = NULL;
    errno = 0;
    const long v = strtol(*s, &end, 10);
    if (errno != 0 || end == *s)
        return false;
    *out = v;
    *s = end;
    return true;
}

static bool
take_text(const char **s, const char *expected)
{
    const size_t n = strlen(expected);
    if (strncmp(*s, expected, n) != 0)
        return false;
    *s += n;
    return true;
}

/* Finds the source line of one log line and where its message starts. Understands
 * Mesa "0:12(5): error: msg", NVIDIA "0(12) : error C0000: msg" and "ERROR: 0:12: msg". */
static bool
parse_log_line(const char *line, long *out_line, const char **out_severity,
               const char **out_message)
{
    const char *s = line;
    while (*s == ' ' || *s == '\t')
        ++s;
    /* "ERROR: 0:12: msg" puts the severity first; the others put it in the message. */
    *out_severity = "";
    if (take_text(&s, "ERROR: "))
        *out_severity = "error: ";
    else if (take_text(&s, "WARNING: "))
        *out_severity = "warning: ";
    long file = 0, number = 0, column = 0;
    if (!take_number(&s, &file))
        return false;
    if (take_text(&s, ":") && take_number(&s, &number)) {
        /* Mesa: an optional "(column)" then ": "; the other form: ": ". */
        if (take_text(&s, "(")) {
            if (!take_number(&s, &column) || !take_text(&s, ")"))
                return false;
        }
        if (!take_text(&s, ":"))
            return false;
    } else if (take_text(&s, "(") && take_number(&s, &number) && take_text(&s, ")")) {
        while (*s == ' ')
            ++s;
        if (!take_text(&s, ":"))
            return false;
    } else {
        return false;
    }
    if (file != 0)
        return false; /* only one source string is ever given */
    while (*s == ' ')
        ++s;
    *out_line = number;
    *out_message = s;
    return true;
}

int
r_shader_log_format(const char *path, const char *log, char *out, size_t out_size)
{
    size_t used = 0;
    int first_line = 0;
    out[0] = '\0';
    const char *cursor = log;
    while (*cursor && used + 1 < out_size) {
        const char *end = strchr(cursor, '\n');
        const size_t len = end ? (size_t)(end - cursor) : strlen(cursor);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1),
                 cursor);
        cursor += len + (end ? 1 : 0);
        /* Drop trailing whitespace and empty lines. */
        size_t n = strlen(line);
        while (n > 0 && isspace((unsigned char)line[n - 1]))
            line[--n] = '\0';
        if (n == 0)
            continue;
        long number = 0;
        const char *severity = NULL, *message = NULL;
        int w;
        if (parse_log_line(line, &number, &severity, &message)) {
            if (first_line == 0 && number > 0 && number < INT_MAX)
                first_line = (int)number;
            w = snprintf(out + used, out_size - used, "%s%s:%ld: %s%s", used ? "\n" : "", path,
                         number, severity, message);
        } else {
            w = snprintf(out + used, out_size - used, "%s%s: %s", used ? "\n" : "", path, line);
        }
        if (w < 0)
            break;
        used += (size_t)w < out_size - used ? (size_t)w : out_size - used - 1;
    }
    return first_line;
}

static char *
info_log(GLuint object, bool is_program)
{
    GLint length = 0;
    if (is_program)
        glGetProgramiv(object, GL_INFO_LOG_LENGTH, &length);
    else
        glGetShaderiv(object, GL_INFO_LOG_LENGTH, &length);
    if (length < 1)
        length = 1;
    char *log = calloc((size_t)length + 1, 1);
    if (!log)
        return NULL;
    if (is_program)
        glGetProgramInfoLog(object, length, NULL, log);
    else
        glGetShaderInfoLog(object, length, NULL, log);
    return log;
}

static enum em_result
compile(GLenum stage, const struct r_shader_source *source, GLuint *out_shader,
        struct em_error *err)
{
    const GLuint shader = glCreateShader(stage);
    const GLchar *text = source->text;
    glShaderSource(shader, 1, &text, NULL);
    glCompileShader(shader);
    GLint ok = GL_FALSE;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (ok) {
        *out_shader = shader;
        return EM_OK;
    }
    char *log = info_log(shader, false);
    glDeleteShader(shader);
    if (!log)
        return EM_ERROR_OUT_OF_MEMORY;
    char formatted[EM_ERROR_MESSAGE_MAX];
    r_shader_log_format(source->path, log[0] ? log : "error: compilation failed (no log)",
                        formatted, sizeof formatted);
    free(log);
    return em_fail(err, EM_ERROR_PARSE, "%s", formatted);
}

enum em_result
r_program_build(const struct r_shader_source *vert, const struct r_shader_source *frag,
                GLuint *out_program, struct em_error *err)
{
    GLuint vs = 0, fs = 0;
    enum em_result r = compile(GL_VERTEX_SHADER, vert, &vs, err);
    if (r != EM_OK)
        return r;
    r = compile(GL_FRAGMENT_SHADER, frag, &fs, err);
    if (r != EM_OK) {
        glDeleteShader(vs);
        return r;
    }
    const GLuint program = glCreateProgram();
    glAttachShader(program, vs);
    glAttachShader(program, fs);
    glLinkProgram(program);
    glDeleteShader(vs); /* flagged; freed with the program */
    glDeleteShader(fs);
    GLint ok = GL_FALSE;
    glGetProgramiv(program, GL_LINK_STATUS, &ok);
    if (ok) {
        *out_program = program;
        return EM_OK;
    }
    char *log = info_log(program, true);
    glDeleteProgram(program);
    r = em_fail(err, EM_ERROR_PARSE, "%s + %s: link error: %s", vert->path, frag->path,
                log && log[0] ? log : "(no log)");
    free(log);
    return r;
}
