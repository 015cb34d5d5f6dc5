#!/usr/bin/env python3
"""flights.py - first flights of TLS, hostile and not, through a CONNECT proxy.

  flights.py --proxy IP:PORT --target HOST:PORT --good NAME [--socks5] [--case NAME]...
  flights.py --direct --target HOST:PORT --good NAME [--case NAME]...

--direct: no proxy protocol, straight to the target (a transparent guard's
nft redirect takes the connection).

For each case: CONNECT (or SOCKS5 CONNECT: ATYP IPv4, IPv6 or domain as
the target is written) to the target through the proxy, send the case's
first flight and, when the flight only rearranges the record layer of a
real ClientHello (Python's OpenSSL client), carry on with that handshake.
Prints one line per case: "CASE OUTCOME SERVER_BYTES", OUTCOME being
handshake (the client finished a handshake), answered (the server sent
bytes, no finished handshake), closed (the tunnel ended with no byte from
the server), refused (the proxy did not answer 200) or timeout. A case
whose ClientHello names something else names it "<case>.evil.test", so a
server's log shows which case got through. --list prints the cases.
"""
import argparse, os, socket, ssl, sys, time

EVIL = ".evil.test"


def u16(n):
    return n.to_bytes(2, "big")


def record(ctype, payload, ver=0x0301):
    return bytes([ctype]) + u16(ver) + u16(len(payload)) + payload


class Client:
    """Python's OpenSSL client, stopped after its ClientHello."""

    def __init__(self, name):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        self.inc, self.out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.inc, self.out, server_hostname=name)
        try:
            self.tls.do_handshake()
        except ssl.SSLWantReadError:
            pass
        first = self.out.read()
        assert first[0] == 0x16 and len(first) == 5 + int.from_bytes(first[3:5], "big")
        self.hs = first[5:]		# the ClientHello message


def parse_hello(hs):
    """(fields before the extensions, [(type, data)])"""
    body = hs[4:]
    p = 2 + 32
    p += 1 + body[p]
    p += 2 + int.from_bytes(body[p:p + 2], "big")
    p += 1 + body[p]
    head, p = body[:p], p + 2
    exts = []
    while p < len(body):
        t, n = int.from_bytes(body[p:p + 2], "big"), int.from_bytes(body[p + 2:p + 4], "big")
        exts.append((t, body[p + 4:p + 4 + n]))
        p += 4 + n
    return head, exts


def build_hello(head, exts):
    e = b"".join(u16(t) + u16(len(d)) + d for t, d in exts)
    body = head + u16(len(e)) + e
    return b"\x01" + len(body).to_bytes(3, "big") + body


def sni(*names):
    """server_name extension body: names are (type, bytes)."""
    lst = b"".join(bytes([t]) + u16(len(n)) + n for t, n in names)
    return u16(len(lst)) + lst


def rewrite(hs, fn):
    head, exts = parse_hello(hs)
    return build_hello(head, fn(exts))


def with_sni(exts, body):
    return [(0, body) if t == 0 else (t, d) for t, d in exts]


def frag(hs, size, ver=0x0301):
    return b"".join(record(0x16, hs[i:i + size], ver) for i in range(0, len(hs), size))


def sslv2_hello():
    specs = bytes.fromhex("00002f000035c02f00c030")
    challenge = os.urandom(16)
    body = b"\x01\x03\x01" + u16(len(specs)) + u16(0) + u16(len(challenge)) + specs + challenge
    return u16(0x8000 | len(body)) + body


