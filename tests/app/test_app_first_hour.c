/*
 * What a new user meets in the first hour (issue 21), through the built program: the help
 * lists every command, every eval path runs the program's own body and writes its JSON,
 * solve compares bodies, a live source that falls silent ends the run, and VMC input finds
 * the player's height as a replay does.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app_run.h"
#include "vmc_sender.h"
#include "embody/m_math.h"
#include "osc/osc.h"
#include "embody/prior.h"
#include "embody/skeleton.h"

/* A hang guard: a sanitizer build runs eval's probes of every clip in 80 s alone, and
 * twice that beside another test on two cores. */
#define TIMEOUT_MS 300000

static void
run_ok(const char *const *args, struct app_run_result *r)
{
    app_run(args, (const char *const[]){"XR_RUNTIME_JSON=/nonexistent/runtime.json", NULL},
            TIMEOUT_MS, r);
    app_run_expect_exit(r, 0);
}

/* The line of `text` that starts with `prefix`, or NULL. */
static const char *
line_starting(const char *text, const char *prefix)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, strlen(prefix)) == 0)
            return p;
    return NULL;
}

static void
help_lists_every_command_on_one_line(void **state)
{
    (void)state;
    struct app_run_result r;
    run_ok((const char *[]){"--help", NULL}, &r);
    const char *commands = strstr(r.out, "\nCommands:\n");
    assert_non_null(commands);
    static const char *const names[] = {"mocap2stream", "solve", "eval", "train",
                                        "make-avatar", "proportions"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "  %s ", names[i]);
        const char *line = line_starting(commands, prefix);
        if (!line)
            fail_msg("embody --help does not list the command %s:\n%s", names[i], commands);
        /* One line: what it does on the same line, no continuation below. */
        const char *end = strchr(line, '\n');
        assert_non_null(end);
        const char *words = line + strlen(prefix);
        while (words < end && *words != ' ')
            words++;
        while (words < end && *words == ' ')
            words++;
        if (end - words < 10)
            fail_msg("embody --help: %s has no description on its line", names[i]);
        if (strncmp(end + 1, "     ", 5) == 0)
            fail_msg("embody --help: %s takes more than one line", names[i]);
        /* And the command itself answers --help. */
        struct app_run_result c;
        run_ok((const char *[]){names[i], "--help", NULL}, &c);
        app_run_expect_text(c.out, "usage: embody");
        app_run_result_fini(&c);
    }
    app_run_result_fini(&r);
}

/* The known-body MPJPE of the 3-point setup in an eval JSON (either kind). */
static double
three_point_known_mpjpe(const char *path, const char **out_body, char *body, size_t size)
{
    char *text = app_run_read_file(path, NULL);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    const cJSON *known = NULL;
    const cJSON *setups = cJSON_GetObjectItemCaseSensitive(root, "tracker_setups");
    if (setups) {
        const cJSON *first = cJSON_GetArrayItem(setups, 0);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(first, "setup")), "3");
        known = cJSON_GetObjectItemCaseSensitive(first, "known_body");
        snprintf(body, size, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(root, "body")));
        *out_body = body;
    } else {
        known = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "means"), "known_body");
        *out_body = NULL;
    }
    assert_non_null(known);
    const double mpjpe = cJSON_GetNumberValue(cJSON_GetObjectItem(known, "mpjpe_cm"));
    cJSON_Delete(root);
    return mpjpe;
}

