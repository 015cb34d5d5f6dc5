#!/usr/bin/env python3
"""pingpong.py PROXY_HOST PROXY_PORT TARGET SECS READY: opens a CONNECT
tunnel to TARGET (a raw echo listener) through the proxy, writes READY,
then for SECS seconds sends 8 bytes every 5 ms and waits for their echo.
Prints "max_ms=N n=N": the slowest round trip, which is how long the
guard's loop could not relay (a loop stalled by work of its own shows
here), and how many round trips were made."""
import socket, sys, time

host, port, target, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
s = socket.create_connection((host, port), timeout=10)
s.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % target.encode())
head = b""
while b"\r\n\r\n" not in head:
    d = s.recv(4096)
    if not d:
        sys.exit("closed before the 200")
    head += d
if not head.startswith(b"HTTP/1.1 200"):
    sys.exit("refused: %r" % head[:60])
with open(sys.argv[5], "w") as f:
    f.write("ready\n")
end = time.monotonic() + secs
worst, n = 0.0, 0
while time.monotonic() < end:
    t = time.monotonic()
    s.sendall(b"pingpong")
    got = b""
    while len(got) < 8:
        d = s.recv(8 - len(got))
        if not d:
            sys.exit("tunnel closed")
        got += d
    worst = max(worst, time.monotonic() - t)
    n += 1
    time.sleep(0.005)
print("max_ms=%d n=%d" % (worst * 1000, n))