def cases(good):
    """name -> (client to continue with or None, first flight)"""
    gb = good.encode()

    def evil(case):
        return Client(case + EVIL)

    out = []
    add = out.append
    # Positive controls: must pass and finish.
    cl = Client(good); add(("valid", cl, record(0x16, cl.hs)))
    cl = Client(None); add(("sni-absent", cl, record(0x16, cl.hs)))
    cl = Client(good); add(("fragmented-good", cl, frag(cl.hs, 37)))
    cl = Client(good); add(("record-per-byte-good", cl, frag(cl.hs, 1)))
    cl = Client(good.upper() + "."); add(("case-and-dot-good", cl, record(0x16, cl.hs)))
    cl = Client(good); add(("record-version-0300-good", cl, record(0x16, cl.hs, 0x0300)))
    # Hostile: the record layer rearranged around a hello naming another host.
    cl = evil("fragmented"); add(("fragmented", cl, frag(cl.hs, 37)))
    cl = evil("record-per-byte"); add(("record-per-byte", cl, frag(cl.hs, 1)))
    cl = evil("leading-alert")
    add(("leading-alert", cl, record(0x15, b"\x01\x5a") + record(0x16, cl.hs)))
    cl = evil("leading-ccs"); add(("leading-ccs", cl, record(0x14, b"\x01") + record(0x16, cl.hs)))
    cl = evil("leading-heartbeat")
    add(("leading-heartbeat", cl, record(0x18, b"\x01\x00\x00" + b"\x00" * 16) + record(0x16, cl.hs)))
    cl = evil("leading-appdata"); add(("leading-appdata", cl, record(0x17, b"\x00", 0x0303) + record(0x16, cl.hs)))
    cl = evil("record-version-0001"); add(("record-version-0001", cl, record(0x16, cl.hs, 0x0001)))
    cl = evil("record-version-0305"); add(("record-version-0305", cl, record(0x16, cl.hs, 0x0305)))
    cl = evil("record-version-0fff"); add(("record-version-0fff", cl, record(0x16, cl.hs, 0x0fff)))
    cl = evil("continuation-version-0001")
    add(("continuation-version-0001", cl, record(0x16, cl.hs[:40]) + record(0x16, cl.hs[40:], 0x0001)))
    add(("sslv2-hello", None, sslv2_hello()))
    # Two ClientHellos.
    g, e = Client(good), evil("two-hellos-one-record")
    add(("two-hellos-one-record", None, record(0x16, g.hs + e.hs)))
    g, e = Client(good), evil("two-hellos-evil-first")
    add(("two-hellos-evil-first", None, record(0x16, e.hs) + record(0x16, g.hs)))
    g, e = Client(good), evil("two-hellos-good-then-evil")
    add(("two-hellos-good-then-evil", None, record(0x16, g.hs) + record(0x16, e.hs)))
    # A first hello naming the host with an empty key_share (the server
    # must ask again: HelloRetryRequest), the second naming another: the
    # gate judges the first only (see SECURITY.md).
    g, e = Client(good), evil("hrr-second-hello")
    g1 = rewrite(g.hs, lambda x: [(t, u16(0)) if t == 0x33 else (t, d) for t, d in x])
    add(("hrr-second-hello", None, record(0x16, g1) + record(0x16, e.hs)))
    # The same behind the CCS of compatibility mode, and behind a
    # handshake message that is no ClientHello (ClientKeyExchange): the
    # gate's watch ends at the latter, so the servers must refuse what
    # follows it.
    e = evil("hrr-ccs-second-hello")
    add(("hrr-ccs-second-hello", None, record(0x16, g1) + record(0x14, b"\x01") + record(0x16, e.hs)))
    e = evil("hrr-cke-second-hello")
    add(("hrr-cke-second-hello", None, record(0x16, g1) + record(0x16, b"\x10\x00\x00\x01\x00") + record(0x16, e.hs)))
    # The first hello also offers 0-RTT (early_data): a server that asks
    # again skips the client's application data records (RFC 8446
    # 4.2.10), then reads the second hello; OpenSSL 3.0 switches to its
    # name. The data record must not end the gate's watch.
    g1e = rewrite(g.hs, lambda x: [(t, u16(0)) if t == 0x33 else (t, d) for t, d in x] + [(0x2a, b"")])
    e = evil("hrr-earlydata-second-hello")
    add(("hrr-earlydata-second-hello", None,
         record(0x16, g1e) + record(0x17, os.urandom(40), 0x0303) + record(0x16, e.hs)))
    # Hostile: the server_name extension itself.
    nm = lambda case: (case + EVIL).encode()
    hs = Client(good).hs
    add(("sni-two-names", None, record(0x16, rewrite(hs, lambda x: with_sni(x, sni((0, gb), (0, nm("sni-two-names"))))))))
    add(("sni-two-names-evil-first", None, record(0x16, rewrite(hs, lambda x: with_sni(x, sni((0, nm("sni-two-names-evil-first")), (0, gb)))))))
    add(("sni-name-type-1", None, record(0x16, rewrite(hs, lambda x: with_sni(x, sni((1, gb), (0, nm("sni-name-type-1"))))))))
    add(("sni-duplicate-extension", None, record(0x16, rewrite(hs, lambda x: x + [(0, sni((0, nm("sni-duplicate-extension"))))]))))
    add(("sni-nul", None, record(0x16, rewrite(hs, lambda x: with_sni(x, sni((0, gb + b"\x00" + nm("sni-nul"))))))))
    add(("sni-list-length-lies", None, record(0x16, rewrite(hs, lambda x: with_sni(x, u16(3 + len(gb)) + b"\x00" + u16(len(gb)) + gb + b"\x00" + u16(len(nm("sni-list-length-lies"))) + nm("sni-list-length-lies"))))))
    add(("ech-extension", None, record(0x16, rewrite(hs, lambda x: x + [(0xfe0d, b"\x00\x00\x01\x00\x01\x00\x00\x20" + os.urandom(32) + u16(0))]))))
    return out


