#!/usr/bin/env python3
"""dnsd_tcp_clients.py - hostile and waiting TCP clients of the guard's DNS
listener, for dnsd_tcp_test.sh (stdlib only). Prints one JSON object.

  trickle --server H:P --n N --observe S
      N connections that each declare a 4000-byte frame and then send one
      byte of it a second. Records, per connection, the seconds from its
      first byte to the guard's close (null: still open after S seconds).
  pending --server H:P --name NAME --wait S
      connects at once (the connection may wait in the kernel's backlog),
      waits S seconds, asks A NAME and reads the answer: the rcode and
      the seconds the whole took (rcode null: no answer within 15 s).
"""
import argparse, json, select, socket, struct, sys, time


def hostport(s):
    h, _, p = s.rpartition(":")
    return h, int(p)


def trickle(a):
    conns = []
    for _ in range(a.n):
        s = socket.create_connection(hostport(a.server), timeout=5)
        s.setblocking(False)
        s.send(struct.pack(">H", 4000))
        conns.append({"s": s, "t0": time.monotonic(), "closed": None})
    end = time.monotonic() + a.observe
    nxt = time.monotonic() + 1
    while time.monotonic() < end and any(c["closed"] is None for c in conns):
        live = [c for c in conns if c["closed"] is None]
        r, _, _ = select.select([c["s"] for c in live], [], [],
                                max(0, min(nxt, end) - time.monotonic()))
        for c in live:
            if c["s"] in r:
                try:
                    gone = c["s"].recv(4096) == b""
                except OSError:
                    gone = True
                if gone:
                    c["closed"] = round(time.monotonic() - c["t0"], 2)
        if time.monotonic() >= nxt:
            nxt += 1
            for c in conns:
                if c["closed"] is None:
                    try:
                        c["s"].send(b"x")
                    except OSError:
                        c["closed"] = round(time.monotonic() - c["t0"], 2)
    print(json.dumps({"closed_after": [c["closed"] for c in conns]}))


def query(name):
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\x00" + struct.pack(">HH", 1, 1)


def pending(a):
    t0 = time.monotonic()
    s = socket.create_connection(hostport(a.server), timeout=5)
    time.sleep(a.wait)
    q = query(a.name)
    s.settimeout(15)
    rcode = None
    try:
        s.sendall(struct.pack(">H", len(q)) + q)
        buf = b""
        while len(buf) < 2 or len(buf) < 2 + struct.unpack(">H", buf[:2])[0]:
            d = s.recv(4096)
            if not d:
                break
            buf += d
        if len(buf) >= 6:
            rcode = buf[5] & 0x0F
    except OSError:
        pass
    print(json.dumps({"rcode": rcode, "secs": round(time.monotonic() - t0, 2)}))


ap = argparse.ArgumentParser()
sub = ap.add_subparsers(dest="cmd", required=True)
t = sub.add_parser("trickle")
t.add_argument("--server", required=True)
t.add_argument("--n", type=int, default=8)
t.add_argument("--observe", type=float, default=20)
p = sub.add_parser("pending")
p.add_argument("--server", required=True)
p.add_argument("--name", required=True)
p.add_argument("--wait", type=float, default=0)
a = ap.parse_args()
trickle(a) if a.cmd == "trickle" else pending(a)
