/*
 * People of the training folders across labs (pr_training.h): a person is "LAB:ID", the
 * lab from the clip's file name ("cmu_05_01.bvh", "hdm05_bd_squat_001.bvh"), the ID from
 * the folder's manifest (CMU's subject numbers, HDM05's actors). The command line may name
 * a person without the lab ("05", "bd") where that is one person (pr_corpus.c checks).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prior/pr_training.h"

#define LAB_MAX 12
#define ID_MAX 10

static bool
all_digits(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; ++i)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

static bool
id_chars(const char *s, size_t len)
{
    if (len == 0 || len >= ID_MAX)
        return false;
    for (size_t i = 0; i < len; ++i)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '.')
            return false;
    return true;
}

static bool
lab_chars(const char *s, size_t len)
{
    if (len == 0 || len >= LAB_MAX)
        return false;
    for (size_t i = 0; i < len; ++i)
        if (!isalnum((unsigned char)s[i]))
            return false;
    return true;
}

/* An ID as written: a number with two digits at least ("5" -> "05"), else as given. */
static bool
canonical_id(const char *id, size_t len, char *out, size_t size)
{
    if (!id_chars(id, len))
        return false;
    if (all_digits(id, len)) {
        const long v = strtol(id, NULL, 10);
        if (v > 100000)
            return false;
        snprintf(out, size, "%02ld", v);
    } else {
        snprintf(out, size, "%.*s", (int)len, id);
    }
    return true;
}

bool
pr_person_make(const char *lab, const char *id, char *out, size_t size)
{
    char canon[ID_MAX + 4];
    if (!lab_chars(lab, strlen(lab)) || !canonical_id(id, strlen(id), canon, sizeof canon))
        return false;
    snprintf(out, size, "%s:%s", lab, canon);
    return true;
}

void
pr_person_of_file(const char *file, char *out, size_t size)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    out[0] = '\0';
    const char *first = strchr(base, '_');
    const char *second = first ? strchr(first + 1, '_') : NULL;
    if (!first || !second)
        return;
    char lab[LAB_MAX], id[ID_MAX];
    const size_t lab_len = (size_t)(first - base), id_len = (size_t)(second - first - 1);
    if (!lab_chars(base, lab_len) || !id_chars(first + 1, id_len))
        return;
    snprintf(lab, sizeof lab, "%.*s", (int)lab_len, base);
    for (char *p = lab; *p; ++p)
        *p = (char)tolower((unsigned char)*p);
    snprintf(id, sizeof id, "%.*s", (int)id_len, first + 1);
    if (!pr_person_make(lab, id, out, size))
        out[0] = '\0';
}

bool
pr_person_token(const char *text, size_t len, char *out, size_t size)
{
    const char *colon = memchr(text, ':', len);
    char canon[ID_MAX + 4];
    if (!colon)
        return canonical_id(text, len, out, size);
    const size_t lab_len = (size_t)(colon - text);
    if (!lab_chars(text, lab_len) ||
        !canonical_id(colon + 1, len - lab_len - 1, canon, sizeof canon))
        return false;
    snprintf(out, size, "%.*s:%s", (int)lab_len, text, canon);
    return true;
}

bool
pr_person_matches(const char *person, const char *token)
{
    if (strchr(token, ':'))
        return strcmp(person, token) == 0;
    const char *id = strchr(person, ':');
    return id && strcmp(id + 1, token) == 0;
}

const char *
pr_person_short(const char *person)
{
    return strncmp(person, "cmu:", 4) == 0 ? person + 4 : person;
}