static void
every_eval_path_runs_the_programs_body_and_writes_its_json(void **state)
{
    (void)state;
    char clip[1024], dir[1024], all_json[1024], one_json[1024], procedural_json[1024];
    app_run_source_path("tests/data/mocap/cmu_91_04.bvh", clip, sizeof clip);
    app_run_scratch_path("eval-one-clip", "d", dir, sizeof dir);
    app_run_scratch_path("eval-all", "json", all_json, sizeof all_json);
    app_run_scratch_path("eval-three", "json", one_json, sizeof one_json);
    app_run_scratch_path("eval-procedural", "json", procedural_json, sizeof procedural_json);
    char link_path[1100];
    assert_int_equal(mkdir(dir, 0755) == 0 || access(dir, F_OK) == 0, 1);
    snprintf(link_path, sizeof link_path, "%s/cmu_91_04.bvh", dir);
    remove(link_path);
    assert_int_equal(symlink(clip, link_path), 0);
    remove(all_json);
    struct app_run_result r;
    /* Every setup, by default: the program's body (the prior), and eval.json written. */
    run_ok((const char *[]){"eval", dir, "--trackers", "all", "--frames", "120", "--mode",
                            "known", "--validation", "-", "--quiet", "--json", all_json, NULL},
           &r);
    app_run_expect_text(r.out, "Body: the learned prior");
    app_run_expect_text(r.out, "JSON copy:");
    app_run_result_fini(&r);
    /* One setup: the same body, so the same figure. */
    run_ok((const char *[]){"eval", dir, "--trackers", "3", "--frames", "120", "--mode",
                            "known", "--validation", "-", "--quiet", "--json", one_json, NULL},
           &r);
    app_run_result_fini(&r);
    run_ok((const char *[]){"eval", dir, "--trackers", "all", "--frames", "120", "--mode",
                            "known", "--body", "procedural", "--quiet", "--json",
                            procedural_json, NULL},
           &r);
    app_run_expect_text(r.out, "Body: the procedural estimate");
    app_run_result_fini(&r);
    char body[32];
    const char *body_name = NULL;
    const double all = three_point_known_mpjpe(all_json, &body_name, body, sizeof body);
    assert_non_null(body_name);
    assert_string_equal(body_name, "prior");
    const double one = three_point_known_mpjpe(one_json, &body_name, body, sizeof body);
    const double procedural = three_point_known_mpjpe(procedural_json, &body_name, body,
                                                      sizeof body);
    assert_string_equal(body_name, "procedural");
    if (fabs(all - one) > 1e-9)
        fail_msg("--trackers all gives %.4f cm for 3 points, --trackers 3 %.4f cm: not the same "
                 "body",
                 all, one);
    assert_true(fabs(all - procedural) > 1e-6); /* the bodies differ, so this tells them apart */
    remove(all_json);
    remove(one_json);
    remove(procedural_json);
    remove(link_path);
    rmdir(dir);
}

