#!/usr/bin/env python3
"""slow_client.py - an absolute-form client that reads its answer slowly.

  slow_client.py PROXY_IP PORT URL [--http10] [--then TEXT] [--rcvbuf N]
                 [--read N] [--every S] [--hold S] [--timeout S]

Sets SO_RCVBUF (default 4096) before it connects, sends "GET URL
HTTP/1.1" (HTTP/1.0 with --http10) and TEXT (Python escapes, a pipelined
request) in one write, reads nothing for --hold s, then reads at most
--read bytes every --every s until the guard closes or --timeout s pass.
Prints one line:
  client=IP:PORT status=N body=LEN last=C end=eof|reset|timeout next=N secs=S
client is this end's address (the guard's decision line names it);
status and body are the first response's: its body by Content-Length,
else every byte after its head; last is the body's last byte (- if
none); end is how the connection ended; next is the status of a second
response after the first (0 if none); secs from the request to the end.
"""
import argparse, codecs, socket, time

ap = argparse.ArgumentParser()
ap.add_argument("host")
ap.add_argument("port", type=int)
ap.add_argument("url")
ap.add_argument("--http10", action="store_true")
ap.add_argument("--then", default="")
ap.add_argument("--rcvbuf", type=int, default=4096)
ap.add_argument("--read", type=int, default=2048)
ap.add_argument("--every", type=float, default=0.1)
ap.add_argument("--hold", type=float, default=0)
ap.add_argument("--timeout", type=float, default=30)
a = ap.parse_args()

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, a.rcvbuf)
s.settimeout(a.timeout)
s.connect((a.host, a.port))
me = s.getsockname()
t0 = time.monotonic()
s.sendall(b"GET %s HTTP/1.%d\r\n\r\n" % (a.url.encode(), 0 if a.http10 else 1) +
          codecs.decode(a.then, "unicode_escape").encode("latin-1"))
time.sleep(a.hold)
got, end = bytearray(), "timeout"
deadline = t0 + a.timeout
while time.monotonic() < deadline:
    try:
        d = s.recv(a.read)
    except ConnectionResetError:
        end = "reset"
        break
    except socket.timeout:
        break
    if not d:
        end = "eof"
        break
    got += d
    time.sleep(a.every)
secs = time.monotonic() - t0


def status(b):
    try:
        return int(b.split(b"\r\n", 1)[0].split(b" ")[1])
    except (IndexError, ValueError):
        return 0


head, _, rest = bytes(got).partition(b"\r\n\r\n")
body, after = rest, b""
for ln in head.split(b"\r\n")[1:]:
    k, _, v = ln.partition(b":")
    if k.strip().lower() == b"content-length" and v.strip().isdigit():
        body, after = rest[:int(v)], rest[int(v):]
print("client=%s:%d status=%d body=%d last=%s end=%s next=%d secs=%.1f" % (
    me[0], me[1], status(head), len(body), chr(body[-1]) if body else "-", end, status(after), secs))
