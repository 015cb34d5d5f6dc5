/* Blocks of megabytes (policy bytes, pushed bundles, the matcher's
 * table): malloc'd as usual and freed with free(), with the kernel asked
 * to back them with 2 MiB pages where it can. A first touch of a 4 KiB
 * page costs ~3 µs in the VMs this runs in, and checking a pushed
 * 100,000-entry policy touched ~5,000 of them: a large share of the time
 * it took. Best effort: without transparent huge pages (or with
 * madvise refused) the blocks are ordinary memory. */
#ifndef EG_BIGBUF_H
#define EG_BIGBUF_H

#include <stddef.h>

/* malloc(n); from 1 MiB on, 2 MiB-aligned, rounded up and marked. */
void *bigbuf_malloc(size_t n);
/* calloc(n, size), the same. */
void *bigbuf_calloc(size_t n, size_t size);
/* realloc(p, n), the same (a large block moves to a new marked one). */
void *bigbuf_realloc(void *p, size_t n);
/* malloc(n) never backed by 2 MiB pages, for a block an event loop
 * fills: a 2 MiB page's first touch clears all of it at once, and where
 * the host backs a VM's memory lazily one such fault took up to 9 ms
 * (4 KiB pages: ~0.3 ms at most), a stall of everything on that loop. */
void *bigbuf_malloc_small(size_t n);

/* Once, before any thread starts: freed blocks of up to BIGBUF_KEEP_MMAP
 * bytes stay in the process for reuse (glibc: a fixed mmap threshold, and
 * up to BIGBUF_KEEP_TRIM bytes free at the top of a heap before it is
 * trimmed). The first touch of memory the kernel hands out again costs,
 * in a VM whose host reclaims freed guest pages (virtio-balloon free page
 * reporting), ~4 ms per MiB: a push of a 100,000-entry policy touches ~25
 * MiB. Kept, the next push reuses what the last one freed. The price is
 * RSS that stays at its high-water mark (measured: 43 MiB against 17-32
 * after pushes of that policy). Best effort: mallopt's refusal changes
 * nothing. */
#define BIGBUF_KEEP_MMAP	(32 << 20)	/* glibc's largest on 64 bits */
#define BIGBUF_KEEP_TRIM	(128 << 20)
void bigbuf_keep(void);

#endif
