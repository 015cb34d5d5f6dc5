/* egress-guardctl receipt sign|verify and admit (docs/design.md "Receipts
 * and grades"; formats and exit codes in
 * docs/receipts.md). Signing lives here, on the plane side: the guard
 * binary links none of it. */
#ifndef EG_CTL_RECEIPTCMD_H
#define EG_CTL_RECEIPTCMD_H

#include <stddef.h>

#include <openssl/types.h>	/* EVP_PKEY */

struct bundle_keyring;

/* The second line continues main's "usage: egress-guardctl receipt". */
#define RECEIPTCMD_RECEIPT_USAGE \
	"sign REPORT --key ATTESTER.pem [--binary PATH]\n" \
	"       egress-guardctl receipt verify RECEIPT --attesters DIR [--binary PATH]\n" \
	"           [--control SOCK [--guard-uid N]] [--max-age DAYS]\n" \
	"       egress-guardctl receipt show RECEIPT [--attesters DIR]\n" \
	"       (verify exits 0 only for an authentic receipt: 4 revision mismatch,\n" \
	"       5 untrusted signer, 6 bad signature, 7 stale, 8 guard unreachable;\n" \
	"       docs/receipts.md)"
#define RECEIPTCMD_ADMIT_USAGE \
	"--profile PROFILE [--catalog FILE] [--grade GRADE | --receipt RECEIPT --attesters DIR\n" \
	"           [--binary PATH] [--control SOCK [--guard-uid N]] [--max-age DAYS]\n" \
	"           [--suite ID[,ID...]]]"

/* Exit codes: CLI_EXIT_* in ctl/cli.h. */

/* Signs canonical receipt bytes (receipt_canonical) as given and returns
 * the envelope JSON, NUL-terminated, without a newline, malloc'd; it fits
 * RECEIPT_MAX_BYTES with a newline. NULL with err set when the key is not
 * Ed25519 or the envelope would be too large. */
char *receiptcmd_sign_envelope(const char *canon, size_t len, EVP_PKEY *priv,
    char *err, size_t errlen);

/* Adds every DIR/NAME.pub.pem (names starting with '.' skipped) to kr, in
 * name order. Any file that is not an Ed25519 SPKI public key is an error,
 * not skipped. Returns the number of keys added, or -1 with err set. */
int receiptcmd_load_attesters(struct bundle_keyring *kr, const char *dir,
    char *err, size_t errlen);

/* Subcommands (argv[0] is the subcommand name). */
int receiptcmd_cmd_receipt(int argc, char **argv);
int receiptcmd_cmd_admit(int argc, char **argv);

#endif
