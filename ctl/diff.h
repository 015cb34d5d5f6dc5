/* egress-guardctl diff OLD NEW, and the widening test push --no-widen
 * applies (docs/design.md "Diff and --no-widen"): what two compiled
 * policies admit differently, entry by entry with each entry's
 * provenance, and whether NEW admits anything OLD does not. */
#ifndef EG_CTL_DIFF_H
#define EG_CTL_DIFF_H

#include <stddef.h>
#include <stdio.h>

#define CTLDIFF_USAGE	"OLD NEW"

struct policy;

struct ctldiff_sum {
	size_t	 added;		/* entries NEW lists that OLD does not */
	size_t	 removed;	/* entries OLD lists that NEW does not */
	size_t	 changed;	/* in both, another provenance */
	int	 tenant_changed;	/* NEW names another tenant than OLD (or none) */
	int	 widens;	/* NEW admits a destination OLD does not, or
				 * is for another tenant */
	int	 narrows;	/* OLD admits a destination NEW does not */
};

/* Compares old with new (either NULL: a guard with no policy, which
 * denies everything, as mode none does) and writes each difference to
 * out (NULL: nothing written): "+ HOST:PORT VIA" added, "- HOST:PORT
 * VIA" removed, "~ HOST:PORT OLDVIA -> NEWVIA", then the mode, catalog
 * and tenant when they differ. Entries are listed when neither policy is
 * unrestricted (an unrestricted one admits every entry). A tenant change
 * between two policies (none counts as a tenant) widens whatever the
 * entries do: every grant of NEW then reaches a sandbox OLD's did not.
 * From no policy (old NULL) only the entries count. Fills *sum. */
void ctldiff_compare(const struct policy *old, const struct policy *new,
    FILE *out, struct ctldiff_sum *sum);

/* One line on the whole: "widens: yes (…)" or "widens: no (…)". */
void ctldiff_verdict(const struct ctldiff_sum *sum, const struct policy *old,
    const struct policy *new, FILE *out);

/* A compiled policy file or a signed bundle (its policy read, its
 * signature not checked: *bundle is then 1). NULL with err. */
struct policy *ctldiff_load(const char *path, int *bundle, char *err,
    size_t errlen);

/* diff OLD NEW: exit 0 when NEW does not widen OLD, CLI_EXIT_WIDENS when
 * it does, 1 output failure, 2 usage or an unreadable input. */
int ctldiff_cmd_diff(int argc, char **argv);

#endif
