#!/usr/bin/env python3
"""hostile_upstream.py - admitted upstreams that attack the guard's bounds.

  hostile_upstream.py --listen IP --ready FILE

Listens on five ports of IP, one mode each; every connection reads one
request head, then:
  8001 storm     1xx heads of ~8 KiB each, as fast as the guard takes
                 them, for at most 6 s, then closes.
  8002 bighead   "HTTP/1.1 200 OK" and header lines without end, up to
                 128 KiB, then holds the connection 10 s.
  8003 bulk      200 with Content-Length 100 MB and the body as fast as
                 the guard takes it, for at most 20 s.
  8004 hints     40 heads of 103 (4 KiB each) and then a whole 200 "ok",
                 all in one write, then holds the connection 10 s (no EOF
                 to wake the guard again).
Every loop is bounded in time; stdlib only.
"""
import argparse, socket, sys, threading, time


def read_head(s):
    buf = b""
    while b"\r\n\r\n" not in buf and len(buf) < 65536:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return buf


def shaped(path):
    """The response of port 8005 for path, and whether to close after it."""
    parts = path.split("/")
    n = int(parts[2])
    body = b"b" * (n - 1) + b"E"
    if parts[1] == "close":
        return b"HTTP/1.1 200 OK\r\n\r\n" + body, True
    if parts[1] == "chunked":
        k = int(parts[3])
        out = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"]
        for i in range(0, n, k):
            out.append(b"%x\r\n%s\r\n" % (len(body[i:i + k]), body[i:i + k]))
        return b"".join(out) + b"0\r\n\r\n", False
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % n + body, False


def hold(s, secs):
    s.settimeout(secs)
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass


def serve(s, port):
    try:
        head = read_head(s)
        if port == 8001:
            head = (b"HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n" +
                    b"X-Fill: " + b"f" * 8000 + b"\r\n\r\n")
            end = time.monotonic() + 6
            # Blocking: a guard that stops reading holds this thread in
            # sendall, which is the point (the test's trap ends it).
            while time.monotonic() < end:
                s.sendall(head)
        elif port == 8002:
            s.sendall(b"HTTP/1.1 200 OK\r\n")
            for _ in range(128 * 1024 // 16):
                s.sendall(b"X-Aaaaaaa: bbbb\r\n")
            hold(s, 10)
        elif port == 8003:
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n")
            chunk = b"b" * 65536
            end = time.monotonic() + 20
            while time.monotonic() < end:
                s.sendall(chunk)
        elif port == 8004:
            hint = (b"HTTP/1.1 103 Early Hints\r\nX-Fill: " + b"h" * 4000 + b"\r\n\r\n")
            s.sendall(hint * 40 + b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            hold(s, 10)
        elif port == 8005:
            resp, close = shaped(head.split(b" ")[1].decode("ascii", "replace"))
            s.sendall(resp)
            if not close:
                hold(s, 10)
    except (OSError, ValueError, IndexError):
        pass
    finally:
        s.close()


def listen(ip, port):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((ip, port))
    srv.listen(16)
    return srv


def accept_loop(srv, port):
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve, args=(c, port), daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--ready", required=True)
    a = ap.parse_args()
    srvs = [(listen(a.listen, p), p) for p in (8001, 8002, 8003, 8004, 8005)]
    for srv, p in srvs:
        threading.Thread(target=accept_loop, args=(srv, p), daemon=True).start()
    open(a.ready, "w").write("ready\n")
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
