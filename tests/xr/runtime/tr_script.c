/*
 * The test runtime's script, named by $EMBODY_TEST_RUNTIME_SCRIPT: one directive per
 * line, '#' starts a comment.
 *
 *   poses FILE                 the poses to serve: a 3-point stream CSV (PROTOCOL.md
 *                              section 1), path relative to the script; row k is served
 *                              at frame k, the last row after the end
 *   profile PATH               the controllers' interaction profile (default
 *                              /interaction_profiles/khr/simple_controller); a meta/
 *                              profile named here or in an event offers
 *                              XR_FB_touch_controller_pro and XR_META_touch_controller_plus
 *   hide_extension NAME        the runtime does not offer NAME
 *   no_hmd                     xrGetSystem: XR_ERROR_FORM_FACTOR_UNAVAILABLE
 *   no_stage                   no STAGE reference space
 *   local_origin_y METRES      height of LOCAL's origin above the floor (default 1.6)
 *   system_unavailable N       after a session loss xrGetSystem fails N times (default 2)
 *   runtime_unavailable N      after an instance loss xrCreateInstance fails N times
 *                              (default 2)
 *   manual_focus               sessions stay VISIBLE until "focus"
 *   at FRAME EVENT [ARGS]      at that frame (counted by xrWaitFrame; in a headless
 *                              session by xrSyncActions), in file order:
 *       stop                   STOPPING; READY again after xrEndSession
 *       exit                   STOPPING (when running), EXITING after xrEndSession
 *       focus, unfocus         FOCUSED <-> VISIBLE
 *       session_loss           LOSS_PENDING (calls work until the session is destroyed)
 *       session_lost           LOSS_PENDING, and session calls fail at once
 *       instance_loss          instance loss pending (calls keep working)
 *       instance_lost          instance loss pending, and every call fails at once
 *       profile PATH           the controllers change profile
 *       press PATH, release PATH   a button, e.g. /user/hand/right/input/a/click
 *       flags DEVICE HEX       from then on DEVICE (head, left, right) reports these
 *                              XrSpaceLocationFlags whenever its row is valid
 *       tracker_connect ROLE, tracker_disconnect ROLE   a body tracker comes or goes
 *       recenter               XrEventDataReferenceSpaceChangePending for STAGE (the
 *                              poses themselves stay as the stream has them)
 *       hand left|right POSE   hand tracking (offers XR_EXT_hand_tracking) shows POSE:
 *                              point, pinch, fist, open, thumbs_up, absurd (a fist with
 *                              four absurd joints) or none (not tracked); the wrist is
 *                              placed at the hand's row pose (its controller's grip)
 *       controller left|right off|on   the hand's controller is put down (its actions
 *                              and poses inactive) or picked up again
 *       hand_at left|right X,Y,Z   the tracked hand's grip (its palm) at this STAGE
 *                              position, axes aligned with STAGE, wherever its controller
 *                              is; "hand_at left|right controller" puts it back in hand
 *       value PATH NUMBER      a float input (e.g. /user/hand/right/input/trigger/value)
 *                              reads NUMBER from then on
 *   hand_tracking              offer XR_EXT_hand_tracking (hands not tracked until a
 *                              hand event)
 *   tracker ROLE X Y Z         a body tracker (XR_HTCX_vive_tracker_interaction; ROLE
 *                              waist, chest, left_foot, ..., right_elbow) at this STAGE
 *                              position, axes aligned, connected from the start
 *
 * A row whose valid flag is 0 is served with no location flags and a NaN pose, so an
 * application that uses it anyway shows.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_runtime.h"

#define TR_STREAM_COLUMNS 25

static bool
fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "test runtime: %s:%d: %s\n", file, line, what);
    return false;
}

/* Pose values are read with strtof, as a float-exact reader must: "%.9g" of a float gives
 * that float back. */
static bool
parse_row(char *line, struct tr_row *row)
{
    double t = 0.0, valid = 0.0;
    float v[7];
    char *cursor = line;
    for (int i = 0; i < TR_STREAM_COLUMNS; ++i) {
        char *end = NULL;
        errno = 0;
        const int field = i == 0 ? -1 : (i - 1) % 8; /* 0..6 pose, 7 valid */
        if (field < 0)
            t = strtod(cursor, &end);
        else if (field == 7)
            valid = strtod(cursor, &end);
        else
            v[field] = strtof(cursor, &end);
        if (end == cursor || errno != 0)
            return false;
        cursor = end;
        if (field == 7) {
            const int d = (i - 1) / 8;
            if (valid != 0.0 && valid != 1.0)
                return false;
            row->pose[d].position = (XrVector3f){v[0], v[1], v[2]};
            row->pose[d].orientation = (XrQuaternionf){v[3], v[4], v[5], v[6]};
            row->valid[d] = valid == 1.0;
        }
        if (i + 1 < TR_STREAM_COLUMNS) {
            if (*cursor != ',')
                return false;
            cursor++;
        }
    }
    while (*cursor == ' ' || *cursor == '\r' || *cursor == '\n')
        cursor++;
    row->t_s = t;
    return *cursor == '\0';
}

