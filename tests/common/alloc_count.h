/*
 * Counting allocations in a test (that a per-frame path allocates nothing): a test target
 * given to embody_count_allocations() (tests/CMakeLists.txt) links alloc_count.c with
 * malloc, calloc, realloc and aligned_alloc wrapped; every call through them, the
 * library's included, adds one.
 */
#ifndef EMBODY_TESTS_ALLOC_COUNT_H
#define EMBODY_TESTS_ALLOC_COUNT_H

/* How many allocations the process has made so far. */
long alloc_count(void);

#endif
