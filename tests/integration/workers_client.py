#!/usr/bin/env python3
"""workers_client.py - the client side of workers_test.sh (run in the
workload's namespace). Every socket has a timeout; every loop is bounded.

  workers_client.py race HOST PORT CONTROL_SOCK BUNDLE
      Opens 8 tunnels to api.example.test:7 and 8 to keep.example.test:7,
      hammers CONNECT api.example.test:80 from 16 threads, pushes BUNDLE
      (which refuses api.example.test) over CONTROL_SOCK while they run.
      Prints one JSON object: how many CONNECTs sent after the push's
      answer were still admitted (late), how many revoked tunnels were
      closed by then, how many kept ones still echo.
  workers_client.py overload HOST PORT MAX CONTROL_SOCK
      Once the guard counts no connection, holds MAX connections (head
      unfinished); once it counts MAX (its /v1/status over CONTROL_SOCK:
      a worker may not have accepted its share yet), tries MAX more:
      prints how many of those were answered 503 overloaded (and, if a
      count was not reached in 10 s, the counts seen).
  workers_client.py probe HOST PORT TARGET N
      N CONNECTs to TARGET, one after the other (the kernel spreads them
      over the workers): prints "200=a 403=b refused=c other=d".
  workers_client.py spread HOST PORT TARGET N CONTROL_SOCK
      Opens N tunnels to the echo service TARGET one after the other,
      each echoing before the next opens, and holds them; once the guard
      counts N, prints its status's worker_connections ("4,4,4,4").
"""
import json, socket, sys, threading, time


def connect(host, port, target, timeout=3):
    s = socket.create_connection((host, port), timeout=timeout)
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target))
    h = b""
    while b"\r\n\r\n" not in h and len(h) < 8192:
        b = s.recv(1)
        if not b:
            break
        h += b
    status = int(h.split(b" ")[1]) if h.startswith(b"HTTP/1.") else 0
    return s, status


def control(sock_path, request, timeout, limit):
    """Sends request over the control socket; the reply's bytes until
    the guard closes, at most about limit."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(sock_path)
    s.sendall(request)
    out = b""
    while len(out) < limit:
        b = s.recv(65536)
        if not b:
            break
        out += b
    s.close()
    return out


def put(sock_path, body, timeout=15):
    return control(sock_path, b"PUT /v1/policy HTTP/1.1\r\nHost: localhost\r\n"
                   b"Content-Type: application/json\r\nContent-Length: %d\r\n"
                   b"Connection: close\r\n\r\n" % len(body) + body,
                   timeout, 65536).decode("latin-1")


def status(sock_path, timeout=3):
    """The guard's /v1/status as a dict (raises OSError or ValueError)."""
    out = control(sock_path, b"GET /v1/status HTTP/1.1\r\nHost: localhost\r\n"
                  b"Connection: close\r\n\r\n", timeout, 1 << 20)
    return json.loads(out.partition(b"\r\n\r\n")[2])


def active(sock_path, timeout=3):
    """active_connections in the guard's /v1/status (-1 if no answer)."""
    try:
        return status(sock_path, timeout)["active_connections"]
    except (OSError, ValueError, KeyError):
        return -1


def spread(host, port, target, n, ctl):
    held = []
    wait_active(ctl, lambda k: k == 0)
    for i in range(n):
        s, st = connect(host, port, target.encode())
        s.sendall(b"x")
        if st != 200 or s.recv(1) != b"x":
            print("tunnel %d: status %d, no echo" % (i, st))
            return
        held.append(s)
    wait_active(ctl, lambda k: k == n)
    try:
        print(",".join(str(k) for k in status(ctl)["worker_connections"]))
    except (OSError, ValueError, KeyError) as e:
        print("no status: %r" % e)
    for s in held:
        s.close()


def wait_active(sock_path, ok, tries=100):
    """Polls the count until ok(count) (bounded: tries x 0.1 s)."""
    n = -1
    for _ in range(tries):
        n = active(sock_path)
        if ok(n):
            break
        time.sleep(0.1)
    return n


def race(host, port, ctl, bundle):
    body = open(bundle, "rb").read()
    revoke, keep = [], []
    for _ in range(8):
        for lst, t in ((revoke, b"api.example.test:7"), (keep, b"keep.example.test:7")):
            s, st = connect(host, port, t)
            assert st == 200, (t, st)
            s.sendall(b"ping")
            assert s.recv(4) == b"ping"
            lst.append(s)
    results, stop, lock = [], [False], threading.Lock()

    def hammer():
        for _ in range(5000):
            if stop[0]:
                return
            t0 = time.monotonic()
            try:
                s, st = connect(host, port, b"api.example.test:80")
                s.close()
            except OSError:
                st = -1
            with lock:
                results.append((t0, st))

    ths = [threading.Thread(target=hammer) for _ in range(16)]
    for t in ths:
        t.start()
    time.sleep(0.3)
    t_push = time.monotonic()
    answer = put(ctl, body)
    t_ans = time.monotonic()
    # Right after the answer: every tunnel the new policy refuses is
    # closed already (EOF or reset), every other one still echoes.
    closed = 0
    for s in revoke:
        s.settimeout(0.5)
        try:
            s.sendall(b"more")
            closed += s.recv(4) == b""
        except OSError:
            closed += 1
    kept = 0
    for s in keep:
        try:
            s.sendall(b"more")
            kept += s.recv(4) == b"more"
        except OSError:
            pass
    time.sleep(0.7)
    stop[0] = True
    for t in ths:
        t.join(10)
    late = sum(1 for t0, st in results if t0 > t_ans and st == 200)
    print(json.dumps({
        "answer": answer.split("\r\n", 1)[0] + " " + answer[answer.find("{"):],
        "push_ms": round((t_ans - t_push) * 1000),
        "before_admitted": sum(1 for t0, st in results if t0 < t_push and st == 200),
        "after_denied": sum(1 for t0, st in results if t0 > t_ans and st == 403),
        "late": late, "revoked_closed": closed, "kept": kept,
        "requests": len(results)}))


def overload(host, port, n, ctl):
    # The tunnels of the step before close as their client exits: none
    # may hold a place of the MAX.
    before = wait_active(ctl, lambda k: k == 0)
    held = []
    for _ in range(n):
        s = socket.create_connection((host, port), timeout=3)
        s.sendall(b"CONNECT a")
        held.append(s)
    counted = wait_active(ctl, lambda k: k >= n)
    refused = 0
    for _ in range(n):
        try:
            s, st = connect(host, port, b"api.example.test:7")
            s.close()
        except OSError:
            st = -1
        refused += st == 503
    for s in held:
        s.close()
    note = "" if before == 0 and counted == n else \
        " (active before=%d held=%d)" % (before, counted)
    print("refused=%d of %d%s" % (refused, n, note))


def probe(host, port, target, n):
    counts = {"200": 0, "403": 0, "refused": 0, "other": 0}
    for _ in range(n):
        try:
            s, st = connect(host, port, target.encode())
            s.close()
            k = str(st) if str(st) in counts else "other"
        except ConnectionRefusedError:
            k = "refused"
        except OSError:
            k = "other"
        counts[k] += 1
    print(" ".join("%s=%d" % kv for kv in counts.items()))


if sys.argv[1] == "spread":
    spread(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6])
elif sys.argv[1] == "probe":
    probe(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
elif sys.argv[1] == "race":
    race(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
else:
    overload(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
