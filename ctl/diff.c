/* egress-guardctl diff (ctl/diff.h). Both policies list their entries in
 * canonical order, so one merge walk finds what each adds, removes or
 * grants by another flag, in time linear in their sizes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/cli.h"
#include "ctl/diff.h"
#include "plane/bundle.h"
#include "plane/bundlepeek.h"
#include "policy/policy.h"
#include "util/errbuf.h"
#include "util/file.h"

/* One entry, as policy_entry_get gives it. */
struct ent {
	const char	*host;
	size_t		 hlen;
	uint16_t	 port;
	unsigned	 via;
};

static void
get(const struct policy *p, size_t i, struct ent *e)
{
	policy_entry_get(p, i, &e->host, &e->hlen, &e->port, &e->via);
}

/* "host:port", an IPv6 host in brackets, as a profile spells it. */
static void
put_entry(FILE *out, char sign, const struct ent *e)
{
	int v6 = memchr(e->host, ':', e->hlen) != NULL;

	fprintf(out, "%c %s%.*s%s:%u %s", sign, v6 ? "[" : "", (int)e->hlen,
	    e->host, v6 ? "]" : "", e->port, policy_via_name(e->via));
}

static size_t
listed(const struct policy *p)
{
	return p != NULL && policy_mode(p) == POLICY_ALLOWLIST ?
	    policy_entries(p) : 0;
}

/* The entries: a merge walk over the two canonical lists. */
static void
walk(const struct policy *old, const struct policy *new, FILE *out,
    struct ctldiff_sum *sum)
{
	size_t i = 0, j = 0, no = listed(old), nn = listed(new);
	struct ent a, b;
	int c;

	while (i < no || j < nn) {
		if (i < no)
			get(old, i, &a);
		if (j < nn)
			get(new, j, &b);
		c = i == no ? 1 : j == nn ? -1 : policy_entry_compare(old, i, new, j);
		if (c < 0) {
			sum->removed++;
			if (out != NULL) {
				put_entry(out, '-', &a);
				fputc('\n', out);
			}
			i++;
		} else if (c > 0) {
			sum->added++;
			if (out != NULL) {
				put_entry(out, '+', &b);
				fputc('\n', out);
			}
			j++;
		} else {
			if (a.via != b.via) {
				sum->changed++;
				if (out != NULL) {
					put_entry(out, '~', &a);
					fprintf(out, " -> %s\n", policy_via_name(b.via));
				}
			}
			i++;
			j++;
		}
	}
}

static enum policy_mode
mode_of(const struct policy *p)
{
	return p == NULL ? POLICY_NONE : policy_mode(p);
}

static int
same(const char *x, const char *y)
{
	return (x == NULL && y == NULL) ||
	    (x != NULL && y != NULL && strcmp(x, y) == 0);
}

void
ctldiff_compare(const struct policy *old, const struct policy *new, FILE *out,
    struct ctldiff_sum *sum)
{
	enum policy_mode mo = mode_of(old), mn = mode_of(new);
	const char *vo = policy_catalog_version(old), *vn = policy_catalog_version(new);
	const char *dgo = policy_catalog_digest(old), *dgn = policy_catalog_digest(new);
	const char *to = policy_tenant(old), *tn = policy_tenant(new);

	memset(sum, 0, sizeof(*sum));
	/* A guard with no policy grants nothing to anyone: from it, only
	 * the entries can widen. */
	sum->tenant_changed = old != NULL && new != NULL && !same(to, tn);
	if (mo != mn && out != NULL)
		fprintf(out, "mode: %s -> %s\n", policy_mode_name(mo),
		    policy_mode_name(mn));
	if ((!same(vo, vn) || !same(dgo, dgn)) && out != NULL)
		fprintf(out, "catalog: %s %s -> %s %s\n", vo ? vo : "none",
		    dgo ? dgo : "", vn ? vn : "none", dgn ? dgn : "");
	if (sum->tenant_changed && out != NULL)
		fprintf(out, "tenant: %s -> %s\n", to ? to : "none",
		    tn ? tn : "none");
	if (mo == POLICY_UNRESTRICTED || mn == POLICY_UNRESTRICTED) {
		/* Unrestricted admits whatever classifies public: more than
		 * any list, so only the mode says anything. */
		sum->widens = (mn == POLICY_UNRESTRICTED &&
		    mo != POLICY_UNRESTRICTED) || sum->tenant_changed;
		sum->narrows = mo == POLICY_UNRESTRICTED && mn != POLICY_UNRESTRICTED;
		return;
	}
	walk(old, new, out, sum);
	sum->widens = sum->added > 0 || sum->tenant_changed;
	sum->narrows = sum->removed > 0;
}