static void
solve_takes_the_body_to_use(void **state)
{
    (void)state;
    char stream[1024], a[1024], b[1024];
    app_run_source_path("tests/data/streams/cmu_91_04.csv", stream, sizeof stream);
    app_run_scratch_path("solve-prior", "bvh", a, sizeof a);
    app_run_scratch_path("solve-procedural", "bvh", b, sizeof b);
    struct app_run_result r;
    run_ok((const char *[]){"solve", stream, "-o", a, "--body", "prior", NULL}, &r);
    app_run_expect_text(r.err, "body: learned prior ");
    app_run_expect_text(r.err, PR_DEFAULT_MODEL);
    app_run_result_fini(&r);
    run_ok((const char *[]){"solve", stream, "-o", b, "--body", "procedural", NULL}, &r);
    app_run_expect_text(r.err, "body: procedural");
    app_run_result_fini(&r);
    size_t na = 0, nb = 0;
    char *ta = app_run_read_file(a, &na), *tb = app_run_read_file(b, &nb);
    assert_true(na != nb || memcmp(ta, tb, na) != 0);
    free(ta);
    free(tb);
    app_run((const char *[]){"solve", stream, "-o", a, "--body", "learned", NULL}, NULL,
            TIMEOUT_MS, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--body: expected procedural or prior");
    app_run_result_fini(&r);
    remove(a);
    remove(b);
}

static int
free_port(int offset)
{
    return 44000 + offset * 500 + (int)(getpid() % 500);
}

static void
frames_with_a_silent_live_source_ends(void **state)
{
    (void)state;
    char port[16];
    snprintf(port, sizeof port, "%d", free_port(0));
    struct app_run_result r;
    /* Nobody sends: --idle-exit ends it, whatever --frames asked. */
    app_run((const char *[]){"--vmc-in", port, "--no-window", "--frames", "100", "--idle-exit",
                             "1", NULL},
            NULL, 20000, &r);
    assert_false(r.timed_out);
    app_run_expect_exit(&r, 0);
    app_run_expect_text(r.err, "nothing received for");
    assert_true(r.seconds < 10.0);
    app_run_result_fini(&r);
    app_run((const char *[]){"--vmc-in", port, "--idle-exit", "0", NULL}, NULL, 20000, &r);
    app_run_expect_exit(&r, 2);
    app_run_expect_text(r.err, "--idle-exit");
    app_run_result_fini(&r);
}

/* In a child process: sends a player of `height_m` standing still (headset at the eye
 * height of that height, hands at the sides) to `port` over VMC every 10 ms for `seconds`. */
static pid_t
start_standing_player(int port, float height_m, double seconds)
{
    struct em_tracking_frame f;
    memset(&f, 0, sizeof f);
    const float eye_y = SK_HEAD_JOINT_HEIGHT_RATIO * height_m + 0.08f;
    for (int d = 0; d < EM_DEVICE_COUNT; ++d) {
        m_vec3_set(f.device[d].pose.position_m, d == 0 ? 0.0f : (d == 1 ? 0.25f : -0.25f),
                   d == 0 ? eye_y : 0.48f * height_m, d == 0 ? 0.0f : 0.05f);
        m_quat_identity(f.device[d].pose.orientation);
        f.device[d].flags = EM_POSE_ALL_VALID;
    }
    return vmc_sender_start(port, &f, (int)(seconds * 100.0));
}

static void
vmc_input_estimates_the_players_height(void **state)
{
    (void)state;
    const int port = free_port(1);
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    const pid_t sender = start_standing_player(port, 1.45f, 6.0);
    struct app_run_result r;
    run_ok((const char *[]){"--vmc-in", port_text, "--no-window", "--frames", "300", NULL}, &r);
    kill(sender, SIGTERM);
    waitpid(sender, NULL, 0);
    const char *said = strstr(r.err, "calibrated: height ");
    if (!said)
        fail_msg("VMC input did not calibrate the height:\n%s", r.err);
    const double height = atof(said + strlen("calibrated: height "));
    if (fabs(height - 1.45) > 0.03)
        fail_msg("a 1.45 m player over VMC was calibrated to %.2f m", height);
    app_run_result_fini(&r);
}

/* The default avatar (embody make-avatar) with its JSON chunk edited by `edit`, at `path`. */
static void
write_edited_avatar(const char *path, void (*edit)(cJSON *))
{
    char made[1024];
    app_run_scratch_path("made", "vrm", made, sizeof made);
    struct app_run_result r;
    run_ok((const char *[]){"make-avatar", "-o", made, NULL}, &r);
    app_run_result_fini(&r);
    size_t size = 0;
    uint8_t *bytes = (uint8_t *)app_run_read_file(made, &size);
    uint32_t json_len;
    memcpy(&json_len, bytes + 12, 4);
    cJSON *json = cJSON_ParseWithLength((const char *)bytes + 20, json_len);
    assert_non_null(json);
    edit(json);
    char *text = cJSON_PrintUnformatted(json);
    cJSON_Delete(json);
    const size_t text_len = strlen(text), padded = (text_len + 3) & ~(size_t)3;
    const size_t rest = size - 20 - json_len;
    const uint32_t total = (uint32_t)(20 + padded + rest), chunk = (uint32_t)padded;
    memcpy(bytes + 8, &total, 4);
    memcpy(bytes + 12, &chunk, 4);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(bytes, 1, 20, f);
    fwrite(text, 1, text_len, f);
    for (size_t i = text_len; i < padded; ++i)
        fputc(' ', f);
    fwrite(bytes + 20 + json_len, 1, rest, f);
    fclose(f);
    cJSON_free(text);
    free(bytes);
    remove(made);
}

static void
drop_meshes(cJSON *json)
{
    cJSON *node;
    cJSON_ArrayForEach(node, cJSON_GetObjectItem(json, "nodes"))
    {
        cJSON_DeleteItemFromObject(node, "mesh");
        cJSON_DeleteItemFromObject(node, "skin");
    }
    cJSON_DeleteItemFromObject(json, "meshes");
    cJSON_DeleteItemFromObject(json, "skins");
}

static void
keep_everything(cJSON *json)
{
    (void)json;
}

static void
an_avatar_says_what_it_is_and_how_tall(void **state)
{
    (void)state;
    char bare[1024], whole[1024], stream[1024];
    app_run_scratch_path("bare", "vrm", bare, sizeof bare);
    app_run_scratch_path("whole", "vrm", whole, sizeof whole);
    app_run_source_path("tests/data/streams/cmu_91_04.csv", stream, sizeof stream);
    write_edited_avatar(bare, drop_meshes);
    write_edited_avatar(whole, keep_everything);
    struct app_run_result r;
    /* A skeleton without a mesh: said, and drawn as capsules. */
    run_ok((const char *[]){"--avatar", bare, "--print-config", NULL}, &r);
    app_run_expect_text(r.err, "a skeleton without a mesh: it will be drawn as capsules");
    app_run_expect_text(r.out, "avatar mesh");
    app_run_expect_text(r.out, "drawn as capsules");
    app_run_result_fini(&r);
    /* An avatar of its own height, replayed: its height, never 0.00 m. */
    run_ok((const char *[]){"--avatar", whole, "--replay", stream, "--fast", "--no-window",
                            "--frames", "5", NULL},
           &r);
    assert_null(strstr(r.err, "height 0.00 m"));
    app_run_expect_text(r.err, "m: the avatar's own");
    app_run_result_fini(&r);
    remove(bare);
    remove(whole);
}

int
main(int argc, char **argv)
{
    if (!app_run_set_program_from_args(argc, argv))
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(help_lists_every_command_on_one_line),
        cmocka_unit_test(every_eval_path_runs_the_programs_body_and_writes_its_json),
        cmocka_unit_test(solve_takes_the_body_to_use),
        cmocka_unit_test(frames_with_a_silent_live_source_ends),
        cmocka_unit_test(vmc_input_estimates_the_players_height),
        cmocka_unit_test(an_avatar_says_what_it_is_and_how_tall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
