#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "util/bigbuf.h"

#define HUGE_PAGE	((uintptr_t)2 << 20)

/* The 2 MiB pages wholly inside [p, p + n): a page already touched keeps
 * its 4 KiB backing, so this must come before the block is written.
 * madvise only marks the range; errors change nothing and are ignored. */
static void *
hint(void *p, size_t n)
{
	uintptr_t start, end;

	if (p == NULL || n < HUGE_PAGE)
		return p;
	start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	end = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
	return p;
}

void *
bigbuf_malloc(size_t n)
{
	return hint(malloc(n), n);
}

void *
bigbuf_calloc(size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	return hint(calloc(n, size), n * size);
}

void *
bigbuf_realloc(void *p, size_t n)
{
	return hint(realloc(p, n), n);
}