static bool
load_poses(const char *path, struct tr_script *s)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(path, 0, "cannot open the pose stream");
    char line[4096];
    int line_number = 0;
    bool ok = true;
    s->rows = calloc(TR_MAX_ROWS, sizeof *s->rows);
    s->row_count = 0;
    while (ok && s->rows && fgets(line, sizeof line, f)) {
        line_number++;
        if (line_number == 1) {
            ok = strncmp(line, "t,head_px", 9) == 0 || fail(path, 1, "not a 3-point stream");
            continue;
        }
        if (line[0] == '\n' || line[0] == '\0')
            continue;
        if (s->row_count == TR_MAX_ROWS)
            ok = fail(path, line_number, "too many rows");
        else if (!parse_row(line, &s->rows[s->row_count]))
            ok = fail(path, line_number, "expected 25 numbers (flags 0 or 1)");
        else
            s->row_count++;
    }
    fclose(f);
    return ok && s->rows && (s->row_count > 0 || fail(path, line_number, "no rows"));
}

static void
default_row(struct tr_script *s)
{
    s->rows = calloc(1, sizeof *s->rows);
    if (!s->rows)
        return;
    s->row_count = 1;
    struct tr_row *r = &s->rows[0];
    const float y[TR_DEVICE_COUNT] = {1.6f, 1.0f, 1.0f};
    const float x[TR_DEVICE_COUNT] = {0.0f, -0.3f, 0.3f};
    for (int d = 0; d < TR_DEVICE_COUNT; ++d) {
        r->pose[d].position = (XrVector3f){x[d], y[d], 0.0f};
        r->pose[d].orientation = (XrQuaternionf){0.0f, 0.0f, 0.0f, 1.0f};
        r->valid[d] = true;
    }
}

static int
device_from_name(const char *name)
{
    if (strcmp(name, "head") == 0)
        return TR_HEAD;
    if (strcmp(name, "left") == 0)
        return TR_LEFT;
    if (strcmp(name, "right") == 0)
        return TR_RIGHT;
    return -1;
}

/* Touch Pro and Touch Plus: their extensions are offered to scripts that use them (the
 * other scripts' runtimes are as they were). */
static bool
names_meta_profile(const char *path)
{
    return strncmp(path, "/interaction_profiles/meta/", strlen("/interaction_profiles/meta/")) == 0;
}

