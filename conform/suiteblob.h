/* The suites built into the program: conform/suites/ID.json as shipped,
 * written into a C table by scripts/embed-suites.sh at build time. Const
 * data; conform/suite.c parses it on demand. */
#ifndef EG_SUITEBLOB_H
#define EG_SUITEBLOB_H

#include <stddef.h>

struct suite_blob {
	const char		*name;	/* the file name, for messages */
	const unsigned char	*bytes;
	size_t			 len;
};

extern const struct suite_blob suite_blobs[];
extern const size_t suite_nblobs;

#endif
