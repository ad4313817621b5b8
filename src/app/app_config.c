/* --print-config (app_config.h). */
#include <stdlib.h>

#include "app/app_config.h"
#include "render/render.h"
#include "app/app_source.h"
#include "embody/input.h"
#include "util/u_path.h"

static const char *
or_none(const char *s)
{
    return s && s[0] ? s : "-";
}

static const char *
yes_no(bool b)
{
    return b ? "yes" : "no";
}

static void
print_vec3(FILE *out, const char *key, const float *v)
{
    fprintf(out, "%-34s = %.4f %.4f %.4f\n", key, (double)v[0], (double)v[1], (double)v[2]);
}

static void
print_quat(FILE *out, const char *key, const float *q)
{
    fprintf(out, "%-34s = %.4f %.4f %.4f %.4f  (x y z w)\n", key, (double)q[0], (double)q[1],
            (double)q[2], (double)q[3]);
}

static void
print_osc(FILE *out, const char *key, const struct app_osc_option *osc)
{
    if (osc->enabled)
        fprintf(out, "%-34s = %s:%d\n", key, osc->host, osc->port);
    else
        fprintf(out, "%-34s = off\n", key);
}

static void
print_data_path(FILE *out, const char *key, const char *relative)
{
    char path[APP_PATH_MAX];
    const bool found = u_path_find_data(relative, path, sizeof path);
    fprintf(out, "%-34s = %s%s\n", key, found ? path : "not found; tried ", found ? "" : path);
}

static void
print_input(FILE *out, const struct app_options *o)
{
    fprintf(out, "[input]\n");
    fprintf(out, "%-34s = %s\n", "input", app_input_name(o->input));
    fprintf(out, "%-34s = %s\n", "replay", or_none(o->replay_path));
    fprintf(out, "%-34s = %s\n", "fast", yes_no(o->fast));
    fprintf(out, "%-34s = %s\n", "loop", yes_no(o->loop));
    if (o->input == APP_INPUT_VMC)
        fprintf(out, "%-34s = %s:%d (%d serial roles, %d allowed senders%s)\n", "vmc-in",
                o->vmc_in.host[0] ? o->vmc_in.host : "127.0.0.1",
                o->vmc_in.port ? o->vmc_in.port : OSC_VMC_DEFAULT_PORT, o->vmc_in.role_count,
                o->vmc_in.allow_count, o->vmc_in.allow_count ? "" : ": any");
    fprintf(out, "%-34s = %s\n", "openxr support built in", yes_no(app_source_has_openxr()));
}

static void
print_avatar(FILE *out, const struct app_avatar *a, const struct body *body)
{
    fprintf(out, "[avatar]\n");
    fprintf(out, "%-34s = %s (%s)\n", "avatar", a->path, a->kind);
    if (a->unit_scale > 0.0)
        fprintf(out, "%-34s = %g%s\n", "unit scale (m per BVH unit)", a->unit_scale,
                a->unit_scale_guessed ? " (guessed)" : "");
    fprintf(out, "%-34s = %d\n", "joints", a->skeleton.joint_count);
    if (a->have_model)
        fprintf(out, "%-34s = %s (%u triangles)\n", "avatar mesh", a->model.source,
                a->model.index_count / 3);
    else if (a->meshless)
        fprintf(out, "%-34s = none (a skeleton without a mesh: drawn as capsules)\n",
                "avatar mesh");
    fprintf(out, "%-34s = %.3f m\n", "own height", (double)a->own_height_m);
    fprintf(out, "%-34s = %.3f m\n", "own arm span", (double)a->own_arm_span_m);
    const struct sk_skeleton *fitted = body_skeleton(body);
    fprintf(out, "%-34s = %.3f m\n", "fitted height", (double)sk_humanoid_height(fitted));
    fprintf(out, "%-34s = %s\n", "height from", a->height_source);
    fprintf(out, "%-34s = %.3f m\n", "fitted arm span", (double)sk_humanoid_arm_span(fitted));
}

