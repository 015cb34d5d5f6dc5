#!/usr/bin/env python3
"""tunnel_hold.py [--mode echo|get] PROXY_HOST PROXY_PORT TARGET READY GO [OUT]:
one live CONNECT tunnel, probed before and after a change the test makes.

Opens a CONNECT tunnel to TARGET (host:port) through the proxy at
PROXY_HOST:PROXY_PORT and probes it; writes the probe's result to READY,
then waits (at most 30 s) for the file GO to exist and probes the same
tunnel again when the first probe got through. Writes "FIRST, then
SECOND" to OUT, or to stdout without OUT: SECOND is "-" after a first
that failed, and FIRST "refused-NNN" when the CONNECT itself was answered
NNN (or "closed": EOF, reset, timeout). The probe:
  echo (default; TARGET a raw echo listener): 8 bytes sent, "alive" when
       they come back, else "closed";
  get  (TARGET an HTTP listener): a GET, its answer's status, else "closed".
The first probe proves the tunnel relayed: a tunnel that never did reads
"closed, then -", never "alive, then closed". READY and OUT are
written whole (renamed into place). Every wait is bounded (5 s a step).
"""
import argparse, os, socket, time

ap = argparse.ArgumentParser()
ap.add_argument("--mode", choices=("echo", "get"), default="echo")
ap.add_argument("proxy_host")
ap.add_argument("proxy_port", type=int)
ap.add_argument("target")
ap.add_argument("ready")
ap.add_argument("go")
ap.add_argument("out", nargs="?")
a = ap.parse_args()
host = a.target.rpartition(":")[0]
buf = b""


def answer(s):
    """The status of the next answer on s, its body (Content-Length) read."""
    global buf
    while b"\r\n\r\n" not in buf:
        x = s.recv(4096)
        if not x:
            raise EOFError
        buf += x
    head, _, buf = buf.partition(b"\r\n\r\n")
    n = [int(l.split(b":")[1]) for l in head.split(b"\r\n")[1:]
         if l.lower().startswith(b"content-length:")]
    while n and len(buf) < n[0]:
        x = s.recv(4096)
        if not x:
            raise EOFError
        buf += x
    buf = buf[n[0]:] if n else buf
    return head.split(b" ")[1].decode()


def probe(s):
    try:
        if a.mode == "get":
            s.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host.encode())
            return answer(s)
        s.sendall(b"ping1234")
        got = b""
        while len(got) < 8:
            x = s.recv(64)
            if not x:
                break
            got += x
        return "alive" if got == b"ping1234" else "closed"
    except (OSError, EOFError, IndexError, ValueError):
        return "closed"


def write(path, line):
    with open(path + ".tmp", "w") as f:
        f.write(line + "\n")
    os.rename(path + ".tmp", path)


try:
    s = socket.create_connection((a.proxy_host, a.proxy_port), timeout=5)
    t = a.target.encode()
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (t, t))
    c = answer(s)
except (OSError, EOFError, IndexError, ValueError):
    s, c = None, "closed"
first = probe(s) if c == "200" else "refused-" + c
write(a.ready, first)
end = time.monotonic() + 30
while not os.path.exists(a.go) and time.monotonic() < end:
    time.sleep(0.05)
result = "%s, then %s" % (first, probe(s) if first in ("alive", "200") else "-")
if a.out:
    write(a.out, result)
else:
    print(result)
