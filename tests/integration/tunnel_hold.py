#!/usr/bin/env python3
"""tunnel_hold.py PROXY_HOST PROXY_PORT TARGET READY GO OUT: opens a CONNECT
tunnel to TARGET (a raw echo listener) through the proxy and writes READY;
then waits (at most 30 s) for the file GO, sends 8 bytes and waits 3 s for
their echo. Writes "alive" to OUT when they came back, else "closed" (the
tunnel was ended meanwhile) or "refused: ..." when no tunnel opened."""
import os, socket, sys, time

host, port, target, ready, go, out = sys.argv[1:7]


def done(word):
    with open(out, "w") as f:
        f.write(word + "\n")
    sys.exit(0)


try:
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % target.encode())
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(4096)
        if not d:
            done("refused: closed before the answer")
        head += d
except OSError as e:
    done("refused: %s" % e)
if not head.startswith(b"HTTP/1.1 200"):
    done("refused: %r" % head[:40])
with open(ready, "w") as f:
    f.write("ready\n")
end = time.monotonic() + 30
while not os.path.exists(go) and time.monotonic() < end:
    time.sleep(0.05)
try:
    s.settimeout(3)
    s.sendall(b"ping1234")
    got = b""
    while len(got) < 8:
        d = s.recv(64)
        if not d:
            break
        got += d
    done("alive" if got == b"ping1234" else "closed")
except OSError:
    done("closed")