static void
print_body(FILE *out, const struct app_avatar *a, const struct body *body)
{
    struct body_desc d;
    body_get_desc(body, &d);
    fprintf(out, "[body]\n");
    fprintf(out, "%-34s = %s\n", "settings",
            a->settings_path[0] ? a->settings_path : "built-in (no config/body.json found)");
    fprintf(out, "%-34s = %.3f m\n", "height_m", (double)d.height_m);
    fprintf(out, "%-34s = %.3f m\n", "arm_span_m", (double)d.arm_span_m);
    fprintf(out, "%-34s = %.3f\n", "arm_stretch_max", (double)d.arm_stretch_max);
    fprintf(out, "%-34s = %.3f m\n", "floor_height_m", (double)d.floor_height_m);
    fprintf(out, "%-34s = %.3f Hz\n", "filter_min_cutoff_hz", (double)d.filter_min_cutoff_hz);
    fprintf(out, "%-34s = %.3f\n", "filter_beta", (double)d.filter_beta);
    fprintf(out, "%-34s = %.3f s\n", "loss_blend_s", (double)d.loss_blend_s);
    print_vec3(out, "offsets.head_position_m", d.offsets.head_position_m);
    print_quat(out, "offsets.head_rotation", d.offsets.head_rotation);
    fprintf(out, "%-34s = %.3f\n", "offsets.grip_palm_fraction",
            (double)d.offsets.grip_palm_fraction);
    print_vec3(out, "offsets.grip_offset_m.left", d.offsets.grip_offset_m[0]);
    print_vec3(out, "offsets.grip_offset_m.right", d.offsets.grip_offset_m[1]);
    print_quat(out, "offsets.grip_rotation.left", d.offsets.grip_rotation[0]);
    print_quat(out, "offsets.grip_rotation.right", d.offsets.grip_rotation[1]);
    /* Body trackers: where each sits on its bone (defaults, or calibrated). */
    for (int t = 0; t < EM_TRACKER_COUNT; ++t) {
        char key[64];
        snprintf(key, sizeof key, "trackers.%s.mount_m", em_tracker_name((enum em_tracker)t));
        print_vec3(out, key, d.tracker_mount[t].position_m);
        snprintf(key, sizeof key, "trackers.%s.rotation", em_tracker_name((enum em_tracker)t));
        print_quat(out, key, d.tracker_mount[t].rotation);
    }
}

static void
print_output_and_window(FILE *out, const struct app_options *o)
{
    fprintf(out, "[output]\n");
    print_osc(out, "vmc", &o->vmc);
    print_osc(out, "vrchat-osc", &o->vrchat);
    fprintf(out, "%-34s = %s\n", "record", or_none(o->record_path));
    fprintf(out, "[window]\n");
    fprintf(out, "%-34s = %s\n", "window",
            o->no_window    ? "none (--no-window)"
            : o->frames > 0 ? "hidden (--frames)"
                            : "shown");
    if (o->frames > 0)
        fprintf(out, "%-34s = %ld\n", "frames", o->frames);
    else
        fprintf(out, "%-34s = until the end\n", "frames");
    fprintf(out, "%-34s = %s\n", "screenshot", or_none(o->screenshot_path));
    fprintf(out, "%-34s = %s\n", "camera", render_camera_name((enum render_camera)o->camera));
    const char *display = getenv("DISPLAY");
    fprintf(out, "%-34s = %s\n", "DISPLAY", or_none(display));
    fprintf(out, "%-34s = %s\n", "verbosity",
            o->verbosity < 0 ? "quiet" : (o->verbosity > 0 ? "verbose" : "normal"));
}

static void
print_faults(FILE *out, const struct flt_set *faults)
{
    char text[FLT_MAX_FAULTS * FLT_TEXT_MAX];
    flt_set_describe(faults, text, sizeof text);
    fprintf(out, "%-34s = %s\n", "faults", text);
    fprintf(out, "%-34s = %llu\n", "fault seed", (unsigned long long)faults->seed);
}

void
app_config_print(FILE *out, const struct app_options *options, const struct app_avatar *avatar,
                 const struct body *body, const struct flt_set *faults)
{
    print_input(out, options);
    print_faults(out, faults);
    print_avatar(out, avatar, body);
    print_body(out, avatar, body);
    print_output_and_window(out, options);
    fprintf(out, "[data]\n");
    fprintf(out, "%-34s = %s\n", "EMBODY_DATA_DIR", or_none(getenv("EMBODY_DATA_DIR")));
    print_data_path(out, "default avatar", "config/humanoid.json");
    print_data_path(out, "demo stream", "config/demo/demo.csv");
    print_data_path(out, "shaders", "shaders");
}
