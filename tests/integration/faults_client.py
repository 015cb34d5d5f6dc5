#!/usr/bin/env python3
"""faults_client.py - the workload side of faults_test.sh (stdlib only).

One process drives many connections (asyncio), so that a thousand slow
clients cost one PID. Every subcommand prints one JSON object on stdout.

  slowloris --target H:P:N [--target ...] --observe S [--ready FILE] [--times FILE]
      N connections per target, each sending an unfinished CONNECT head one
      byte a second. Records, per connection, when the guard answered or
      closed (seconds after the connect began) and the status it sent.
      --times: one line per connection, "TARGET LOCALPORT T_PRE T_CONN",
      wall clock (as the guard log's "ts") just before the connect and once
      it completed: the test times the guard's header timeout from its own
      log lines against these.
  hold --proxy H:P --n N --send TEXT --hold S [--then TEXT --then-at S]
      N connections that send TEXT and hold S seconds; with --then, each
      sends the rest of its head at --then-at and waits for the answer.
  probe --proxy H:P --connect HOST:PORT [--send TEXT] [--wait S]
      one CONNECT; after 200, sends TEXT and reads until the tunnel closes
      (or S seconds): how it closed and after how long.
  flood --proxy H:P --dest HOST:PORT --n N --secs S --mode up|down|up-http|down-http [--read]
        [--until BYTES]
      N tunnels or absolute-form exchanges that push bytes as fast as the
      guard takes them (up), or ask for a large download and do not read it
      (down; --read reads it, the control). --until: stop early once that
      many bytes were sent (up) or received (--read).
  tunnels --proxy H:P --keep HOST:PORT --nkeep N --drop HOST:PORT --ndrop M
          --ready FILE --stop FILE
      N tunnels to a host every policy admits and M to one some policies
      refuse, all echoing verified blocks until FILE appears. Drop tunnels
      that close are reopened (they get 200 or 403 depending on the policy).
  pushloop --control SOCK --bundles DIR --from E --to E2 --state FILE
           [--kill-pid PID]
      PUTs DIR/bE.json, DIR/b(E+1).json, ... over the Unix socket one after
      another; FILE says "sent E acked E'" after every step. With --kill-pid,
      once the body of the last one (E2) is sent, waits a random time up to
      what the previous push took (the guard is verifying and storing it
      meanwhile) and SIGKILLs PID; then reads whatever answer came.
"""
import argparse, asyncio, json, os, random, resource, select, signal, socket, struct, sys, time


