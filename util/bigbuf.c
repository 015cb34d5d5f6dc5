#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/bigbuf.h"

#define HUGE_PAGE	((size_t)2 << 20)
#define BIG_MIN		((size_t)1 << 20)	/* below: plain malloc */

/* At least n bytes on whole 2 MiB pages of their own (aligned, rounded
 * up), marked before anything touches them: a page already touched keeps
 * its 4 KiB backing. What rounding adds is address space until touched,
 * and then at most one 2 MiB page per block. madvise only marks; its
 * errors change nothing and are ignored. free() takes the block back. */
void *
bigbuf_malloc(size_t n)
{
	size_t r;
	void *p;

	if (n < BIG_MIN)
		return malloc(n);
	if (n > SIZE_MAX - HUGE_PAGE)
		return NULL;
	r = (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (posix_memalign(&p, HUGE_PAGE, r) != 0)
		return NULL;
	(void)madvise(p, r, MADV_HUGEPAGE);
	return p;
}

/* Zeroed by hand: a large block is not always fresh from the kernel
 * (malloc reuses freed ones), and a huge page costs one fault either way. */
void *
bigbuf_calloc(size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	if (n * size < BIG_MIN)
		return calloc(n, size);
	if ((p = bigbuf_malloc(n * size)) != NULL)
		memset(p, 0, n * size);
	return p;
}

/* realloc moves a large block wherever it likes: a new aligned block and
 * a copy instead, as a large block grows a few times at most. */
void *
bigbuf_realloc(void *p, size_t n)
{
	size_t old;
	void *q;

	if (p == NULL)
		return bigbuf_malloc(n);
	if (n < BIG_MIN)
		return realloc(p, n);
	if ((q = bigbuf_malloc(n)) == NULL)
		return NULL;
	old = malloc_usable_size(p);
	memcpy(q, p, old < n ? old : n);
	free(p);
	return q;
}
