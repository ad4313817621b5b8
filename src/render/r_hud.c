/*
 * The HUD and the help overlay (r_internal.h), laid out in pixels from the top left and
 * drawn unmirrored over every camera: the solver's health (frame rate, solve time,
 * iterations, residual per effector), each device's tracking state, the body's posture and
 * stepping, the calibration, and the keys.
 */
#include <stdio.h>
#include <string.h>

#include "render/r_internal.h"

static const uint8_t k_panel[4] = {12, 14, 20, 190};
static const uint8_t k_label[4] = {150, 160, 178, 255};
static const uint8_t k_value[4] = {236, 238, 242, 255};
static const uint8_t k_good[4] = {110, 220, 130, 255};
static const uint8_t k_warn[4] = {245, 200, 80, 255};
static const uint8_t k_bad[4] = {250, 90, 80, 255};
static const uint8_t k_accent[4] = {120, 200, 255, 255};

/* A pen over the HUD: where the next text goes, and how wide the widest line was. */
struct pen {
    struct r_text_batch *batch;
    const struct r_font *font;
    float x0, x, y;
    float label_w;
    float max_x;
};

static void
pen_text(struct pen *p, const char *text, const uint8_t rgba[4])
{
    p->x = r_text_add(p->batch, p->font, p->x, p->y, text, rgba);
    if (p->x > p->max_x)
        p->max_x = p->x;
}

static void
pen_label(struct pen *p, const char *label)
{
    p->x = p->x0;
    pen_text(p, label, k_label);
    p->x = p->x0 + p->label_w;
}

static void
pen_newline(struct pen *p)
{
    p->x = p->x0;
    p->y += p->font->line_px * 1.15f;
}

static const char *
or_dash(const char *s)
{
    return s && s[0] ? s : "–";
}

static void
device_state(const struct em_device_pose *d, const char **out_word, const uint8_t **out_rgba)
{
    const uint32_t tracked = EM_POSE_ORIENTATION_TRACKED | EM_POSE_POSITION_TRACKED;
    if (!em_device_pose_usable(d)) {
        *out_word = "✕ lost";
        *out_rgba = k_bad;
    } else if ((d->flags & tracked) != tracked) {
        *out_word = "● inferred";
        *out_rgba = k_warn;
    } else {
        *out_word = "● tracked";
        *out_rgba = k_good;
    }
}

/* An avatar's setup and body, and its error against the truth: this frame and the mean
 * so far, all joints first, then upper, lower, hands, feet. */
static void
lane_line(struct pen *p, const struct render_hud_lane *lane)
{
    static const char *const groups[RENDER_ERROR_GROUPS] = {"all", "upper", "lower", "hands",
                                                            "feet"};
    char buf[160];
    pen_label(p, "avatar");
    snprintf(buf, sizeof buf, "%s", or_dash(lane->label));
    pen_text(p, buf, k_accent);
    pen_newline(p);
    if (!lane->has_error)
        return;
    pen_label(p, "error cm");
    for (int g = 0; g < RENDER_ERROR_GROUPS; ++g) {
        snprintf(buf, sizeof buf, "%s ", groups[g]);
        pen_text(p, buf, k_label);
        const float cm = lane->error_cm[g];
        snprintf(buf, sizeof buf, "%.1f", (double)cm);
        pen_text(p, buf, cm < 5.0f ? k_value : (cm < 15.0f ? k_warn : k_bad));
        snprintf(buf, sizeof buf, " (%.1f)   ", (double)lane->mean_cm[g]);
        pen_text(p, buf, k_label);
    }
    pen_newline(p);
}

/* Starts a continuation line under the values (after `per_line` items on the line). */
static void
pen_wrap(struct pen *p, int shown, int per_line)
{
    if (shown > 0 && shown % per_line == 0) {
        pen_newline(p);
        p->x = p->x0 + p->label_w;
    }
}

/* One device or tracker: its name, its state and the body's note on it (NULL: none). */
static void
device_entry(struct pen *p, const char *name, const struct em_device_pose *pose, const char *note)
{
    char buf[160];
    const char *word;
    const uint8_t *rgba;
    device_state(pose, &word, &rgba);
    snprintf(buf, sizeof buf, "%s ", name);
    pen_text(p, buf, k_label);
    snprintf(buf, sizeof buf, "%s   ", word);
    pen_text(p, buf, rgba);
    if (note) {
        snprintf(buf, sizeof buf, "(%s)   ", note);
        pen_text(p, buf, k_warn);
    }
}

