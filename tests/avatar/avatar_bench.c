/*
 * Avatar benchmark (not a test): prints two tables.
 *
 * 1. Load time: av_avatar_load (assimp reading the GLB, the skeleton, baking and weighting
 *    the mesh, decoding the texture) of avatars av_make_glb writes at several densities,
 *    median of N loads, one core.
 * 2. Skinning correctness: streams replayed through the body (config/humanoid.json at
 *    1.75 m, as the program's default), the default avatar (config/avatar/embody.vrm)
 *    skinned on the CPU with the same matrices the GPU gets (av_skin_matrices), and the
 *    distance from the centroid of the wrist vertices (the mesh within 3 cm of the hand
 *    joint at rest) to the solved hand joint, every frame, both hands.
 *
 *   build/tests/avatar/avatar_bench [loads] [STREAM.csv ...]
 *   (default: 20 loads, the streams in tests/data/streams/)
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avatar/avatar.h"
#include "embody/body.h"
#include "embody/m_math.h"
#include "embody/stream.h"
#include "util/u_time.h"

#define WRIST_RADIUS_M 0.03f

static int
compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double
percentile(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return v[(int)((double)(n - 1) * p)];
}

static int
load_table(int loads)
{
    struct sk_skeleton sk;
    struct em_error err = {{0}};
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &sk, &err) != EM_OK) {
        fprintf(stderr, "avatar_bench: %s\n", err.message);
        return 1;
    }
    static const int details[] = {12, 26, 40};
    printf("Load time (av_avatar_load, median of %d loads)\n", loads);
    printf("| avatar                 | detail | triangles | vertices | file KB | median ms | "
           "max ms |\n");
    printf("|------------------------|--------|-----------|----------|---------|-----------|"
           "--------|\n");
    double *ms = calloc((size_t)loads, sizeof *ms);
    for (size_t d = 0; d < sizeof details / sizeof details[0] && ms; ++d) {
        char path[512];
        snprintf(path, sizeof path, EMBODY_BINARY_DIR "/avatar-bench-%d.vrm", details[d]);
        const struct av_make_desc desc = {.skeleton = &sk, .detail = details[d]};
        if (av_make_file(&desc, path, &err) != EM_OK) {
            fprintf(stderr, "avatar_bench: %s\n", err.message);
            return 1;
        }
        int tris = 0, verts = 0;
        long bytes = 0;
        FILE *f = fopen(path, "rb");
        if (f && fseek(f, 0, SEEK_END) == 0)
            bytes = ftell(f);
        if (f)
            fclose(f);
        for (int i = 0; i < loads; ++i) {
            struct av_avatar av;
            const int64_t t0 = u_time_now_ns();
            if (av_avatar_load(path, NULL, &av, &err) != EM_OK) {
                fprintf(stderr, "avatar_bench: %s\n", err.message);
                return 1;
            }
            ms[i] = (double)(u_time_now_ns() - t0) * 1e-6;
            tris = (int)av.index_count / 3;
            verts = av.vertex_count;
            av_avatar_fini(&av);
        }
        const double max = percentile(ms, loads, 1.0);
        printf("| embody make-avatar     | %6d | %9d | %8d | %7ld | %9.1f | %6.1f |\n", details[d],
               tris, verts, bytes / 1024, percentile(ms, loads, 0.5), max);
        remove(path);
    }
    free(ms);
    sk_skeleton_fini(&sk);
    return 0;
}

/* Per hand: the avatar's wrist vertices (within WRIST_RADIUS_M of the hand at rest). */
struct wrist {
    int *vertex;
    int count;
};

static void
find_wrist(const struct av_avatar *av, enum sk_bone hand, struct wrist *out)
{
    const float *h = av->skeleton.rest_position_m[av->skeleton.bone_joint[hand]];
    out->vertex = calloc((size_t)av->vertex_count, sizeof *out->vertex);
    out->count = 0;
    for (int i = 0; out->vertex && i < av->vertex_count; ++i)
        if (m_vec3_distance(av->vertices[i].position_m, h) < WRIST_RADIUS_M)
            out->vertex[out->count++] = i;
}

static double
wrist_error_m(const struct av_avatar *av, const struct wrist *w, const mat4 *m, const float *hand_m)
{
    vec3 sum = {0.0f, 0.0f, 0.0f};
    for (int k = 0; k < w->count; ++k) {
        vec3 x;
        av_skin_vertex(&av->vertices[w->vertex[k]], m, x);
        m_vec3_add(sum, x, sum);
    }
    m_vec3_scale(sum, 1.0f / (float)w->count, sum);
    return (double)m_vec3_distance(sum, hand_m);
}

