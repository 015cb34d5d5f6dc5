#!/usr/bin/env python3
"""dnsd.py - tiny authoritative DNS server for the integration tests (stdlib only).

CLI:
  dnsd.py --listen IP[:PORT] [--listen ...] --zone ZONE.json --log QUERYLOG
          [--ready FILE] [--pidfile FILE]
  --listen   repeatable; 198.18.0.53, 198.18.0.53:5353, [2001:2::53]:53 or a
             bare IPv6 address. Default port 53; port 0 picks a free one. Each
             address is served over UDP and TCP (2-byte length prefix, several
             queries per connection, answered possibly out of order).
  --ready    written (atomically) once every socket is bound: one line
             "udp|tcp IP PORT" per socket.
  --pidfile  our pid, written at start.
  Runs until SIGTERM/SIGINT, then exits 0 at once.

Query log: one line per received query, flushed at once:
  "<qname as received, lower-cased, no trailing dot> <QTYPE> <client-ip>"
  QTYPE is A, NS, CNAME, SOA, PTR, MX, TXT, AAAA, SRV, ANY or TYPEn. The root
  name is ".". Label bytes outside printable ASCII (and "." or "\\" inside a
  label) are written as \\DDD. A query that cannot be parsed logs "- MALFORMED <ip>".

Zone (JSON object, re-read whenever its mtime/size/inode changes; a file that
fails to parse keeps the previous zone). Keys: names, case-insensitive, no
trailing dot. Values:
  {"A": ["198.18.1.10"], "AAAA": ["2001:2::10"], "ttl": 0}  records (ttl default 0)
  {"CNAME": "api.example.test"}   answer = CNAME RR + the target's records of the
                                  asked type from the zone (chains up to 8 hops)
  {"cycle": [{"A": [..]}, {"A": [..]}]}  record sets served round-robin, one
                                  counter per (name, qtype); each set is merged
                                  over the entry's other keys; counters reset
                                  when the zone is re-read
  {"rcode": "NXDOMAIN"}           NOERROR|FORMERR|SERVFAIL|NXDOMAIN|NOTIMP|REFUSED,
                                  or a number 0-15; with "records_too": true the
                                  entry's records are answered under that rcode
  {"qr": false}                   the answer's QR bit cleared
  {"delay_ms": 3000}              answer after that delay (does not block others)
  {"delay_ms_by_type": {"A": 400}}  the same, per query type
  {"drop": true}                  never answer
  {"mode": "garbage"}             query id + random bytes, as long as the answer
  {"mode": "truncate"}            the answer cut in the middle of its answer
                                  section, TC not set (malformed), UDP and TCP
Names not in the zone: NXDOMAIN. Present without records of the asked type:
NOERROR, empty answer (NODATA). Responses: AA=1, RD copied, RA=0, question
echoed; a UDP answer over 512 bytes is sent as header+question with TC=1.
Malformed queries get FORMERR (when at least the id could be read).
"""
import argparse, json, os, signal, socket, struct, sys, threading, time

QTYPES = {1: "A", 2: "NS", 5: "CNAME", 6: "SOA", 12: "PTR", 15: "MX", 16: "TXT",
          28: "AAAA", 33: "SRV", 255: "ANY"}
RCODES = {"NOERROR": 0, "FORMERR": 1, "SERVFAIL": 2, "NXDOMAIN": 3, "NOTIMP": 4, "REFUSED": 5}
T_A, T_CNAME, T_AAAA = 1, 5, 28
MAX_TCP_CONNS = 128
LOG_LOCK = threading.Lock()
LOG = None


class FormErr(Exception):
    pass


def log_line(text):
    with LOG_LOCK:
        LOG.write(text + "\n")
        LOG.flush()


def parse_name(msg, off):
    """Returns (labels as bytes, offset after the name); follows pointers defensively."""
    labels, end, hops, total = [], None, 0, 0
    while True:
        if off >= len(msg):
            raise FormErr("name past end")
        n = msg[off]
        if n & 0xC0 == 0xC0:
            if off + 1 >= len(msg) or hops > 32:
                raise FormErr("bad pointer")
            ptr = ((n & 0x3F) << 8) | msg[off + 1]
            if ptr >= off:
                raise FormErr("forward pointer")
            end = off + 2 if end is None else end
            off, hops = ptr, hops + 1
        elif n & 0xC0:
            raise FormErr("bad label type")
        elif n == 0:
            return labels, (off + 1 if end is None else end)
        else:
            lab = msg[off + 1:off + 1 + n]
            total += n + 1
            if len(lab) != n or total > 255:
                raise FormErr("bad label")
            labels.append(lab)
            off += 1 + n


def name_text(labels):
    if not labels:
        return "."
    out = []
    for lab in labels:
        out.append("".join(chr(b) if 0x21 <= b <= 0x7E and b not in (0x2E, 0x5C)
                           else "\\%03d" % b for b in lab.lower()))
    return ".".join(out)