static void
title_line(struct pen *p, const struct render_hud *h, enum render_camera camera)
{
    char buf[160];
    pen_text(p, "embody", k_accent);
    snprintf(buf, sizeof buf, "   %s · %s camera", or_dash(h->source_name),
             render_camera_name(camera));
    pen_text(p, buf, k_label);
    pen_newline(p);
}

static void
solver_line(struct pen *p, const struct render_hud *h, float draw_ms)
{
    char buf[160];
    pen_label(p, "solver");
    if (h->frame_rate_hz > 0.0f)
        snprintf(buf, sizeof buf, "%.0f fps   ", (double)h->frame_rate_hz);
    else
        snprintf(buf, sizeof buf, "– fps   ");
    pen_text(p, buf, k_value);
    snprintf(buf, sizeof buf, "%.0f µs   %d iterations   draw %.1f ms", (double)h->solve_us,
             h->iterations, (double)draw_ms);
    pen_text(p, buf, k_value);
    pen_newline(p);
}

/* Each effector's distance from its target, four to a line. */
static void
residual_lines(struct pen *p, const struct render_hud *h)
{
    char buf[160];
    pen_label(p, "residual");
    const int n = h->effector_count < RENDER_MAX_TARGETS ? h->effector_count : RENDER_MAX_TARGETS;
    if (n <= 0)
        pen_text(p, "–", k_value);
    for (int i = 0; i < n; ++i) {
        pen_wrap(p, i, 4);
        const float mm = h->residual_mm[i];
        snprintf(buf, sizeof buf, "%s ", or_dash(h->effector_name[i]));
        pen_text(p, buf, k_label);
        snprintf(buf, sizeof buf, "%.1f mm   ", (double)mm);
        pen_text(p, buf, mm < 10.0f ? k_value : (mm < 50.0f ? k_warn : k_bad));
    }
    pen_newline(p);
}

static void
devices_line(struct pen *p, const struct render_scene *scene)
{
    pen_label(p, "devices");
    for (int d = 0; d < EM_DEVICE_COUNT; ++d)
        device_entry(p, em_device_name((enum em_device)d), &scene->device[d],
                     scene->hud.device_note[d]);
    pen_newline(p);
}

/* The present body trackers, three to a line; none without trackers. */
static void
trackers_lines(struct pen *p, const struct render_scene *scene)
{
    if (!scene->tracker_present)
        return;
    pen_label(p, "trackers");
    int shown = 0;
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        if (!(scene->tracker_present & EM_TRACKER_BIT(t)))
            continue;
        pen_wrap(p, shown++, 3);
        device_entry(p, em_tracker_name((enum em_tracker)t), &scene->tracker[t],
                     scene->hud.tracker_note[t]);
    }
    pen_newline(p);
}

static void
body_line(struct pen *p, const struct render_hud *h)
{
    char buf[160];
    pen_label(p, "body");
    snprintf(buf, sizeof buf, "%s · %s", or_dash(h->posture), or_dash(h->stepping));
    pen_text(p, buf, k_value);
    pen_newline(p);
}

static void
calibration_line(struct pen *p, const struct render_hud *h)
{
    char buf[160];
    pen_label(p, "calibration");
    if (h->height_m > 0.0f)
        snprintf(buf, sizeof buf, "height %.2f m", (double)h->height_m);
    else
        snprintf(buf, sizeof buf, "height –");
    pen_text(p, buf, k_value);
    if (h->arm_span_m > 0.0f)
        snprintf(buf, sizeof buf, "   arm span %.2f m", (double)h->arm_span_m);
    else
        snprintf(buf, sizeof buf, "   arm span –");
    pen_text(p, buf, k_value);
    pen_newline(p);
}

/* The panel's lines, top to bottom; grows p->max_x and p->y. */
static void
hud_lines(struct pen *p, const struct render_scene *scene, enum render_camera camera, float draw_ms)
{
    const struct render_hud *h = &scene->hud;
    title_line(p, h, camera);
    solver_line(p, h, draw_ms);
    residual_lines(p, h);
    devices_line(p, scene);
    trackers_lines(p, scene);
    body_line(p, h);
    for (int l = 0; l < h->lane_count && l < RENDER_MAX_LANES; ++l)
        lane_line(p, &h->lane[l]);
    calibration_line(p, h);
}

