/*
 * Shared helpers of the stream tests (one executable, a group of tests per file).
 */
#ifndef EMBODY_TEST_STREAM_H
#define EMBODY_TEST_STREAM_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "embody/result.h"

/* cmocka's assert_float_equal compares floats; this compares doubles. */
#define assert_near(a, b, tol)                                                                 \
    do {                                                                                       \
        const double near_a = (double)(a), near_b = (double)(b);                               \
        if (!(fabs(near_a - near_b) <= (tol)))                                                 \
            fail_msg("%s = %.12g, expected %.12g within %g", #a, near_a, near_b, (double)(tol)); \
    } while (0)

/* Each file's group: fills `out_count` and returns its tests. */
const struct CMUnitTest *
csv_tests(size_t *out_count);
const struct CMUnitTest *
bvh_tests(size_t *out_count);
const struct CMUnitTest *
bvh_writer_tests(size_t *out_count);
const struct CMUnitTest *
humanoid_tests(size_t *out_count);
const struct CMUnitTest *
mocap_tests(size_t *out_count);
const struct CMUnitTest *tracker_stream_tests(size_t *out_count);
const struct CMUnitTest *finger_stream_tests(size_t *out_count);

/* The 15 CMU clips in tests/data, by name ("cmu_05_04"). */
#define TEST_CLIP_COUNT 15
extern const char *const test_clips[TEST_CLIP_COUNT];

/* A path for a scratch file in the build tree: EMBODY_BINARY_DIR/<tag>-<pid>.<ext>. */
void
test_scratch_path(const char *tag, const char *ext, char *out, size_t size);

/* Fails unless `message` contains every one of the NULL-terminated strings. */
void
test_expect_message(const char *message, ...);

/* Reads a whole file into a new NUL-terminated buffer (free it); fails the test if it
 * cannot. */
char *
test_read_file(const char *path);

#endif