def raise_nofile():
    """A thousand connections need more than the usual 1024 descriptors."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= 16384:
        return
    try:		# root may raise the hard limit too
        resource.setrlimit(resource.RLIMIT_NOFILE, (16384, max(hard, 16384)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def hostport(s):
    h, _, p = s.rpartition(":")
    return h, int(p)


def parse_head(buf):
    """(status, reason header) of an HTTP answer head, (0, '-') if none."""
    head = buf.partition(b"\r\n\r\n")[0]
    lines = head.split(b"\r\n")
    status, reason = 0, "-"
    if lines and lines[0].startswith(b"HTTP/1."):
        try:
            status = int(lines[0].split()[1])
        except (IndexError, ValueError):
            pass
    for ln in lines[1:]:
        k, _, v = ln.partition(b":")
        if k.strip().lower() == b"x-egress-guard-reason":
            reason = v.strip().decode("latin-1")
    return status, reason


async def read_answer(r, timeout):
    """Reads an answer head; returns (status, reason, rest, closed)."""
    buf = b""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while b"\r\n\r\n" not in buf:
        left = end - loop.time()
        if left <= 0:
            return 0, "-", b"", False
        try:
            d = await asyncio.wait_for(r.read(65536), left)
        except asyncio.TimeoutError:
            return 0, "-", b"", False
        except OSError:
            d = b""
        if not d:
            st, rs = parse_head(buf)
            return st, rs, b"", True
        buf += d
    st, rs = parse_head(buf)
    return st, rs, buf.partition(b"\r\n\r\n")[2], False


# ---- slowloris

async def slow_conn(host, port, observe, res):
    loop = asyncio.get_running_loop()
    # Both taken before the connect: the guard's timer starts at its
    # accept, later, so the observation window (the control's "still open
    # at 7 s") is never longer than the guard's view of it, however late
    # this coroutine resumes once connected.
    t0, t_pre = loop.time(), time.time()
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
    except (OSError, asyncio.TimeoutError):
        res["connect_failed"] += 1
        return
    t_conn = time.time()
    res["connected"] += 1
    sn = w.get_extra_info("sockname")
    res["times"].append("%s %d %.6f %.6f" % (res["target"], sn[1] if sn else 0, t_pre, t_conn))
    msg = b"CONNECT api.example.test:80 HTTP/1.1\r\nX-Slow: " + b"s" * 64
    i, got, how = 0, b"", None
    while loop.time() - t0 < observe:
        if i < len(msg):
            w.write(msg[i:i + 1])
            i += 1
        try:
            # Never past the end of the window.
            d = await asyncio.wait_for(r.read(4096),
                                       max(0.01, min(1.0, observe - (loop.time() - t0))))
        except asyncio.TimeoutError:
            continue
        except OSError:
            how = "reset"
            break
        if not d:
            how = "eof"
            break
        got += d
    dt = loop.time() - t0
    st, reason = parse_head(got)
    w.close()
    res["status"][str(st)] = res["status"].get(str(st), 0) + 1
    if how is None:
        res["open_at_end"] += 1
    else:
        res["closed"] += 1
        res["close_s"].append(dt)
    res["sent_bytes"].append(i)


async def slowloris(a):
    targets = []
    for t in a.target:
        h, p, n = t.split(":")
        targets.append((h, int(p), int(n)))
    results = []
    tasks = []
    for h, p, n in targets:
        res = {"target": "%s:%d" % (h, p), "n": n, "connected": 0, "connect_failed": 0,
               "closed": 0, "open_at_end": 0, "status": {}, "close_s": [], "sent_bytes": [],
               "times": []}
        results.append(res)
        for k in range(n):
            tasks.append(asyncio.ensure_future(slow_conn(h, p, a.observe, res)))
            if k % 100 == 99:
                await asyncio.sleep(0.02)
    # All opened (or failed): tell the script, which then measures.
    for _ in range(200):
        if sum(r["connected"] + r["connect_failed"] for r in results) >= len(tasks):
            break
        await asyncio.sleep(0.05)
    if a.ready:
        open(a.ready, "w").write("%d\n" % sum(r["connected"] for r in results))
    await asyncio.gather(*tasks)
    times = []
    for res in results:
        times += res.pop("times")
    if a.times:
        with open(a.times, "w") as f:
            f.write("".join(t + "\n" for t in times))
    for res in results:
        cs = sorted(res.pop("close_s"))
        sb = res.pop("sent_bytes")
        res["close_min_s"] = round(cs[0], 2) if cs else None
        res["close_max_s"] = round(cs[-1], 2) if cs else None
        res["close_median_s"] = round(cs[len(cs) // 2], 2) if cs else None
        res["max_bytes_sent"] = max(sb) if sb else 0
    print(json.dumps(results))


# ---- hold

async def hold_conn(a, res, k):
    loop = asyncio.get_running_loop()
    host, port = hostport(a.proxy)
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection(host, port), 3)
    except (OSError, asyncio.TimeoutError):
        res["connect_failed"] += 1
        return
    res["connected"] += 1
    t0 = loop.time()
    w.write(a.send.encode("latin-1").decode("unicode_escape").encode("latin-1"))
    st, reason, closed = 0, "-", False
    if a.then is not None:
        st, reason, _, closed = await read_answer(r, a.then_at)
        if st == 0 and not closed:
            w.write(a.then.encode("latin-1").decode("unicode_escape").encode("latin-1"))
            st, reason, _, closed = await read_answer(r, a.hold - (loop.time() - t0))
            if st or closed:
                res["answer_s"].append(loop.time() - t0)
    else:
        st, reason, _, closed = await read_answer(r, a.hold)
    key = "%d:%s" % (st, reason)
    res["answers"][key] = res["answers"].get(key, 0) + 1
    left = a.hold - (loop.time() - t0)
    if left > 0 and not closed and a.then is None:
        await asyncio.sleep(left)
    w.close()


async def hold(a):
    res = {"connected": 0, "connect_failed": 0, "answers": {}, "answer_s": []}
    tasks = [asyncio.ensure_future(hold_conn(a, res, k)) for k in range(a.n)]
    await asyncio.gather(*tasks)
    s = res.pop("answer_s")
    res["answer_max_s"] = round(max(s), 2) if s else None
    print(json.dumps(res))


# ---- probe

async def probe(a):
    loop = asyncio.get_running_loop()
    host, port = hostport(a.proxy)
    out = {"status": 0, "reason": "-", "got": 0, "how": "-", "elapsed_ms": 0}
    r, w = await asyncio.open_connection(host, port)
    t0 = loop.time()
    w.write(b"CONNECT %s HTTP/1.1\r\n\r\n" % a.connect.encode())
    st, reason, rest, closed = await read_answer(r, a.wait)
    out["status"], out["reason"] = st, reason
    if st == 200 and not closed:
        t0 = loop.time()
        got = len(rest)
        if a.send:
            w.write(a.send.encode("latin-1").decode("unicode_escape").encode("latin-1"))
        how = "timeout"
        while loop.time() - t0 < a.wait:
            try:
                d = await asyncio.wait_for(r.read(65536), a.wait - (loop.time() - t0))
            except asyncio.TimeoutError:
                break
            except OSError:
                how = "reset"
                break
            if not d:
                how = "eof"
                break
            got += len(d)
        out["got"], out["how"] = got, how
    out["elapsed_ms"] = int((loop.time() - t0) * 1000)
    w.close()
    print(json.dumps(out))


# ---- flood (plain sockets and select: as fast as the kernel takes it)

def flood(a):
    host, port = hostport(a.proxy)
    dh, dp = hostport(a.dest)
    socks, sent, recvd = [], 0, 0
    for _ in range(a.n):
        s = socket.socket()
        if a.mode.startswith("down") and not a.read:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(5)
        s.connect((host, port))
        if a.mode in ("up", "down"):
            s.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % a.dest.encode())
            head = b""
            while b"\r\n\r\n" not in head:
                d = s.recv(1)
                if not d:
                    sys.exit("tunnel refused: %r" % head)
                head += d
            if not head.startswith(b"HTTP/1.1 200"):
                sys.exit("tunnel refused: %r" % head)
        if a.mode == "down":
            s.sendall(b"GET /bytes/1000000000 HTTP/1.1\r\nHost: %s\r\n\r\n" % dh.encode())
        elif a.mode == "down-http":
            s.sendall(b"GET http://%s/bytes/1000000000 HTTP/1.1\r\nHost: %s\r\n\r\n"
                      % (a.dest.encode(), a.dest.encode()))
        elif a.mode == "up-http":
            s.sendall(b"POST http://%s/ HTTP/1.1\r\nHost: %s\r\nContent-Length: 100000000000\r\n\r\n"
                      % (a.dest.encode(), a.dest.encode()))
        s.setblocking(False)
        socks.append(s)
    if a.ready:
        open(a.ready, "w").write("ok\n")
    block = b"u" * 65536
    end = time.monotonic() + a.secs
    up = a.mode.startswith("up")
    while time.monotonic() < end:
        if a.until and (sent if up else recvd) >= a.until:
            break
        rl = socks if (a.read or up) else []
        wl = socks if up else []
        if not rl and not wl:
            time.sleep(min(0.2, max(0, end - time.monotonic())))
            continue
        rr, ww, _ = select.select(rl, wl, [], 0.2)
        for s in ww:
            try:
                sent += s.send(block)
            except (BlockingIOError, InterruptedError):
                pass
        for s in rr:
            try:
                d = s.recv(1 << 20)
                if not d and up:
                    socks.remove(s)
                recvd += len(d)
            except (BlockingIOError, InterruptedError):
                pass
    # Abort (RST): the guard drops what it still holds for the far end at
    # once, instead of delivering it at the slow reader's pace.
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    # Wall clock, as the guard's log "ts": the test measures the guard's
    # reaction from its close lines, not from how soon it can poll.
    print(json.dumps({"mode": a.mode, "read": a.read, "n": a.n, "sent": sent,
                      "received": recvd, "aborted_at": time.time()}))


# ---- tunnels under policy pushes

BLOCK = 2048


async def open_tunnel(host, port, dest):
    r, w = await asyncio.wait_for(asyncio.open_connection(host, port), 5)
    w.write(b"CONNECT %s HTTP/1.1\r\n\r\n" % dest.encode())
    st, reason, rest, closed = await read_answer(r, 10)
    if st != 200 or closed or rest:
        w.close()
        return None, None, st, reason
    return r, w, st, reason


async def echo_once(r, w, tag, n):
    unit = b"%s:%08d:" % (tag, n)
    data = (unit * (BLOCK // len(unit) + 1))[:BLOCK]
    w.write(data)
    back = await asyncio.wait_for(r.readexactly(BLOCK), 10)
    return back == data


async def keep_tunnel(a, i, res, stop):
    host, port = hostport(a.proxy)
    tag = b"k%05d" % i
    try:
        r, w, st, _ = await open_tunnel(host, port, a.keep)
    except (OSError, asyncio.TimeoutError):
        r = None
    if r is None:
        res["keep_open_failed"] += 1
        return
    res["keep_opened"] += 1
    n = 0
    try:
        while not stop.is_set():
            if not await echo_once(r, w, tag, n):
                res["keep_mismatch"] += 1
                return
            n += 1
            res["echoes"] += 1
            await asyncio.sleep(0.05)
        # The final check: still open, still echoing exactly.
        if await echo_once(r, w, tag, n):
            res["keep_final_ok"] += 1
        else:
            res["keep_mismatch"] += 1
    except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as e:
        res["keep_errors"] += 1
        res["keep_error_kinds"][e.__class__.__name__] = \
            res["keep_error_kinds"].get(e.__class__.__name__, 0) + 1
    finally:
        w.close()


async def drop_tunnel(a, i, res, stop):
    host, port = hostport(a.proxy)
    tag = b"d%05d" % i
    n = 0
    while not stop.is_set():
        try:
            r, w, st, reason = await open_tunnel(host, port, a.drop)
        except (OSError, asyncio.TimeoutError):
            res["drop_open_errors"] += 1
            await asyncio.sleep(0.05)
            continue
        if r is None:
            key = "%d:%s" % (st, reason)
            res["drop_refused"][key] = res["drop_refused"].get(key, 0) + 1
            await asyncio.sleep(0.05)
            continue
        res["drop_opened"] += 1
        try:
            while True:
                if not await echo_once(r, w, tag, n):
                    res["drop_mismatch"] += 1
                    break
                n += 1
                res["echoes"] += 1
                if stop.is_set():
                    # Still echoing after the last push: it survived.
                    if await echo_once(r, w, tag, n):
                        res["drop_open_at_end"] += 1
                    break
                await asyncio.sleep(0.05)
        except (OSError, asyncio.IncompleteReadError):
            res["drop_closed"] += 1
        except asyncio.TimeoutError:
            res["drop_stalled"] += 1
        finally:
            w.close()
        await asyncio.sleep(0.05)


async def tunnels(a):
    res = {"keep_opened": 0, "keep_open_failed": 0, "keep_errors": 0, "keep_error_kinds": {},
           "keep_mismatch": 0, "keep_final_ok": 0, "drop_opened": 0, "drop_closed": 0,
           "drop_refused": {}, "drop_open_errors": 0, "drop_mismatch": 0,
           "drop_open_at_end": 0, "drop_stalled": 0, "echoes": 0}
    stop = asyncio.Event()
    tasks = [asyncio.ensure_future(keep_tunnel(a, i, res, stop)) for i in range(a.nkeep)]
    tasks += [asyncio.ensure_future(drop_tunnel(a, i, res, stop)) for i in range(a.ndrop)]
    for _ in range(200):
        if res["keep_opened"] + res["keep_open_failed"] >= a.nkeep and \
                res["drop_opened"] >= a.ndrop:
            break
        await asyncio.sleep(0.05)
    open(a.ready, "w").write(json.dumps(res) + "\n")
    while not os.path.exists(a.stop):
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.gather(*tasks)
    print(json.dumps(res))


# ---- pushes over the control socket

def put(sock_path, body, timeout=10, after_send=None):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(sock_path)
    s.sendall(b"PUT /v1/policy HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    if after_send is not None:
        after_send()
    buf = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    s.close()
    return parse_head(buf)[0], buf.partition(b"\r\n\r\n")[2]


def pushloop(a):
    acked, e = -1, a.start
    def state(sent):
        with open(a.state + ".tmp", "w") as f:
            f.write("sent %d acked %d\n" % (sent, acked))
        os.rename(a.state + ".tmp", a.state)
    rtt = [0.02]
    def kill():
        time.sleep(random.uniform(0, rtt[0]))
        os.kill(a.kill_pid, signal.SIGKILL)
    while e <= a.to:
        body = open(os.path.join(a.bundles, "b%d.json" % e), "rb").read()
        state(e)
        t0 = time.monotonic()
        try:
            st, _ = put(a.control, body,
                        after_send=kill if a.kill_pid and e == a.to else None)
        except OSError:
            break
        rtt[0] = time.monotonic() - t0
        if st != 200:
            break
        acked = e
        state(e)
        e += 1
    print(json.dumps({"acked": acked}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("slowloris")
    p.add_argument("--target", action="append", required=True)
    p.add_argument("--observe", type=float, default=8)
    p.add_argument("--ready")
    p.add_argument("--times")
    p = sub.add_parser("hold")
    p.add_argument("--proxy", required=True)
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--send", default="CONNECT a")
    p.add_argument("--hold", type=float, default=3)
    p.add_argument("--then")
    p.add_argument("--then-at", type=float, default=1)
    p = sub.add_parser("probe")
    p.add_argument("--proxy", required=True)
    p.add_argument("--connect", required=True)
    p.add_argument("--send", default="")
    p.add_argument("--wait", type=float, default=10)
    p = sub.add_parser("flood")
    p.add_argument("--proxy", required=True)
    p.add_argument("--dest", required=True)
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--secs", type=float, default=4)
    p.add_argument("--mode", required=True, choices=["up", "down", "up-http", "down-http"])
    p.add_argument("--read", action="store_true")
    p.add_argument("--until", type=int, default=0)
    p.add_argument("--ready")
    p = sub.add_parser("tunnels")
    p.add_argument("--proxy", required=True)
    p.add_argument("--keep", required=True)
    p.add_argument("--nkeep", type=int, default=160)
    p.add_argument("--drop", required=True)
    p.add_argument("--ndrop", type=int, default=40)
    p.add_argument("--ready", required=True)
    p.add_argument("--stop", required=True)
    p = sub.add_parser("pushloop")
    p.add_argument("--control", required=True)
    p.add_argument("--bundles", required=True)
    p.add_argument("--from", dest="start", type=int, required=True)
    p.add_argument("--to", type=int, required=True)
    p.add_argument("--state", required=True)
    p.add_argument("--kill-pid", type=int, default=0)
    a = ap.parse_args()
    raise_nofile()
    if a.cmd == "flood":
        flood(a)
    elif a.cmd == "pushloop":
        pushloop(a)
    else:
        asyncio.run({"slowloris": slowloris, "hold": hold, "probe": probe,
                     "tunnels": tunnels}[a.cmd](a))


if __name__ == "__main__":
    main()
