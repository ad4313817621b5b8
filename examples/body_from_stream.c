/* Reconstructs a full body from a recorded 3-point stream (headset and two controllers,
 * the CSV that `embody mocap2stream` writes and F9 records) with embody's body module,
 * and writes the avatar's motion as a BVH file, or prints where the head, hands and feet
 * are every half second.
 *   body_from_stream STREAM.csv [OUT.bvh]
 * The default avatar (config/humanoid.json) is read from the installed data
 * (PREFIX/share/embody), or from $EMBODY_DATA_DIR. */
#include <stdio.h>

#include <embody/body.h>
#include <embody/stream.h>

static int
fail(const char *what, const struct em_error *err)
{
    fprintf(stderr, "body_from_stream: %s: %s\n", what, err->message);
    return 1;
}

/* The stream's mean frame period, for the BVH's frame time. */
static double
mean_period_s(const struct st_stream *stream)
{
    const int n = stream->frame_count;
    if (n < 2)
        return 1.0 / 90.0;
    const double span_s = stream->frames[n - 1].time_s - stream->frames[0].time_s;
    return span_s > 0.0 ? span_s / (n - 1) : 1.0 / 90.0;
}

static void
print_extremities(double time_s, const struct sk_skeleton *skeleton, const struct sk_pose *pose)
{
    static const enum sk_bone shown[] = {SK_HEAD, SK_LEFT_HAND, SK_RIGHT_HAND, SK_LEFT_FOOT,
                                         SK_RIGHT_FOOT};
    printf("t %6.2f s", time_s);
    for (size_t i = 0; i < sizeof shown / sizeof shown[0]; ++i) {
        const int j = sk_skeleton_bone_joint(skeleton, shown[i]);
        if (j >= 0)
            printf("  %s %.2f %.2f %.2f", sk_bone_name(shown[i]), (double)pose->position_m[j][0],
                   (double)pose->position_m[j][1], (double)pose->position_m[j][2]);
    }
    printf("\n");
}

int
main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s STREAM.csv [OUT.bvh]\n", argv[0]);
        return 2;
    }
    struct em_error err;
    struct st_stream stream = {0};
    if (st_stream_load(argv[1], &stream, &err) != EM_OK)
        return fail("reading the stream", &err);
    struct body *body = NULL;
    const struct body_desc desc = {0}; /* zero: the default avatar and settings */
    if (body_create(&desc, &body, &err) != EM_OK) {
        st_stream_fini(&stream);
        return fail("creating the body", &err);
    }
    const struct sk_skeleton *skeleton = body_skeleton(body);
    struct st_bvh_writer bvh = {0};
    const char *out_path = argc == 3 ? argv[2] : NULL;
    int status = 0;
    if (out_path &&
        st_bvh_writer_open(out_path, skeleton, mean_period_s(&stream), &bvh, &err) != EM_OK)
        status = fail("writing the BVH", &err);
    double next_print_s = 0.0;
    for (int f = 0; f < stream.frame_count && status == 0; ++f) {
        body_update(body, &stream.frames[f]);
        const struct sk_pose *pose = body_pose(body);
        if (out_path && st_bvh_writer_write(&bvh, pose, &err) != EM_OK)
            status = fail("writing the BVH", &err);
        if (!out_path && stream.frames[f].time_s >= next_print_s) {
            print_extremities(stream.frames[f].time_s, skeleton, pose);
            next_print_s = stream.frames[f].time_s + 0.5;
        }
    }
    if (out_path && st_bvh_writer_close(&bvh, &err) != EM_OK && status == 0)
        status = fail("writing the BVH", &err);
    if (out_path && status == 0)
        printf("%d frames of a %d-joint avatar written to %s\n", stream.frame_count,
               skeleton->joint_count, out_path);
    body_destroy(&body);
    st_stream_fini(&stream);
    return status;
}