void
ctldiff_verdict(const struct ctldiff_sum *sum, const struct policy *old,
    const struct policy *new, FILE *out)
{
	enum policy_mode mo = mode_of(old), mn = mode_of(new);
	const char *to = policy_tenant(old), *tn = policy_tenant(new);

	if (sum->tenant_changed)
		fprintf(out, "widens: yes (tenant %s -> %s: its grants move to "
		    "another sandbox)\n", to ? to : "none", tn ? tn : "none");
	else if (mo != mn && (mo == POLICY_UNRESTRICTED || mn == POLICY_UNRESTRICTED))
		fprintf(out, "widens: %s (mode %s -> %s)\n", sum->widens ? "yes" :
		    "no", policy_mode_name(mo), policy_mode_name(mn));
	else
		fprintf(out, "widens: %s (%zu added, %zu removed, %zu with "
		    "another provenance)\n", sum->widens ? "yes" : "no",
		    sum->added, sum->removed, sum->changed);
}

struct policy *
ctldiff_load(const char *path, int *bundle, char *err, size_t errlen)
{
	struct policy *p;
	char why[512];
	size_t len;
	char *buf;

	if ((buf = file_read(path, POLICY_MAX_BYTES, 0, &len, err, errlen)) == NULL)
		return NULL;
	*bundle = bundle_is_envelope(buf, len);
	if (*bundle)
		p = bundlepeek_policy(buf, len, NULL, why, sizeof(why));
	else
		p = policy_parse(buf, len, why, sizeof(why));
	if (p == NULL)
		errbuf_set(err, errlen, "%s: %s", path, why);
	free(buf);
	return p;
}

static void
describe(FILE *out, const char *which, const char *path,
    const struct policy *p, int bundle)
{
	fprintf(out, "%s: %s%s: %s epoch %lld mode %s, %zu entries, catalog ",
	    which, path, bundle ? " (bundle, signature not checked)" : "",
	    policy_digest(p), policy_epoch(p), policy_mode_name(policy_mode(p)),
	    policy_entries(p));
	if (policy_catalog_version(p) != NULL)
		fprintf(out, "%s %s", policy_catalog_version(p),
		    policy_catalog_digest(p));
	else
		fprintf(out, "none");
	/* Only when there is one: untenanted lines stay as they were. */
	if (policy_tenant(p) != NULL)
		fprintf(out, ", tenant %s", policy_tenant(p));
	fputc('\n', out);
}

int
ctldiff_cmd_diff(int argc, char **argv)
{
	struct policy *p[2] = { NULL, NULL };
	struct ctldiff_sum sum;
	char err[1024];
	int bundle[2], i, rc = CLI_EXIT_USAGE;

	if (argc != 3 || argv[1][0] == '-' || argv[2][0] == '-')
		return cli_usage_error(argv[0], CTLDIFF_USAGE, "expected OLD and "
		    "NEW, two compiled policies or bundles", NULL);
	for (i = 0; i < 2; i++) {
		if ((p[i] = ctldiff_load(argv[1 + i], &bundle[i], err,
		    sizeof(err))) == NULL) {
			fprintf(stderr, "%s: diff: %s\n", CLI_PROG, err);
			goto out;
		}
	}
	describe(stdout, "old", argv[1], p[0], bundle[0]);
	describe(stdout, "new", argv[2], p[1], bundle[1]);
	ctldiff_compare(p[0], p[1], stdout, &sum);
	ctldiff_verdict(&sum, p[0], p[1], stdout);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "%s: diff: cannot write standard output\n", CLI_PROG);
		rc = CLI_EXIT_FAIL;
	} else {
		rc = sum.widens ? CLI_EXIT_WIDENS : CLI_EXIT_OK;
	}
out:
	policy_free(p[0]);
	policy_free(p[1]);
	return rc;
}
