#!/usr/bin/env python3
"""rawreq.py - send exact bytes to a proxy and report what came back.

  rawreq.py HOST PORT [--send TEXT] [--repeat-send N] [--hold S] [--timeout S]
            [--socks5 TARGET:PORT]

TEXT uses Python escapes (\\r\\n, \\x00). Prints "status=NNN reason=R
elapsed_ms=N closed=0|1" on one line: status is the HTTP status (0 if none),
reason the X-Egress-Guard-Reason header ("-" if none). --hold keeps the
connection open S seconds before reading (for max-conns tests); with --send
omitted nothing is sent (header-timeout tests). --fin shuts down the sending
side (a FIN) once TEXT is sent, then reads. Bytes after a 200 response are
printed as body=<repr>.
--socks5: first a SOCKS5 CONNECT to TARGET (an IPv4 literal as ATYP 1,
else a name, ATYP 3), then the rest on the tunnel; a refused CONNECT
prints "socks_rep=0xNN" (the reply code) and nothing else.
"""
import argparse, socket, struct, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("host")
ap.add_argument("port", type=int)
ap.add_argument("--send", default=None)
ap.add_argument("--then", default=None, help="sent after a 200 answer")
ap.add_argument("--hold", type=float, default=0)
ap.add_argument("--fin", action="store_true", help="shut down the sending side after --send")
ap.add_argument("--timeout", type=float, default=10)
ap.add_argument("--socks5", default=None)
a = ap.parse_args()

t0 = time.monotonic()
fam = socket.AF_INET6 if ":" in a.host else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM)
s.settimeout(a.timeout)
s.connect((a.host, a.port))
if a.socks5 is not None:
    th, _, tp = a.socks5.rpartition(":")
    try:
        dst = b"\x01" + socket.inet_aton(th) if th.count(".") == 3 else None
    except OSError:
        dst = None
    if dst is None:
        dst = b"\x03" + bytes([len(th)]) + th.encode()
    s.sendall(b"\x05\x01\x00")
    greet = s.recv(2)
    s.sendall(b"\x05\x01\x00" + dst + struct.pack(">H", int(tp)))
    rep = s.recv(4)
    if greet != b"\x05\x00" or len(rep) < 2 or rep[1] != 0:
        print("socks_rep=0x%02x" % (rep[1] if len(rep) >= 2 else 0xff))
        sys.exit(0)
    # the bound address: 4 or 16 bytes, or a name, then the port
    left = {1: 4, 4: 16}.get(rep[3], 0) + 2 if len(rep) == 4 else 0
    while left > 0:
        d = s.recv(left)
        if not d:
            break
        left -= len(d)
if a.send is not None:
    s.sendall(a.send.encode("latin-1").decode("unicode_escape").encode("latin-1"))
if a.hold:
    time.sleep(a.hold)
if a.fin:
    s.shutdown(socket.SHUT_WR)
buf = b""
closed = 0
deadline = time.monotonic() + a.timeout
while b"\r\n\r\n" not in buf and time.monotonic() < deadline:
    try:
        d = s.recv(65536)
    except socket.timeout:
        break
    except ConnectionResetError:
        closed = 1
        break
    if not d:
        closed = 1
        break
    buf += d
status, reason = 0, "-"
head, _, rest = buf.partition(b"\r\n\r\n")
lines = head.split(b"\r\n")
if lines and lines[0].startswith(b"HTTP/1."):
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        status = 0
for ln in lines[1:]:
    k, _, v = ln.partition(b":")
    if k.strip().lower() == b"x-egress-guard-reason":
        reason = v.strip().decode("latin-1")
body = b""
if status == 200 and a.then is not None:
    s.sendall(a.then.encode("latin-1").decode("unicode_escape").encode("latin-1"))
    body = rest
    s.settimeout(2)
    try:
        while len(body) < 65536:
            d = s.recv(65536)
            if not d:
                break
            body += d
    except socket.timeout:
        pass
elapsed = int((time.monotonic() - t0) * 1000)
out = "status=%d reason=%s elapsed_ms=%d closed=%d" % (status, reason, elapsed, closed)
if body:
    out += " body=%r" % body[:200]
print(out)