def encode_name(name):
    """name: text ("a.b.") or a list of label bytes."""
    labels = name if isinstance(name, list) else [l.encode("ascii") for l in name.split(".") if l]
    out = b""
    for lab in labels:
        if not 0 < len(lab) < 64:
            raise ValueError("bad label in %r" % (name,))
        out += bytes([len(lab)]) + lab
    if len(out) > 254:
        raise ValueError("name too long")
    return out + b"\0"


def rr(owner, rtype, ttl, rdata):
    return owner + struct.pack("!HHIH", rtype, 1, ttl, len(rdata)) + rdata


class Zone:
    def __init__(self, path):
        self.path, self.sig, self.data, self.counters = path, None, {}, {}
        self.lock = threading.Lock()
        self.reload(strict=True)

    def reload(self, strict=False):
        try:
            st = os.stat(self.path)
            sig = (st.st_mtime_ns, st.st_size, st.st_ino)
            if sig == self.sig:
                return
            with open(self.path, encoding="utf-8") as f:
                raw = json.load(f)
            if not isinstance(raw, dict):
                raise ValueError("zone must be a JSON object")
            self.data = {k.lower().rstrip("."): v for k, v in raw.items() if isinstance(v, dict)}
            self.sig, self.counters = sig, {}
        except (OSError, ValueError) as e:
            if strict:
                sys.exit("dnsd: zone %s: %s" % (self.path, e))
            print("dnsd: zone reload failed, keeping old zone: %s" % e, file=sys.stderr)

    def lookup(self, name, qtype):
        """Effective entry for (name, qtype) or None; advances the cycle counter."""
        with self.lock:
            self.reload()
            ent = self.data.get(name)
            if ent is None:
                return None
            cyc = ent.get("cycle")
            if isinstance(cyc, list) and cyc:
                i = self.counters.get((name, qtype), 0)
                self.counters[(name, qtype)] = i + 1
                sel = cyc[i % len(cyc)]
                ent = {k: v for k, v in ent.items() if k != "cycle"}
                ent.update(sel if isinstance(sel, dict) else {})
            return ent


def records(ent, qtype, owner):
    """RRs of qtype in ent (A/AAAA) as wire bytes."""
    ttl = int(ent.get("ttl", 0))
    key, fam = {T_A: ("A", socket.AF_INET), T_AAAA: ("AAAA", socket.AF_INET6)}.get(qtype, (None, None))
    if key is None:
        return []
    vals = ent.get(key, [])
    vals = [vals] if isinstance(vals, str) else vals
    return [rr(owner, qtype, ttl, socket.inet_pton(fam, v)) for v in vals]


def answer(zone, qlabels, qtype):
    """Returns (rcode, [answer RRs], entry) for a query."""
    name = name_text(qlabels)
    ent = zone.lookup(name, qtype)
    if ent is None:
        return RCODES["NXDOMAIN"], [], {}
    rc = ent.get("rcode", "NOERROR")
    rcode = rc & 15 if isinstance(rc, int) else RCODES.get(str(rc).upper(), 2)
    if rcode and not ent.get("records_too"):
        return rcode, [], ent
    ans, cur, owner = [], ent, b"\xc0\x0c"
    for _ in range(8):
        target = cur.get("CNAME")
        if not target:
            break
        ans.append(rr(owner, T_CNAME, int(cur.get("ttl", 0)), encode_name(target)))
        if qtype == T_CNAME:
            return rcode, ans, ent
        owner = encode_name(target)
        cur = zone.lookup(target.lower().rstrip("."), qtype)
        if cur is None:
            return rcode, ans, ent
    ans += records(cur, qtype, owner)
    return rcode, ans, ent


