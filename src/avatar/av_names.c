/*
 * Humanoid bones from glTF node names, for rigs without a VRM extension. A name is folded
 * (lower case; a "prefix:" such as "mixamorig:" dropped; '_', '.', '-' and spaces dropped),
 * its side read from "left"/"right" anywhere or an "l"/"r" token at either end
 * ("UpperArm.L", "thigh_l", "L_Hand"), and what is left looked up in one table of the
 * spellings of VRM, Mixamo, Unity and Blender rigs.
 */
#include <ctype.h>
#include <string.h>

#include "embody/avatar.h"

enum side { SIDE_NONE, SIDE_LEFT, SIDE_RIGHT };

struct spelling {
    const char *folded;
    enum sk_bone left; /* the bone for the left side, or the centre bone */
    bool sided;        /* needs a side (the right bone is the mirror of `left`) */
};

/* Folded names, side removed. Mixamo: Spine, Spine1, Spine2, LeftArm, LeftForeArm,
 * LeftUpLeg, LeftLeg, LeftToeBase; Blender: upper_arm, forearm, thigh, shin. */
static const struct spelling k_spellings[] = {
    {"hips", SK_HIPS, false},
    {"pelvis", SK_HIPS, false},
    {"spine", SK_SPINE, false},
    {"spine1", SK_CHEST, false},
    {"chest", SK_CHEST, false},
    {"spine2", SK_UPPER_CHEST, false},
    {"upperchest", SK_UPPER_CHEST, false},
    {"neck", SK_NECK, false},
    {"head", SK_HEAD, false},
    {"shoulder", SK_LEFT_SHOULDER, true},
    {"clavicle", SK_LEFT_SHOULDER, true},
    {"upperarm", SK_LEFT_UPPER_ARM, true},
    {"arm", SK_LEFT_UPPER_ARM, true},
    {"lowerarm", SK_LEFT_LOWER_ARM, true},
    {"forearm", SK_LEFT_LOWER_ARM, true},
    {"hand", SK_LEFT_HAND, true},
    {"upperleg", SK_LEFT_UPPER_LEG, true},
    {"upleg", SK_LEFT_UPPER_LEG, true},
    {"thigh", SK_LEFT_UPPER_LEG, true},
    {"lowerleg", SK_LEFT_LOWER_LEG, true},
    {"leg", SK_LEFT_LOWER_LEG, true},
    {"shin", SK_LEFT_LOWER_LEG, true},
    {"calf", SK_LEFT_LOWER_LEG, true},
    {"foot", SK_LEFT_FOOT, true},
    {"toes", SK_LEFT_TOES, true},
    {"toe", SK_LEFT_TOES, true},
    {"toebase", SK_LEFT_TOES, true},
};

static bool
is_separator(char c)
{
    return c == '_' || c == '.' || c == '-' || c == ' ';
}

/* Removes `word` from `s` (in place) if found; true when it was there. */
static bool
remove_word(char *s, const char *word)
{
    char *at = strstr(s, word);
    if (!at)
        return false;
    const size_t n = strlen(word);
    memmove(at, at + n, strlen(at + n) + 1);
    return true;
}

/* Reads and removes an "l"/"r" token at either end of `s` (separators still in). */
static enum side
take_side_letter(char *s)
{
    const size_t n = strlen(s);
    if (n >= 3 && is_separator(s[n - 2]) && (s[n - 1] == 'l' || s[n - 1] == 'r')) {
        const enum side side = s[n - 1] == 'l' ? SIDE_LEFT : SIDE_RIGHT;
        s[n - 2] = '\0';
        return side;
    }
    if (n >= 3 && is_separator(s[1]) && (s[0] == 'l' || s[0] == 'r')) {
        const enum side side = s[0] == 'l' ? SIDE_LEFT : SIDE_RIGHT;
        memmove(s, s + 2, n - 1);
        return side;
    }
    return SIDE_NONE;
}

enum sk_bone
av_bone_from_node_name(const char *name)
{
    if (!name || !name[0])
        return SK_BONE_NONE;
    const enum sk_bone exact = sk_bone_from_name(name);
    if (exact != SK_BONE_NONE && exact < SK_HEAD_TOP)
        return exact;
    const char *colon = strrchr(name, ':');
    const char *start = colon ? colon + 1 : name;
    char s[SK_NAME_MAX * 2];
    size_t n = 0;
    for (const char *c = start; *c && n + 1 < sizeof s; ++c)
        s[n++] = (char)tolower((unsigned char)*c);
    s[n] = '\0';

    enum side side = SIDE_NONE;
    if (remove_word(s, "left"))
        side = SIDE_LEFT;
    else if (remove_word(s, "right"))
        side = SIDE_RIGHT;
    else
        side = take_side_letter(s);

    char folded[sizeof s];
    size_t m = 0;
    for (size_t i = 0; s[i]; ++i)
        if (!is_separator(s[i]))
            folded[m++] = s[i];
    folded[m] = '\0';

    for (size_t i = 0; i < sizeof k_spellings / sizeof k_spellings[0]; ++i) {
        const struct spelling *sp = &k_spellings[i];
        if (strcmp(folded, sp->folded) != 0)
            continue;
        if (!sp->sided)
            return side == SIDE_NONE ? sp->left : SK_BONE_NONE;
        if (side == SIDE_NONE)
            return SK_BONE_NONE;
        return side == SIDE_LEFT ? sp->left : sk_bone_mirror(sp->left);
    }
    return SK_BONE_NONE;
}
