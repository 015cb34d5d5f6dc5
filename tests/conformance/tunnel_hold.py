#!/usr/bin/env python3
"""tunnel_hold.py GUARD_IP GUARD_PORT HOST:PORT READY GO: one live tunnel, asked twice.

Opens a CONNECT tunnel to HOST:PORT through the proxy at GUARD_IP:GUARD_PORT
and sends a GET on it; writes the first answer's status to READY, then
waits (at most 10 s) for the file GO to exist and sends a second GET on the
same tunnel. Prints "FIRST, then SECOND": each an HTTP status, "closed"
when the tunnel ended (EOF, reset, timeout), "refused-NNN" when the CONNECT
itself was answered NNN. Every wait is bounded.
"""
import os, socket, sys, time

gip, gport, target, ready, go = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
host = target.rpartition(":")[0]
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


def get(s):
    try:
        s.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host.encode())
        return answer(s)
    except (OSError, EOFError, IndexError):
        return "closed"


s = socket.create_connection((gip, gport), timeout=5)
s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
try:
    c = answer(s)
except (OSError, EOFError, IndexError):
    c = "closed"
first = get(s) if c == "200" else "refused-" + c
with open(ready + ".tmp", "w") as f:
    f.write(first + "\n")
os.rename(ready + ".tmp", ready)
for _ in range(200):
    if os.path.exists(go):
        break
    time.sleep(0.05)
print("%s, then %s" % (first, get(s) if first == "200" else "-"))