def connect(proxy, target, timeout):
    ph, pp = proxy.rsplit(":", 1)
    s = socket.create_connection((ph, int(pp)), timeout=timeout)
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    if b" 200 " not in buf.split(b"\r\n", 1)[0]:
        s.close()
        return None, buf
    return s, buf.split(b"\r\n\r\n", 1)[1]


def socks5(proxy, target, timeout):
    ph, pp = proxy.rsplit(":", 1)
    host, port = target.rsplit(":", 1)
    host = host.strip("[]")
    s = socket.create_connection((ph, int(pp)), timeout=timeout)
    s.sendall(b"\x05\x01\x00")
    if s.recv(2) != b"\x05\x00":
        s.close()
        return None, b""
    for fam, atyp in ((socket.AF_INET, 1), (socket.AF_INET6, 4)):
        try:
            addr = bytes([atyp]) + socket.inet_pton(fam, host)
            break
        except OSError:
            pass
    else:
        addr = b"\x03" + bytes([len(host)]) + host.encode()
    s.sendall(b"\x05\x01\x00" + addr + u16(int(port)))
    rep = b""
    while len(rep) < 10:
        d = s.recv(10 - len(rep))
        if not d:
            break
        rep += d
    if rep[:2] != b"\x05\x00":
        s.close()
        return None, b""
    return s, b""


def direct(proxy, target, timeout):
    host, port = target.rsplit(":", 1)
    return socket.create_connection((host.strip("[]"), int(port)), timeout=timeout), b""


def run(proxy, target, cl, flight, quiet, first, use_socks5=False, use_direct=False):
    """The case's outcome and the count of the server's bytes. A reply is
    awaited for up to FIRST seconds: the first byte (or the close) after
    the flight, and each further flight a client mid-handshake still
    needs. Once bytes have come and no client waits for more, QUIET
    seconds of silence end the case. Never longer than FIRST + 8 s."""
    s, rest = (direct if use_direct else socks5 if use_socks5 else connect)(proxy, target, 5)
    if s is None:
        return "refused", 0
    got = len(rest)
    s.sendall(flight)
    deadline = time.monotonic() + first + 8
    outcome = None
    ended = False		# the tunnel closed (EOF or reset)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            # A reply is owed while nothing has come yet, or while the
            # client is mid-handshake: a loaded machine may be slow to
            # send it. Otherwise only trailing bytes are left to drain.
            s.settimeout(min(left, first if (got == 0 or cl is not None) else quiet))
            try:
                d = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                ended = True
                break
            if not d:
                ended = True
                break
            got += len(d)
            if cl is None:
                continue
            cl.inc.write(d)
            try:
                cl.tls.do_handshake()
                outcome = "handshake"
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError:
                cl = None
            if cl is not None:
                s.sendall(cl.out.read())
            if outcome:
                break
    finally:
        s.close()
    if outcome is None:
        outcome = "answered" if got else "closed" if ended else "timeout"
    return outcome, got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proxy")
    ap.add_argument("--target")
    ap.add_argument("--good")
    ap.add_argument("--case", action="append")
    ap.add_argument("--socks5", action="store_true")
    ap.add_argument("--direct", action="store_true")
    ap.add_argument("--quiet", type=float, default=1.0,
                    help="seconds of silence that end a case once the server's bytes have come")
    ap.add_argument("--first", type=float, default=5.0,
                    help="seconds to wait for the server's first byte or the close, and for "
                    "each flight a client mid-handshake still needs")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    for name, cl, flight in cases(a.good or "tls.example.test"):
        if a.list:
            print(name)
            continue
        if a.case and name not in a.case:
            continue
        try:
            outcome, got = run(a.proxy, a.target, cl, flight, a.quiet, a.first, a.socks5, a.direct)
        except OSError as e:
            outcome, got = "error:" + type(e).__name__, 0
        print(name, outcome, got, flush=True)


if __name__ == "__main__":
    main()
