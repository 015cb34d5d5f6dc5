/* egress-guard: the appliance binary. `run` is the daemon, `check` explains
 * one decision for a reviewer, `nft` manages the workload's default-deny
 * ruleset. */
#include <stdio.h>
#include <string.h>

#include "guard/appliance.h"
#include "guard/check.h"
#include "guard/config.h"
#include "guard/guard.h"
#include "nft/nftcmd.h"
#include "util/mutant.h"

int main(int argc, char **argv);

/* What was asked for, on stdout: 0, or 2 (with a line on stderr) when
 * it could not be written. */
static int
flushed(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "egress-guard: cannot write to standard output\n");
		return 2;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		config_usage(stderr, "egress-guard");
		return 2;
	}
	if (strcmp(argv[1], "run") == 0)
		return guard_run_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return check_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "nft") == 0)
		return nftcmd_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "appliance") == 0)
		return appliance_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
		config_usage(stdout, "egress-guard");
		return flushed();
	}
	if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("egress-guard %s%s (%s)\n", EG_VERSION, EG_MUTANT_TAG, EG_REVISION);
		return flushed();
	}
	fprintf(stderr, "egress-guard: unknown command '%s'\n", argv[1]);
	config_usage(stderr, "egress-guard");
	return 2;
}
