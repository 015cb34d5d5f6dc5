#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/bigbuf.h"

#define HUGE_PAGE	((size_t)2 << 20)
#define SMALL_PAGE	((size_t)4096)
#define BIG_MIN		((size_t)1 << 20)	/* below: plain malloc */

/* At least n bytes on whole pages of size page of their own (aligned,
 * rounded up), marked with advice before anything touches them: a page
 * already touched keeps its backing. madvise only marks; its errors
 * change nothing and are ignored. free() takes the block back. */
static void *
marked(size_t n, size_t page, int advice)
{
	size_t r;
	void *p;

	if (n < BIG_MIN)
		return malloc(n);
	if (n > SIZE_MAX - page)
		return NULL;
	r = (n + page - 1) & ~(page - 1);
	if (posix_memalign(&p, page, r) != 0)
		return NULL;
	(void)madvise(p, r, advice);
	return p;
}

/* What the 2 MiB rounding adds is address space until touched, and then
 * at most one 2 MiB page per block. */
void *
bigbuf_malloc(size_t n)
{
	return marked(n, HUGE_PAGE, MADV_HUGEPAGE);
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

/* Marked so that no 2 MiB page backs it even where transparent huge
 * pages are "always". */
void *
bigbuf_malloc_small(size_t n)
{
	return marked(n, SMALL_PAGE, MADV_NOHUGEPAGE);
}

void
bigbuf_keep(void)
{
	(void)mallopt(M_MMAP_THRESHOLD, BIGBUF_KEEP_MMAP);
	(void)mallopt(M_TRIM_THRESHOLD, BIGBUF_KEEP_TRIM);
}