static int
skin_table(int stream_count, char **streams)
{
    struct em_error err = {{0}};
    struct av_avatar av;
    if (av_avatar_load(EMBODY_SOURCE_DIR "/config/avatar/embody.vrm", NULL, &av, &err) != EM_OK) {
        fprintf(stderr, "avatar_bench: %s\n", err.message);
        return 1;
    }
    struct sk_skeleton humanoid;
    if (sk_skeleton_load_json(EMBODY_SOURCE_DIR "/config/humanoid.json", &humanoid, &err) != EM_OK)
        return 1;
    struct wrist wrist[2];
    find_wrist(&av, SK_LEFT_HAND, &wrist[0]);
    find_wrist(&av, SK_RIGHT_HAND, &wrist[1]);
    printf("\nSkinning correctness: default avatar (%d triangles) on the body's solved pose;\n"
           "wrist = centroid of the %d + %d vertices within %.0f mm of the hand joint at rest\n",
           (int)av.index_count / 3, wrist[0].count, wrist[1].count,
           (double)(WRIST_RADIUS_M * 1000.0f));
    printf("| stream            | frames | median mm | p95 mm | max mm |\n");
    printf("|-------------------|--------|-----------|--------|--------|\n");
    double *all = NULL;
    int all_count = 0;
    for (int s = 0; s < stream_count; ++s) {
        struct st_stream stream;
        if (st_stream_load(streams[s], &stream, &err) != EM_OK) {
            fprintf(stderr, "avatar_bench: %s\n", err.message);
            continue;
        }
        struct body *body = NULL;
        const struct body_desc bd = {.skeleton = &humanoid, .height_m = 1.75f};
        struct av_skin_binding bind;
        if (body_create(&bd, &body, &err) != EM_OK ||
            av_skin_bind(&av, body_skeleton(body), &bind, &err) != EM_OK) {
            fprintf(stderr, "avatar_bench: %s\n", err.message);
            return 1;
        }
        mat4 *m = calloc((size_t)bind.joint_count, sizeof *m);
        double *e = calloc((size_t)stream.frame_count * 2, sizeof *e);
        double *grown =
            realloc(all, ((size_t)all_count + (size_t)stream.frame_count * 2) * sizeof *all);
        if (!m || !e || !grown)
            return 1;
        all = grown;
        int n = 0;
        if (s == 0) { /* the rest pose first: what the selection itself is off by */
            struct sk_pose rest;
            if (sk_pose_init(&rest, body_skeleton(body)) != EM_OK)
                return 1;
            sk_pose_set_rest(&rest, body_skeleton(body));
            av_skin_matrices(&bind, &rest, m);
            double r[2];
            for (int side = 0; side < 2; ++side) {
                const int hj = body_skeleton(body)->bone_joint[side ? SK_RIGHT_HAND : SK_LEFT_HAND];
                r[side] =
                    1000.0 * wrist_error_m(&av, &wrist[side], (const mat4 *)m, rest.position_m[hj]);
            }
            printf("| %-17s | %6d | %9.2f | %6.2f | %6.2f |\n", "rest (L, R, max)", 1, r[0], r[1],
                   fmax(r[0], r[1]));
            sk_pose_fini(&rest);
        }
        for (int f = 0; f < stream.frame_count; ++f) {
            body_update(body, &stream.frames[f]);
            const struct sk_pose *pose = body_pose(body);
            const struct sk_skeleton *bsk = body_skeleton(body);
            av_skin_matrices(&bind, pose, m);
            for (int side = 0; side < 2; ++side) {
                const int hj = bsk->bone_joint[side ? SK_RIGHT_HAND : SK_LEFT_HAND];
                e[n++] = 1000.0 *
                         wrist_error_m(&av, &wrist[side], (const mat4 *)m, pose->position_m[hj]);
            }
        }
        memcpy(all + all_count, e, (size_t)n * sizeof *e);
        all_count += n;
        const char *name = strrchr(streams[s], '/');
        printf("| %-17.17s | %6d | %9.2f | %6.2f | %6.2f |\n", name ? name + 1 : streams[s],
               stream.frame_count, percentile(e, n, 0.5), percentile(e, n, 0.95),
               percentile(e, n, 1.0));
        free(e);
        free(m);
        av_skin_binding_fini(&bind);
        body_destroy(&body);
        st_stream_fini(&stream);
    }
    if (all_count > 0)
        printf("| %-17s | %6d | %9.2f | %6.2f | %6.2f |\n", "all", all_count / 2,
               percentile(all, all_count, 0.5), percentile(all, all_count, 0.95),
               percentile(all, all_count, 1.0));
    free(all);
    free(wrist[0].vertex);
    free(wrist[1].vertex);
    sk_skeleton_fini(&humanoid);
    av_avatar_fini(&av);
    return 0;
}

static int
compare_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int
main(int argc, char **argv)
{
    const int loads = argc > 1 ? atoi(argv[1]) : 20;
    if (loads < 1 || loads > 10000) {
        fprintf(stderr, "usage: avatar_bench [loads] [STREAM.csv ...]\n");
        return 2;
    }
    if (load_table(loads) != 0)
        return 1;
    if (argc > 2)
        return skin_table(argc - 2, argv + 2);
    /* Every stream in tests/data/streams/, in name order. */
    char *paths[256];
    int n = 0;
    DIR *dir = opendir(EMBODY_SOURCE_DIR "/tests/data/streams");
    for (struct dirent *d; dir && n < 256 && (d = readdir(dir));) {
        const size_t len = strlen(d->d_name);
        if (len < 5 || strcmp(d->d_name + len - 4, ".csv") != 0)
            continue;
        paths[n] = malloc(1024);
        if (paths[n])
            snprintf(paths[n++], 1024, EMBODY_SOURCE_DIR "/tests/data/streams/%s", d->d_name);
    }
    if (dir)
        closedir(dir);
    qsort(paths, (size_t)n, sizeof *paths, compare_str);
    const int r = skin_table(n, paths);
    for (int i = 0; i < n; ++i)
        free(paths[i]);
    return r;
}
