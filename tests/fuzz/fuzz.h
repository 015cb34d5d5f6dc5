/* Shared by the libFuzzer harnesses: the entry points libFuzzer calls and
 * the invariant check. A failed check prints what was expected and aborts,
 * which libFuzzer reports as a crash and saves the input. */
#ifndef EG_FUZZ_H
#define EG_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz check failed: %s (%s:%d)\n",	\
		    #cond, __FILE__, __LINE__);				\
		abort();						\
	}								\
} while (0)

/* A malloc'd copy of exactly len bytes, so ASan sees any read past the
 * end of a prefix (libFuzzer's own buffer is exact only for the whole). */
static inline char *
fuzz_dup(const void *p, size_t len)
{
	char *c = malloc(len > 0 ? len : 1);

	if (c == NULL)
		abort();
	for (size_t i = 0; i < len; i++)
		c[i] = ((const char *)p)[i];
	return c;
}

/* err buffers hold fixed, printable one-line messages. */
static inline int
fuzz_printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

#endif
