#!/usr/bin/env python3
"""report.py RESULTS.tsv REPORT.json BINARY "FACT..." SHA256 --suite ID
             [--only PREFIX] [--deployment DEPLOYMENT.json]

Writes the conformance report (schema v2, docs/receipts.md) from the cases
the matrix recorded: ID CASE FACT PROBE EXPECTED OBSERVED CONTROL_EXPECTED
CONTROL_OBSERVED CONTROL_EVIDENCE, one tab-separated line each. BINARY is
the guard binary that ran, SHA256 its hash taken before any guard started:
when the file no longer has that hash, no report is written (exit 2).

--suite ID names the case catalog the report is graded against
(conform/suites/ID.json); --only PREFIX keeps the cases whose id starts
with PREFIX (the lab's transparent report: tp-). DEPLOYMENT.json, when
given, is the evidence of the deployment the cases ran against (the Docker
target's engine, layout and image), carried as the report's "deployment".

A case passes only when its probe observed what was expected, its negative
control observed what the control was expected to, AND the control carries
evidence that it reached something live (control_evidence, "KIND NAME:
DETAIL"); no evidence makes it inconclusive. The report's "facts" are
graded as `receipt verify` grades them: a fact is true only when every case
the suite requires for it is present, passes, observed and control are the
suite's words, and the evidence is of the suite's kind. The exit status is
0 only when every fact run is true and the run matches the suite (no case
the suite lacks).
"""
import argparse, datetime, hashlib, json, os, re, subprocess, sys

KINDS = ("listener", "resolver", "socket", "counter", "process")
EVIDENCE = re.compile(r"(listener|resolver|socket|counter|process) [A-Za-z0-9._:/-]{1,64}: "
                      r"([\x20-\x7e]{1,200})")


def evidence_kind(e):
    """The kind of a valid control_evidence string, else None."""
    m = EVIDENCE.fullmatch(e)
    if m is None or (m.group(1) != "process" and not re.match(r"[1-9][0-9]*", m.group(2))):
        return None
    return m.group(1)


ap = argparse.ArgumentParser()
for a in ("results", "out", "binary", "facts", "sha256"):
    ap.add_argument(a)
ap.add_argument("--suite", required=True)
ap.add_argument("--only", default="")
ap.add_argument("--deployment")
ap.add_argument("--suite-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "..", "..", "conform", "suites"))
a = ap.parse_args()
facts = a.facts.split()
# The binary changed under the run: the guards it started may have run
# either version, so nothing here certifies one of them.
now_sha256 = hashlib.sha256(open(a.binary, "rb").read()).hexdigest()
if now_sha256 != a.sha256:
    print("conformance: %s changed during the run (sha256 %s at start, %s now); no report"
          % (a.binary, a.sha256, now_sha256))
    sys.exit(2)
# The version is the binary's own word (a mutant build says -MUTANT), with
# its source revision: informational, as the hash is what a verifier checks,
# but it must not claim a release the build is not.
try:
    said = subprocess.run([a.binary, "--version"], capture_output=True, text=True,
                          timeout=10).stdout.strip()
except (OSError, subprocess.TimeoutExpired):
    said = ""
m = re.fullmatch(r"egress-guard ([0-9A-Za-z.~-]{1,40}) \(([0-9a-f]{7,40}|[a-z]+)\)", said)
if m is None:
    print("conformance: %s --version said %r, not 'egress-guard VERSION (REV)'; no report"
          % (a.binary, said[:200]))
    sys.exit(2)
version = m.group(1) + ("+git." + m.group(2) if re.fullmatch(r"[0-9a-f]+", m.group(2)) else "")

cases = []
for line in open(a.results):
    f = line.rstrip("\n").split("\t")
    if len(f) != 8:
        print("conformance: a results line of %d fields, 8 wanted: %r" % (len(f), line[:120]))
        sys.exit(2)
    cid, fact, probe, exp, obs, cexp, cobs, ev = f
    if not cid.startswith(a.only):
        continue
    if evidence_kind(ev) is None:
        ev = ""
    v = "fail" if exp != obs else ("pass" if cexp == cobs and ev else "inconclusive")
    cases.append({"id": cid, "fact": fact, "probe": probe, "expected": exp, "observed": obs,
                  "control_expected": cexp, "control": cobs, "control_evidence": ev,
                  "verdict": v})

# Grading against the suite, as verify does: why each fact is false.
why = {f: [] for f in facts}
extra = []
try:
    suite = json.load(open(os.path.join(a.suite_dir, a.suite + ".json")))
    want = {c["id"]: c for c in suite["cases"]}
except (OSError, ValueError, KeyError, TypeError) as e:
    print("conformance: suite %s unreadable (%s): no fact can be true" % (a.suite, e))
    want = None
got = {c["id"]: c for c in cases}
if want is not None:
    for f in facts:
        req = [c for c in want.values() if c["fact"] == f]
        if not req:
            why[f].append("the suite has no case for it")
        for s in req:
            c = got.get(s["id"])
            if c is None:
                why[f].append("%s missing" % s["id"])
            elif c["verdict"] != "pass":
                why[f].append("%s %s" % (s["id"], c["verdict"]))
            elif c["fact"] != f or c["expected"] != s["expected"] or c["observed"] != s["expected"]:
                why[f].append("%s observed %r, the suite expects %r" % (s["id"], c["observed"],
                                                                         s["expected"]))
            elif c["control"] != s["control_expected"] or c["control_expected"] != s["control_expected"]:
                why[f].append("%s control %r, the suite expects %r" % (s["id"], c["control"],
                                                                        s["control_expected"]))
            elif evidence_kind(c["control_evidence"]) != s["evidence"]:
                why[f].append("%s evidence %r is not of kind %s" % (s["id"], c["control_evidence"],
                                                                    s["evidence"]))
    extra = [c["id"] for c in cases if c["id"] not in want]
else:
    for f in facts:
        why[f].append("no suite")
verdicts = {f: not why[f] for f in facts}
report = {"schema": "egress-guard.conformance-report.v2", "provider": "egress-guard",
          "suite": a.suite,
          "guard_binary": a.binary, "guard_sha256": a.sha256, "version": version,
          "ran_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
          "facts": verdicts, "cases": cases}
if a.deployment:
    report["deployment"] = json.load(open(a.deployment))
json.dump(report, open(a.out, "w"), indent=1, sort_keys=True)
print()
print("suite %s: %s" % (a.suite, a.out))
print("%-30s %6s %6s %6s %13s  %s" % ("fact", "cases", "pass", "fail", "inconclusive", "verdict"))
for f in facts:
    cs = [c for c in cases if c["fact"] == f]
    n = lambda v: sum(1 for c in cs if c["verdict"] == v)
    print("%-30s %6d %6d %6d %13d  %s" % (f, len(cs), n("pass"), n("fail"), n("inconclusive"),
                                         "TRUE" if verdicts[f] else "FALSE"))
for f in facts:
    if why[f]:
        print("%s false: %s" % (f, "; ".join(why[f][:8]) + (" ..." if len(why[f]) > 8 else "")))
if extra:
    print("conformance: cases the suite %s does not name (update conform/suites/%s.json): %s"
          % (a.suite, a.suite, " ".join(extra)))
print("\nreport: %s" % a.out)
sys.exit(0 if all(verdicts.values()) and not extra else 1)
