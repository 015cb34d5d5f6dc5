/* Conformance suites (docs/receipts.md "Suites and evidence"): per target,
 * the cases each fact requires and, for each case, the words its probe and
 * its negative control must show and the kind of live evidence the control
 * must carry. A fact is graded from the suite, never from the report's
 * claim: true only when every case the suite requires for it is present,
 * passes with the suite's words, and carries its control's evidence.
 * Library code: errors into a buffer, no logging. Internal to conform/
 * and the CLI that grades. */
#ifndef EG_SUITE_H
#define EG_SUITE_H

#include <stddef.h>

#include <jansson.h>

#include "conform/rparse.h"

#define SUITE_SCHEMA		"egress-guard.conformance-suite.v1"
#define SUITE_MAX_ID		32	/* bytes of a suite id */
#define SUITE_MAX_BYTES		(256u * 1024)
#define SUITE_MAX_CASES		512
#define SUITE_MAX_EVIDENCE	200	/* bytes of an evidence's detail */
#define SUITE_MAX_TARGET	256	/* bytes of a suite's target */

struct suite;

/* A set of suites a verifier knows, looked up by id or digest. */
struct suite_set {
	struct suite	**v;
	size_t		  n;
};

/* How one required case stands in a report or a receipt. */
enum suite_status {
	SUITE_CASE_PASS = 0,
	SUITE_CASE_MISSING,		/* no case of that id */
	SUITE_CASE_WRONG_FACT,		/* the id names another fact */
	SUITE_CASE_NOT_PASS,		/* verdict fail or inconclusive */
	SUITE_CASE_WRONG_OBSERVED,	/* observed is not the suite's expected */
	SUITE_CASE_WRONG_CONTROL,	/* control is not the suite's control */
	SUITE_CASE_NO_EVIDENCE		/* control_evidence absent or not its kind */
};

/* One required case, as graded. Strings point into the suite or into the
 * graded JSON, which must outlive the result. */
struct suite_case {
	const char		*id;
	size_t			 fact;		/* rparse_fact_name() index */
	const char		*kind;		/* the evidence kind the suite wants */
	enum suite_status	 status;
	const char		*evidence;	/* the case's control_evidence, or NULL */
	const char		*verdict;	/* the case's verdict, or NULL */
};

/* The grade of every fact under one suite. */
struct suite_grade {
	struct suite_case	*cases;		/* the suite's cases, in its order */
	size_t			 ncases;
	int			 proved[RPARSE_NFACTS];	/* every required case passes */
	size_t			 nrequired[RPARSE_NFACTS];
	size_t			 npass[RPARSE_NFACTS];
	/* The first case that made a fact false, or NULL (none required). */
	const struct suite_case	*first_bad[RPARSE_NFACTS];
};

/* Parses a suite file strictly (every key known and typed, ids unique,
 * every fact and evidence kind known) and digests its bytes as shipped.
 * Returns NULL with err set on any refusal. */
struct suite *suite_parse(const char *buf, size_t len, char *err,
    size_t errlen);
void suite_free(struct suite *s);

/* 1 when s[0..len) is a suite id: 1-SUITE_MAX_ID of [a-z0-9_-]. */
int suite_id_ok(const char *s, size_t len);

const char *suite_id(const struct suite *s);
long long suite_version(const struct suite *s);
/* SHA-256 of the suite's bytes, RPARSE_SHA256_HEX lowercase hex digits. */
const char *suite_digest(const struct suite *s);

/* The suites built into this program (conform/suites/ID.json, embedded by
 * the Makefile), parsed into set. Returns 0, or -1 with err set: a
 * built-in suite that does not parse is a build defect, reported. */
int suite_builtin_load(struct suite_set *set, char *err, size_t errlen);
void suite_set_free(struct suite_set *set);
const struct suite *suite_set_by_id(const struct suite_set *set,
    const char *id, size_t len);
const struct suite *suite_set_by_digest(const struct suite_set *set,
    const char *digest, size_t len);

/* Grades the cases array (already checked by rparse_cases) under s into g.
 * Returns 0, or -1 when out of memory. suite_grade_free releases g. */
int suite_grade(const struct suite *s, json_t *cases, struct suite_grade *g);
void suite_grade_free(struct suite_grade *g);

/* Why a required case is not a pass, as words for a message. */
const char *suite_status_name(enum suite_status st);

/* 1 when ev is a control evidence of kind ("listener pub80: 1
 * connection, 78 bytes"): KIND NAME: DETAIL, with a positive count first
 * for the kinds that count; else 0. Pure. */
int suite_evidence_ok(const char *kind, const char *ev, size_t len);

#endif
