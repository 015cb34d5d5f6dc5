/* The fixed Ed25519 key of the signed-format harnesses (fuzz_bundle,
 * fuzz_receipt): made from a public 32-byte seed, so that the checked-in
 * seeds signed with it by tests/fuzz/mkcorpus.py verify and the fuzzer
 * starts inside the format. Its public half reaches a keyring the way the
 * guard's and the attesters' do: an SPKI PEM file (a temporary one,
 * removed at once) through bundle_keyring_add_file. */
#ifndef EG_FUZZKEY_H
#define EG_FUZZKEY_H

#include <stdio.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "plane/bundle.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_SEED	"egress-guard fuzz key, public!!!"	/* 32 bytes */

/* The private key in *priv, and a new keyring holding its public half. */
static inline struct bundle_keyring *
fuzz_key_keyring(EVP_PKEY **priv)
{
	char path[] = "/tmp/eg-fuzz-key.XXXXXX", err[256];
	struct bundle_keyring *kr;
	FILE *f;
	int fd;

	*priv = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL,
	    (const unsigned char *)FUZZ_SEED, 32);
	FUZZ_CHECK(*priv != NULL);
	FUZZ_CHECK((fd = mkstemp(path)) != -1);
	FUZZ_CHECK((f = fdopen(fd, "w")) != NULL);
	FUZZ_CHECK(PEM_write_PUBKEY(f, *priv) == 1);
	FUZZ_CHECK(fclose(f) == 0);
	FUZZ_CHECK((kr = bundle_keyring_new()) != NULL);
	if (bundle_keyring_add_file(kr, path, err, sizeof(err)) == -1) {
		fprintf(stderr, "fuzz: %s\n", err);
		abort();
	}
	unlink(path);
	FUZZ_CHECK(bundle_keyring_count(kr) == 1);
	return kr;
}

#endif
