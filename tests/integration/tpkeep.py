#!/usr/bin/env python3
"""tpkeep.py - requests on one kept-alive connection, no proxy protocol.

  tpkeep.py IP PORT HOST [HOST...]

Connects to IP:PORT (a transparent guard's nft redirect takes it) and sends
"GET / HTTP/1.1" with each HOST as its Host, one after the other, reading
each response whole (Content-Length). Prints one line:
"STATUS REASON, then STATUS REASON ...; closed|open", REASON being the
X-Egress-Guard-Reason header or "-", "closed -" for a request the
connection ended before answering; "closed" at the end when the guard
closed the connection after the last answer (within 2 s), else "open"
(not waited for after a 2xx answer: "open" at once).
"""
import socket, sys

s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)


def ask(host):
    s.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host.encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            return "closed -"
        buf += d
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    h = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
    n = int(h.get("content-length", "0"))
    while len(body) < n:
        d = s.recv(4096)
        if not d:
            break
        body += d
    return "%s %s" % (lines[0].split()[1], h.get("x-egress-guard-reason", "-"))


answers = []
for host in sys.argv[3:]:
    answers.append(ask(host))
    if answers[-1] == "closed -":
        break
s.settimeout(2)
try:
    end = "open" if answers[-1].startswith("2") or s.recv(1) else "closed"
except socket.timeout:
    end = "open"
except OSError:
    end = "closed"
print(", then ".join(answers) + "; " + end)
