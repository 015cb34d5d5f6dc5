#!/usr/bin/env python3
"""dead_check.py REPORT.json SUITE.json [REPORT.json SUITE.json ...] -- ID...

The check of the harness mutant dead_controls (make conformance-mutants):
the matrix ran with the pretend internet's listeners and the control
resolver killed and the control guards never started. For each report,
graded by its suite:
  - every fact the suite covers is false;
  - no case whose control needs something live (evidence kind listener or
    resolver) passes, and no case without control evidence passes;
  - each ID after "--" (cases whose probe the mutant leaves alone, their
    control the control guard or a killed listener) is in some report and
    inconclusive: a control that reached nothing is not a fail of the
    guard either.
Prints one line per finding; exit 0 only when there is none.
"""
import json, sys

args = sys.argv[1:]
ids = args[args.index("--") + 1:] if "--" in args else []
pairs = args[:args.index("--")] if "--" in args else args
bad = []
seen = {}
for rp, sp in zip(pairs[0::2], pairs[1::2]):
    try:
        r, s = json.load(open(rp)), json.load(open(sp))
    except (OSError, ValueError) as e:
        bad.append("%s: unreadable (%s)" % (rp, e))
        continue
    kind = {c["id"]: c["evidence"] for c in s["cases"]}
    for f in sorted({c["fact"] for c in s["cases"]}):
        if r["facts"].get(f) is not False:
            bad.append("%s: %s is not false" % (rp, f))
    n = {"pass": 0, "fail": 0, "inconclusive": 0}
    for c in r["cases"]:
        n[c["verdict"]] = n.get(c["verdict"], 0) + 1
        seen[c["id"]] = c["verdict"]
        if c["verdict"] == "pass" and (kind.get(c["id"]) in ("listener", "resolver")
                                       or not c.get("control_evidence")):
            bad.append("%s: %s passed with its control dead (evidence %r)"
                       % (rp, c["id"], c.get("control_evidence")))
    print("%s: %d pass (their controls need nothing the mutant kills), %d fail, %d inconclusive"
          % (rp, n["pass"], n["fail"], n["inconclusive"]))
for i in ids:
    if seen.get(i) != "inconclusive":
        bad.append("%s: %s, not inconclusive (its control guard was never started)"
                   % (i, seen.get(i, "missing")))
for b in bad:
    print("dead_controls: " + b)
sys.exit(1 if bad else 0)