static bool
parse_event(struct tr_script *s, const char *file, int line, char *rest)
{
    if (s->event_count == TR_MAX_EVENTS_SCRIPTED)
        return fail(file, line, "too many events");
    struct tr_scripted_event *ev = &s->events[s->event_count];
    memset(ev, 0, sizeof *ev);
    char name[64] = "", arg1[XR_MAX_PATH_LENGTH] = "", arg2[64] = "";
    const int n = sscanf(rest, "%ld %63s %255s %63s", &ev->frame, name, arg1, arg2);
    if (n < 2 || ev->frame < 0)
        return fail(file, line, "expected: at FRAME EVENT [ARGS]");
    static const struct {
        const char *name;
        enum tr_event_kind kind;
        int args;
    } k_events[] = {
        {"stop", TR_EV_STOP, 0},
        {"exit", TR_EV_EXIT, 0},
        {"focus", TR_EV_FOCUS, 0},
        {"unfocus", TR_EV_UNFOCUS, 0},
        {"session_loss", TR_EV_SESSION_LOSS, 0},
        {"session_lost", TR_EV_SESSION_LOST, 0},
        {"instance_loss", TR_EV_INSTANCE_LOSS, 0},
        {"instance_lost", TR_EV_INSTANCE_LOST, 0},
        {"profile", TR_EV_PROFILE, 1},
        {"press", TR_EV_PRESS, 1},
        {"release", TR_EV_RELEASE, 1},
        {"flags", TR_EV_FLAGS, 2},
        {"tracker_connect", TR_EV_TRACKER_CONNECT, 1},
        {"tracker_disconnect", TR_EV_TRACKER_DISCONNECT, 1},
        {"recenter", TR_EV_RECENTER, 0},
        {"hand", TR_EV_HAND, 2},
        {"controller", TR_EV_CONTROLLER, 2},
        {"value", TR_EV_VALUE, 2},
        {"hand_at", TR_EV_HAND_AT, 2},
    };
    for (size_t i = 0; i < sizeof k_events / sizeof k_events[0]; ++i) {
        if (strcmp(k_events[i].name, name) != 0)
            continue;
        if (n - 2 != k_events[i].args)
            return fail(file, line, "wrong number of event arguments");
        ev->kind = k_events[i].kind;
        snprintf(ev->path, sizeof ev->path, "%s", arg1);
        if (ev->kind == TR_EV_PROFILE)
            s->meta_touch |= names_meta_profile(arg1);
        if (ev->kind == TR_EV_TRACKER_CONNECT || ev->kind == TR_EV_TRACKER_DISCONNECT) {
            ev->device = tr_tracker_role_find(arg1);
            s->vive_trackers = true;
            if (ev->device < 0)
                return fail(file, line, "expected a tracker role (waist, chest, left_foot, ...)");
        }
        if (ev->kind == TR_EV_HAND || ev->kind == TR_EV_CONTROLLER) {
            static const char *const poses[] = {"point", "pinch", "fist",
                                                "open",  "thumbs_up", "absurd"};
            ev->device = strcmp(arg1, "left") == 0 ? 0 : strcmp(arg1, "right") == 0 ? 1 : -1;
            int value = -2;
            if (ev->kind == TR_EV_CONTROLLER) {
                value = strcmp(arg2, "off") == 0 ? 1 : strcmp(arg2, "on") == 0 ? 0 : -2;
            } else {
                s->hand_tracking = true;
                value = strcmp(arg2, "none") == 0 ? TR_HAND_NONE : -2;
                for (int p = 0; p < (int)(sizeof poses / sizeof poses[0]); ++p)
                    if (strcmp(arg2, poses[p]) == 0)
                        value = p;
            }
            if (ev->device < 0 || value == -2)
                return fail(file, line,
                            ev->kind == TR_EV_HAND
                                ? "expected: hand left|right point|pinch|fist|open|"
                                  "thumbs_up|absurd|none"
                                : "expected: controller left|right off|on");
            ev->flags = (XrSpaceLocationFlags)(value + 1); /* stored + 1: none is 0 */
        }
        if (ev->kind == TR_EV_HAND_AT) {
            ev->device = strcmp(arg1, "left") == 0 ? 0 : strcmp(arg1, "right") == 0 ? 1 : -1;
            const bool back = strcmp(arg2, "controller") == 0;
            char tail = '\0';
            if (ev->device < 0 ||
                (!back && sscanf(arg2, "%f,%f,%f%c", &ev->at_m[0], &ev->at_m[1], &ev->at_m[2],
                                 &tail) != 3))
                return fail(file, line, "expected: hand_at left|right X,Y,Z|controller");
            ev->flags = back ? 0 : 1;
            s->hand_tracking = true;
        }
        if (ev->kind == TR_EV_VALUE) {
            char *end = NULL;
            ev->value = strtof(arg2, &end);
            if (*end != '\0' || !isfinite(ev->value))
                return fail(file, line, "expected: value PATH NUMBER");
        }
        if (ev->kind == TR_EV_FLAGS) {
            ev->device = device_from_name(arg1);
            char *end = NULL;
            ev->flags = strtoull(arg2, &end, 16);
            if (ev->device < 0 || *end != '\0')
                return fail(file, line, "expected: flags head|left|right HEX");
        }
        s->event_count++;
        return true;
    }
    return fail(file, line, "unknown event");
}

