#!/usr/bin/env python3
"""report.py RESULTS.tsv REPORT.json BINARY "FACT..." SHA256 [DEPLOYMENT.json]

Writes the conformance report (docs/receipts.md) from the cases the matrix
recorded. BINARY is the guard binary that ran, SHA256 its hash taken
before any guard started: when the file no longer has that hash, no report
is written (exit 2). DEPLOYMENT.json, when given, is the evidence of the
deployment the cases ran against (the Docker target's engine, layout and
image), carried as the report's "deployment" object.
"""
import datetime, hashlib, json, re, subprocess, sys

res, out, binary, facts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
started_sha256 = sys.argv[5]
# The binary changed under the run: the guards it started may have run
# either version, so nothing here certifies one of them.
now_sha256 = hashlib.sha256(open(binary, "rb").read()).hexdigest()
if now_sha256 != started_sha256:
    print("conformance: %s changed during the run (sha256 %s at start, %s now); no report"
          % (binary, started_sha256, now_sha256))
    sys.exit(2)
# The version is the binary's own word (a mutant build says -MUTANT), with
# its source revision: informational, as the hash is what a verifier checks,
# but it must not claim a release the build is not.
try:
    said = subprocess.run([binary, "--version"], capture_output=True, text=True,
                          timeout=10).stdout.strip()
except (OSError, subprocess.TimeoutExpired) as e:
    said = ""
m = re.fullmatch(r"egress-guard ([0-9A-Za-z.~-]{1,40}) \(([0-9a-f]{7,40}|[a-z]+)\)", said)
if m is None:
    print("conformance: %s --version said %r, not 'egress-guard VERSION (REV)'; no report"
          % (binary, said[:200]))
    sys.exit(2)
version = m.group(1) + ("+git." + m.group(2) if re.fullmatch(r"[0-9a-f]+", m.group(2)) else "")
cases = []
for line in open(res):
    cid, fact, probe, exp, obs, cexp, cobs = line.rstrip("\n").split("\t")
    v = "pass" if exp == obs and cexp == cobs else ("fail" if exp != obs else "inconclusive")
    cases.append({"id": cid, "fact": fact, "probe": probe, "expected": exp, "observed": obs,
                  "control_expected": cexp, "control": cobs, "verdict": v})
verdicts = {f: bool([c for c in cases if c["fact"] == f]) and
            all(c["verdict"] == "pass" for c in cases if c["fact"] == f) for f in facts}
report = {"schema": "egress-guard.conformance-report.v1", "provider": "egress-guard",
          "guard_binary": binary, "guard_sha256": started_sha256, "version": version,
          "ran_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
          "facts": verdicts, "cases": cases}
if len(sys.argv) > 6:
    report["deployment"] = json.load(open(sys.argv[6]))
json.dump(report, open(out, "w"), indent=1, sort_keys=True)
print()
print("%-30s %6s %6s %6s %13s  %s" % ("fact", "cases", "pass", "fail", "inconclusive", "verdict"))
for f in facts:
    cs = [c for c in cases if c["fact"] == f]
    n = lambda v: sum(1 for c in cs if c["verdict"] == v)
    print("%-30s %6d %6d %6d %13d  %s" % (f, len(cs), n("pass"), n("fail"), n("inconclusive"),
                                         "TRUE" if verdicts[f] else "FALSE"))
print("\nreport: %s" % out)
sys.exit(0 if all(verdicts.values()) else 1)