/* Text centred at (cx, y) on a rounded-looking pill of the panel colour. */
static void
badge(struct r_text_batch *batch, const struct r_font *font, float cx, float y, const char *text,
      const uint8_t rgba[4], float scale)
{
    const float w = r_text_width(font, text), pad = 10.0f * scale;
    r_text_rect(batch, font, cx - 0.5f * w - pad, y, w + 2.0f * pad, font->line_px + 0.6f * pad,
                k_panel);
    r_text_add(batch, font, cx - 0.5f * w, y + 0.3f * pad, text, rgba);
}

static void
help_overlay(struct r_text_batch *batch, const struct r_font *font, int width, int height,
             float scale)
{
    static const char *const keys[][2] = {
        {"F1", "show or hide this help"},
        {"Tab", "next camera (Shift+Tab: previous)"},
        {"1 – 5", "mirror, orbit, front, side, top camera"},
        {"drag, wheel", "turn and zoom the orbit camera"},
        {"H", "show or hide the HUD"},
        {"T", "show or hide the IK targets"},
        {"B", "capsule figure over the avatar"},
        {"G", "ghost of the truth (a replayed clip)"},
        {"K", "next tracker setup: 3, 4, 6, 8, 11 points"},
        {"P", "body: learned prior or procedural"},
        {"S", "screenshot (embody-date-time.png)"},
        {"F9", "record the session or stop (embody-date-time.csv)"},
        {"C", "calibrate: stand straight, arms out"},
        {"R", "recenter"},
        {"Space", "pause or resume (replay)"},
        {"Esc", "quit"},
    };
    const int n = (int)(sizeof keys / sizeof keys[0]);
    const float pad = 18.0f * scale, line = font->line_px * 1.25f;
    float key_w = 0.0f, text_w = 0.0f;
    for (int i = 0; i < n; ++i) {
        key_w = fmaxf(key_w, r_text_width(font, keys[i][0]));
        text_w = fmaxf(text_w, r_text_width(font, keys[i][1]));
    }
    const float gap = 24.0f * scale;
    const float w = key_w + gap + text_w + 2.0f * pad;
    const float h = line * ((float)n + 1.5f) + 2.0f * pad;
    const float x = 0.5f * ((float)width - w), y = 0.5f * ((float)height - h);
    const uint8_t panel[4] = {10, 12, 18, 225};
    r_text_rect(batch, font, x, y, w, h, panel);
    r_text_add(batch, font, x + pad, y + pad, "Keys", k_accent);
    for (int i = 0; i < n; ++i) {
        const float row = y + pad + line * ((float)i + 1.5f);
        r_text_add(batch, font, x + pad, row, keys[i][0], k_warn);
        r_text_add(batch, font, x + pad + key_w + gap, row, keys[i][1], k_value);
    }
}

void
r_hud_build(struct r_text_batch *batch, const struct r_font *font, const struct r_hud_state *hud,
            const struct render_scene *scene, enum render_camera camera, float draw_ms, int width,
            int height, float scale, int64_t now_ns)
{
    batch->count = 0;
    if (hud->visible) {
        const float margin = 14.0f * scale, pad = 12.0f * scale;
        /* Lay out once to measure, then draw the panel behind and lay out again. */
        struct pen p = {batch,        font,
                        margin + pad, margin + pad,
                        margin + pad, r_text_width(font, "calibration") + 14.0f * scale,
                        0.0f};
        hud_lines(&p, scene, camera, draw_ms);
        const float panel_w = p.max_x - margin + pad, panel_h = p.y - margin + pad * 0.5f;
        batch->count = 0;
        r_text_rect(batch, font, margin, margin, panel_w, panel_h, k_panel);
        p.x = p.x0;
        p.y = margin + pad;
        hud_lines(&p, scene, camera, draw_ms);

        const char *hint = "F1 help · Tab camera · S screenshot · F9 record · H hide";
        r_text_add(batch, font, margin, (float)height - margin - font->line_px, hint, k_label);
        if (scene->hud.paused)
            badge(batch, font, 0.5f * (float)width, margin, "PAUSED", k_warn, scale);
        if (scene->hud.recording)
            badge(batch, font, (float)width - 4.0f * margin, margin, "● REC", k_bad, scale);
    }
    const char *message = NULL;
    if (hud->message[0] && now_ns < hud->message_until_ns)
        message = hud->message;
    else if (scene->hud.message && scene->hud.message[0])
        message = scene->hud.message;
    if (message)
        badge(batch, font, 0.5f * (float)width, (float)height - 3.2f * font->line_px, message,
              k_value, scale);
    if (hud->help_visible)
        help_overlay(batch, font, width, height, scale);
}
