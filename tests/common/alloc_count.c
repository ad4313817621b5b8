/* Allocation counting for the tests (alloc_count.h): the --wrap targets. */
#include <stddef.h>

#include "alloc_count.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_aligned_alloc(size_t alignment, size_t size);

static long g_allocations;

long
alloc_count(void)
{
    return g_allocations;
}

void *
__wrap_malloc(size_t size)
{
    ++g_allocations;
    return __real_malloc(size);
}

void *
__wrap_calloc(size_t n, size_t size)
{
    ++g_allocations;
    return __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t size)
{
    ++g_allocations;
    return __real_realloc(p, size);
}

void *
__wrap_aligned_alloc(size_t alignment, size_t size)
{
    ++g_allocations;
    return __real_aligned_alloc(alignment, size);
}