static bool
parse_directive(struct tr_script *s, const char *file, int line, char *text, char *dir,
                size_t dir_size)
{
    char word[64] = "", arg[1024] = "";
    if (sscanf(text, "%63s %1023s", word, arg) < 1)
        return true; /* blank */
    if (word[0] == '#')
        return true;
    if (strcmp(word, "tracker") == 0) {
        char role[64];
        float p[3];
        const int r = sscanf(text, "%*s %63s %f %f %f", role, &p[0], &p[1], &p[2]) == 4
                          ? tr_tracker_role_find(role)
                          : -1;
        if (r < 0)
            return fail(file, line, "expected: tracker ROLE X Y Z");
        memcpy(s->tracker_position_m[r], p, sizeof p);
        s->trackers_at_start |= 1u << r;
        s->vive_trackers = true;
        return true;
    }
    if (strcmp(word, "poses") == 0) {
        char path[2048];
        snprintf(path, sizeof path, "%.*s/%s", (int)dir_size, dir, arg);
        return load_poses(arg[0] == '/' ? arg : path, s);
    }
    if (strcmp(word, "profile") == 0) {
        if (strlen(arg) >= sizeof s->profile)
            return fail(file, line, "profile path too long");
        memcpy(s->profile, arg, strlen(arg) + 1);
        s->meta_touch |= names_meta_profile(arg);
        return true;
    }
    if (strcmp(word, "hide_extension") == 0 && s->hidden_count < 4) {
        if (strlen(arg) >= XR_MAX_EXTENSION_NAME_SIZE)
            return fail(file, line, "extension name too long");
        memcpy(s->hidden_extension[s->hidden_count++], arg, strlen(arg) + 1);
        return true;
    }
    if (strcmp(word, "hand_tracking") == 0)
        return s->hand_tracking = true;
    if (strcmp(word, "no_hmd") == 0)
        return s->no_hmd = true;
    if (strcmp(word, "no_stage") == 0)
        return s->no_stage = true;
    if (strcmp(word, "manual_focus") == 0)
        return s->manual_focus = true;
    if (strcmp(word, "local_origin_y") == 0) {
        s->local_origin_y_m = strtof(arg, NULL);
        return true;
    }
    if (strcmp(word, "system_unavailable") == 0) {
        s->system_unavailable = atoi(arg);
        return true;
    }
    if (strcmp(word, "runtime_unavailable") == 0) {
        s->runtime_unavailable = atoi(arg);
        return true;
    }
    if (strcmp(word, "at") == 0)
        return parse_event(s, file, line, text + strspn(text, " \t") + 2);
    return fail(file, line, "unknown directive");
}

static bool
load_script(const char *path, struct tr_script *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    snprintf(s->profile, sizeof s->profile, "%s", "/interaction_profiles/khr/simple_controller");
    s->local_origin_y_m = 1.6f;
    s->system_unavailable = 2;
    s->runtime_unavailable = 2;
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(path, 0, "cannot open the script");
    char dir[1024];
    const char *slash = strrchr(path, '/');
    const size_t dir_size = slash ? (size_t)(slash - path) : 1;
    snprintf(dir, sizeof dir, "%.*s", (int)dir_size, slash ? path : ".");
    char line[2048];
    int line_number = 0;
    bool ok = true;
    while (ok && fgets(line, sizeof line, f)) {
        line_number++;
        line[strcspn(line, "\r\n")] = '\0';
        ok = parse_directive(s, path, line_number, line, dir, strlen(dir));
    }
    fclose(f);
    if (ok && s->row_count == 0)
        default_row(s);
    return ok && s->row_count > 0;
}

/* Starts the runtime's world afresh for a new script. */
static void
reset_world(void)
{
    free(tr.script.rows);
    memset(&tr.script, 0, sizeof tr.script);
    memset(&tr.report, 0, sizeof tr.report);
    tr.frame = -1;
    tr.next_event = 0;
    tr.pressed_count = 0;
    tr.value_count = 0;
    tr.hand_pose[0] = tr.hand_pose[1] = TR_HAND_NONE;
    tr.controller_off[0] = tr.controller_off[1] = false;
    tr.hand_placed[0] = tr.hand_placed[1] = false;
    memset(tr.flags_override, 0, sizeof tr.flags_override);
    tr.runtime_unavailable_left = 0;
    tr.system_unavailable_left = 0;
}

bool
tr_script_ensure_loaded(void)
{
    const char *path = getenv("EMBODY_TEST_RUNTIME_SCRIPT");
    if (!path || !path[0]) {
        fprintf(stderr, "test runtime: EMBODY_TEST_RUNTIME_SCRIPT is not set\n");
        return false;
    }
    if (tr.script.rows && strcmp(tr.script.path, path) == 0)
        return true;
    if (tr.instance) {
        fprintf(stderr, "test runtime: the script changed while an instance exists\n");
        return false;
    }
    reset_world();
    struct tr_script *s = &tr.script;
    if (!load_script(path, s)) {
        free(s->rows);
        s->rows = NULL;
        s->row_count = 0;
        return false;
    }
    snprintf(tr.report.script, sizeof tr.report.script, "%s", path);
    snprintf(tr.profile, sizeof tr.profile, "%s", s->profile);
    return true;
}