def handle(zone, msg, client, udp):
    """Returns (response bytes or None, delay seconds)."""
    if len(msg) < 12:
        log_line("- MALFORMED %s" % client)
        return (msg[:2] + b"\x84\x01" + b"\0" * 8 if len(msg) >= 2 else None), 0
    qid, flags, qd = struct.unpack("!HHH", msg[:6])
    if flags & 0x8000:
        return None, 0  # a response: ignore
    hdr = lambda rc, an, extra=0: struct.pack("!HHHHHH", qid, 0x8400 | (flags & 0x7900) | extra | rc,
                                              1, an, 0, 0)
    try:
        if qd != 1:
            raise FormErr("qdcount %d" % qd)
        labels, off = parse_name(msg, 12)
        if off + 4 > len(msg):
            raise FormErr("short question")
        qtype, qclass = struct.unpack("!HH", msg[off:off + 4])
    except FormErr:
        log_line("- MALFORMED %s" % client)
        return struct.pack("!HHHHHH", qid, 0x8400 | (flags & 0x7900) | 1, 0, 0, 0, 0), 0
    log_line("%s %s %s" % (name_text(labels), QTYPES.get(qtype, "TYPE%d" % qtype), client))
    question = encode_name(labels) + struct.pack("!HH", qtype, qclass)
    if flags & 0x7800:
        return hdr(RCODES["NOTIMP"], 0) + question, 0
    if qclass not in (1, 255):
        return hdr(RCODES["REFUSED"], 0) + question, 0
    try:
        rcode, ans, ent = answer(zone, labels, qtype)
    except (ValueError, TypeError, OSError, AttributeError) as e:
        print("dnsd: zone data error for %s: %s" % (name_text(labels), e), file=sys.stderr)
        rcode, ans, ent = RCODES["SERVFAIL"], [], {}
    if ent.get("drop"):
        return None, 0
    try:
        by_type = ent.get("delay_ms_by_type", {}).get(QTYPES.get(qtype, ""), 0)
        delay = max(0.0, float(ent.get("delay_ms", 0) or by_type) / 1000.0)
    except (TypeError, ValueError, AttributeError):
        delay = 0.0
    resp = hdr(rcode, len(ans)) + question + b"".join(ans)
    if ent.get("qr") is False:
        resp = resp[:2] + bytes([resp[2] & 0x7f]) + resp[3:]
    mode = ent.get("mode")
    if mode == "garbage":
        resp = msg[:2] + os.urandom(len(resp) - 2)
    elif mode == "truncate":
        body = b"".join(ans)
        base = 12 + len(question)
        resp = resp[:base + len(body) // 2] if body else resp[:12 + len(question) // 2]
    elif udp and len(resp) > 512:
        resp = hdr(rcode, 0, 0x0200) + question
    return resp, delay


def send_later(delay, fn, data):
    def go():
        try:
            fn(data)
        except OSError:
            pass
    if delay > 0:
        t = threading.Timer(delay, go)
        t.daemon = True
        t.start()
    else:
        go()


def serve_udp(sock, zone):
    while True:
        try:
            msg, peer = sock.recvfrom(65535)
        except OSError:
            time.sleep(0.05)
            continue
        try:
            resp, delay = handle(zone, msg, peer[0], True)
        except Exception as e:  # never die on one query
            print("dnsd: udp error: %r" % e, file=sys.stderr)
            continue
        if resp is not None:
            send_later(delay, lambda d, p=peer: sock.sendto(d, p), resp)


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def serve_tcp_conn(conn, peer, zone, slots):
    wlock = threading.Lock()

    def send(data):
        with wlock:
            conn.sendall(struct.pack("!H", len(data)) + data)
    try:
        conn.settimeout(30)
        for _ in range(100000):
            ln = recv_exact(conn, 2)
            msg = ln and recv_exact(conn, struct.unpack("!H", ln)[0])
            if msg is None:
                break
            resp, delay = handle(zone, msg, peer[0], False)
            if resp is not None:
                send_later(delay, send, resp)
    except Exception:
        pass
    finally:
        slots.release()
        # let delayed answers on this connection go out before closing
        t = threading.Timer(10, conn.close)
        t.daemon = True
        t.start()


def serve_tcp(sock, zone):
    slots = threading.BoundedSemaphore(MAX_TCP_CONNS)
    while True:
        slots.acquire()
        try:
            conn, peer = sock.accept()
        except OSError:
            slots.release()
            time.sleep(0.05)
            continue
        threading.Thread(target=serve_tcp_conn, args=(conn, peer, zone, slots), daemon=True).start()


def parse_listen(s):
    if s.startswith("["):
        host, _, rest = s[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else "53"
    elif s.count(":") == 1:
        host, port = s.split(":")
    else:
        host, port = s, "53"
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    socket.inet_pton(fam, host)
    return fam, host, int(port)


def main():
    global LOG
    ap = argparse.ArgumentParser(description="test DNS server")
    ap.add_argument("--listen", action="append", required=True)
    ap.add_argument("--zone", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--ready")
    ap.add_argument("--pidfile")
    a = ap.parse_args()
    if a.pidfile:
        with open(a.pidfile, "w") as f:
            f.write("%d\n" % os.getpid())
    zone = Zone(a.zone)
    LOG = open(a.log, "a", encoding="utf-8", errors="replace")

    def stop(*_):
        with LOG_LOCK:
            LOG.flush()
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    bound = []
    for spec in a.listen:
        try:
            fam, host, port = parse_listen(spec)
        except (ValueError, OSError):
            sys.exit("dnsd: bad --listen %r" % spec)
        for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
            s = socket.socket(fam, kind)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if fam == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                s.bind((host, port))
            except OSError as e:
                sys.exit("dnsd: bind %s: %s" % (spec, e))
            port = s.getsockname()[1]  # port 0: same port for TCP as for UDP
            if kind == socket.SOCK_STREAM:
                s.listen(64)
            bound.append("%s %s %d" % ("udp" if kind == socket.SOCK_DGRAM else "tcp", host, port))
            fn = serve_udp if kind == socket.SOCK_DGRAM else serve_tcp
            threading.Thread(target=fn, args=(s, zone), daemon=True).start()
    if a.ready:
        with open(a.ready + ".tmp", "w") as f:
            f.write("\n".join(bound) + "\n")
        os.rename(a.ready + ".tmp", a.ready)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
