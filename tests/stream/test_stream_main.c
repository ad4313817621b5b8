/*
 * Stream tests: the 3-point stream files, BVH reading and writing, the humanoid made from
 * a BVH skeleton, and the streams made from motion capture. Each group is in its own file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_stream.h"

const char *const test_clips[TEST_CLIP_COUNT] = {
    "cmu_05_04", "cmu_09_12", "cmu_127_17", "cmu_127_31", "cmu_135_07",
    "cmu_14_04", "cmu_14_07", "cmu_14_14",  "cmu_14_21",  "cmu_14_24",
    "cmu_14_27", "cmu_17_10", "cmu_49_03",  "cmu_91_04",  "cmu_91_17",
};

void
test_scratch_path(const char *tag, const char *ext, char *out, size_t size)
{
    snprintf(out, size, "%s/tests/stream-%s-%ld.%s", EMBODY_BINARY_DIR, tag, (long)getpid(),
             ext);
}

void
test_expect_message(const char *message, ...)
{
    va_list args;
    va_start(args, message);
    for (const char *want = va_arg(args, const char *); want; want = va_arg(args, const char *))
        if (!strstr(message, want)) {
            va_end(args);
            fail_msg("message \"%s\" lacks \"%s\"", message, want);
        }
    va_end(args);
}

char *
test_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    return text;
}

int
main(void)
{
    const struct {
        const char *name;
        const struct CMUnitTest *(*tests)(size_t *);
    } groups[] = {
        {"csv", csv_tests},           {"bvh", bvh_tests},     {"bvh_writer", bvh_writer_tests},
        {"humanoid", humanoid_tests}, {"mocap", mocap_tests}, {"trackers", tracker_stream_tests},
        {"fingers", finger_stream_tests},
    };
    int failed = 0;
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; ++g) {
        size_t count = 0;
        const struct CMUnitTest *tests = groups[g].tests(&count);
        failed += _cmocka_run_group_tests(groups[g].name, tests, count, NULL, NULL);
    }
    return failed;
}
