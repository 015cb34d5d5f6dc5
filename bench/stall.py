#!/usr/bin/env python3
"""Did a policy push stall a live tunnel? (bench/run's swap section)

  stall.py SERIES T_START_US T_END_US

SERIES is `loadgen echo --series` output: a line "SENT_US RTT_US" per
answered message, SENT_US on CLOCK_REALTIME. T_START_US and T_END_US are
when `egress-guardctl push` started and returned (a shell's EPOCHREALTIME
without its dot).

The push window is [start, end + AFTER]: a stall the push leaves behind
(freeing the old policy, say) counts too. Its figure is the longest round
trip of a message in flight during that window. The yardstick is the same
run's calm stretches: the run, outside the push window (and GUARD on each
side of it), is cut into windows of the same length, and the yardstick is
the median of their longest round trips. So the push is compared with what
an equally long stretch of the same tunnel, on the same machine, in the
same second, shows without one. A single maximum over a whole separate run
(the criterion before) measured the machine's rarest hiccup, not the
guard.

Prints one JSON object; exit 0, or 2 when the series is unusable (no
message during the push, fewer than MIN_CALM calm windows).
"""
import json
import statistics
import sys

AFTER_US = 50_000	# the push's aftermath, counted in its window
GUARD_US = 20_000	# left out on each side between push and calm windows
MIN_CALM = 5


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            sent, rtt = line.split()
            rows.append((int(sent), int(rtt)))
    if not rows:
        raise ValueError(f"{path}: no answers recorded")
    rows.sort()
    return rows


def judge(rows, t0, t1):
    """The push window's longest round trip against the calm windows'."""
    w0, w1 = t0, t1 + AFTER_US
    length = w1 - w0
    during = [rtt for sent, rtt in rows if sent <= w1 and sent + rtt >= w0]
    if not during:
        raise ValueError(f"no echo message was in flight during the push "
                         f"({w0}..{w1} µs; the series runs {rows[0][0]}..{rows[-1][0]})")
    calm = {}
    first = rows[0][0]
    for sent, rtt in rows:
        k = (sent - first) // length
        lo = first + k * length
        if lo + length > w0 - GUARD_US and lo < w1 + GUARD_US:
            continue
        calm[k] = max(calm.get(k, 0), rtt)
    # the last window of the run is cut short by its end: left out
    last = (rows[-1][0] - first) // length
    calm.pop(last, None)
    if len(calm) < MIN_CALM:
        raise ValueError(f"{len(calm)} calm windows (at least {MIN_CALM} wanted): "
                         "a longer echo run is needed")
    maxima = sorted(calm.values())
    med = statistics.median(maxima)
    return {
        "push_window_ms": round(length / 1000, 3),
        "after_ms": AFTER_US // 1000,
        "push_messages": len(during),
        "push_rtt_max_ms": round(max(during) / 1000, 3),
        "calm_windows": len(maxima),
        "calm_max_median_ms": round(med / 1000, 3),
        "calm_max_p90_ms": round(maxima[min(len(maxima) - 1, int(0.9 * len(maxima)))] / 1000, 3),
        "stall_ms": round((max(during) - med) / 1000, 3),
    }


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: stall.py SERIES T_START_US T_END_US")
    try:
        t0, t1 = int(sys.argv[2]), int(sys.argv[3])
        if t1 < t0:
            raise ValueError("the push ends before it starts")
        out = judge(load(sys.argv[1]), t0, t1)
    except (OSError, ValueError) as e:
        print(f"stall.py: {e}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
