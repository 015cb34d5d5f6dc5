#!/usr/bin/env python3
"""keepalive.py - kept-alive absolute-form HTTP through the guard, byte-exact.

  keepalive.py serve --listen IP:PORT --dir DIR --name NAME --ready FILE
      A recording HTTP/1.1 upstream. Every accepted connection gets a number
      N (per NAME, from 0) and DIR/NAME-N.bin holds exactly the bytes it
      received, appended as they arrive; DIR/NAME-N.eof appears once the
      peer closed. It parses requests strictly (Content-Length or chunked;
      anything else: 400 and close) and answers, by path:
        /chunked     200, Transfer-Encoding: chunked, body "hello, world"
                     (with a chunk extension and a trailer)
        /early100    a 100 Continue, then 200
        /chunked-cut 200, chunked, closed in the middle of a chunk
        /slow-chunked 200, chunked: "hello", then the last chunk 3 s later
        /te-gzip     200, Transfer-Encoding: gzip, close-delimited
        /extra       200 "ok", then an unasked "HTTP/1.1 200 ... EVIL" in
                     the same write
        /extra-late  200 "ok", then the same unasked response 0.3 s later
      After the unasked bytes of /extra and /extra-late, DIR/NAME-N.extra
      appears: the client waits for it before its next request.
        other        200 "conn=N req=J method=M body=LEN"
      Expect: 100-continue is answered with 100 before the body is read.
      Runs until SIGTERM.

  keepalive.py cases --proxy IP:PORT --dir DIR --direct IP:PORT --policy FILE
                     --guard-pid PID --control SOCK [--only NAME,...]
      Runs every case against the guard at --proxy and prints one line per
      case: "PASS name" or "FAIL name: why". --direct is the recorder for
      the control that sends straight to it (not through the guard).
      --policy, --guard-pid and --control (the guard's control socket,
      where GET /v1/policy says which epoch is active) are for the case
      that changes the policy and puts it back.

Origins of the cases: L = 198.18.1.10:8080 (admitted IP literal), N =
api.example.test:8080 (admitted name, same address), L6 =
[2001:2:0:1::10]:8080 (admitted IPv6 literal), L2 = 198.18.1.10:8081
(another recorder), E = 198.18.1.10:7 (an echo listener, for CONNECT).
"""
import argparse, json, os, re, signal, socket, sys, threading, time

L, N, L2, N2 = "198.18.1.10:8080", "api.example.test:8080", "198.18.1.10:8081", \
    "api2.example.test:8080"
L6 = "[2001:2:0:1::10]:8080"
SECRET = b"c2VjcmV0"   # base64 "secret": must never reach an upstream
EVIL = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL"
TIMEOUT = 4


# ------------------------------------------------------------ the upstream
class Rec:
    def __init__(self, sock, path):
        self.sock, self.buf, self.f = sock, bytearray(), open(path + ".bin", "ab", buffering=0)
        self.path = path

    def fill(self):
        d = self.sock.recv(65536)
        if not d:
            open(self.path + ".eof", "w").close()
            raise EOFError()
        self.f.write(d)
        self.buf += d

    def until(self, sep, limit):
        for _ in range(100000):
            i = self.buf.find(sep)
            if 0 <= i <= limit:
                out = bytes(self.buf[:i + len(sep)])
                del self.buf[:i + len(sep)]
                return out
            if len(self.buf) > limit:
                raise ValueError("line too long")
            self.fill()
        raise ValueError("too many reads")

    def exact(self, n):
        while len(self.buf) < n:
            self.fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out


def read_body(rec, hdrs):
    te, cl = hdrs.get("transfer-encoding"), hdrs.get("content-length")
    if te is not None:
        if cl is not None or te.lower() != "chunked":
            raise ValueError("framing")
        body = b""
        for _ in range(10000):
            line = rec.until(b"\r\n", 4096)[:-2]
            size = line.split(b";")[0]
            if not re.fullmatch(rb"[0-9a-fA-F]{1,8}", size):
                raise ValueError("chunk size")
            n = int(size, 16)
            if n == 0:
                while rec.until(b"\r\n", 4096) != b"\r\n":
                    pass
                return body
            body += rec.exact(n)
            if rec.exact(2) != b"\r\n":
                raise ValueError("chunk end")
        raise ValueError("chunks")
    if cl is not None:
        if not re.fullmatch(r"[0-9]{1,9}", cl):
            raise ValueError("content-length")
        return rec.exact(int(cl))
    return b""


def big(n):
    """n bytes of a position-dependent pattern: a lost, doubled or
    reordered block shows."""
    return b"".join(b"%015d\n" % i for i in range(0, n, 16))[:n]


def serve_conn(sock, path, idx):
    rec = Rec(sock, path)
    try:
        for j in range(1, 10000):
            head = rec.until(b"\r\n\r\n", 65536).decode("latin-1")
            lines = head.split("\r\n")[:-2]
            m = re.fullmatch(r"([A-Z]+) (/\S*) HTTP/1\.([01])", lines[0])
            hdrs = {}
            for h in lines[1:]:
                k, sep, v = h.partition(":")
                if not sep or not re.fullmatch(r"[A-Za-z0-9-]+", k) or k.lower() in hdrs:
                    m = None
                    break
                hdrs[k.lower()] = v.strip(" \t")
            if m is None:
                raise ValueError("request head")
            method, target = m.group(1), m.group(2)
            if hdrs.get("expect", "").lower() == "100-continue":
                sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = read_body(rec, hdrs)
            close = m.group(3) == "0" or "close" in hdrs.get("connection", "").lower()
            conn = b"Connection: close\r\n" if close else b""
            if method == "HEAD":
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n" + conn + b"\r\n")
            elif target == "/chunked":
                sock.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n" + conn +
                             b"\r\n5\r\nhello\r\n7;x=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n")
            elif target == "/early100":
                sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n" + conn + b"\r\nfinal")
            elif target == "/chunked-cut":
                sock.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"5\r\nhello\r\n10\r\nabc")
                return	# the close (FIN) cuts the body short
            elif target == "/slow-chunked":
                sock.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"5\r\nhello\r\n")
                time.sleep(3)
                sock.sendall(b"0\r\n\r\n")
            elif target == "/te-gzip":
                sock.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nnot-gzip")
                return
            elif target.startswith("/big/"):
                b = big(int(target[5:]))
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n" % len(b) + conn +
                             b"\r\n" + b)
            elif target == "/extra":
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + EVIL)
                open(path + ".extra", "w").close()
            elif target == "/extra-late":
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                time.sleep(0.3)
                sock.sendall(EVIL)
                open(path + ".extra", "w").close()
            else:
                b = ("conn=%d req=%d method=%s body=%d" % (idx, j, method, len(body))).encode()
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n" % len(b) + conn +
                             b"\r\n" + b)
            if close:
                return
    except (EOFError, OSError, ValueError) as e:
        if not isinstance(e, EOFError):
            try:
                sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                             b"Connection: close\r\n\r\n")
            except OSError:
                pass
    finally:
        try:
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(1)
            while rec.sock.recv(65536):
                pass
        except OSError:
            pass
        sock.close()


def serve(a):
    host, _, port = a.listen.rpartition(":")
    host = host.strip("[]")
    srv = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, int(port)))
    srv.listen(64)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    with open(a.ready + ".tmp", "w") as f:
        f.write("ok\n")
    os.rename(a.ready + ".tmp", a.ready)
    for idx in range(100000):
        sock, _ = srv.accept()
        sock.settimeout(30)
        path = os.path.join(a.dir, "%s-%04d" % (a.name, idx))
        open(path + ".bin", "wb").close()
        threading.Thread(target=serve_conn, args=(sock, path, idx), daemon=True).start()


# ------------------------------------------------------------- the client
class Fail(Exception):
    pass


def H(name, value, strip=False):
    return (name, value, strip)


def req(method, origin, path, headers=(), body=b"", ver="1.1", host=True):
    """(bytes the client sends, bytes the upstream must receive)."""
    cl = "%s http://%s%s HTTP/%s\r\n" % (method, origin, path, ver)
    up = "%s %s HTTP/1.1\r\nHost: %s\r\n" % (method, path, origin)
    if host:
        cl += "Host: %s\r\n" % origin
    for name, value, strip in headers:
        cl += "%s: %s\r\n" % (name, value)
        if not strip:
            up += "%s: %s\r\n" % (name, value)
    up += "Via: 1.1 egress-guard\r\n\r\n"
    return (cl + "\r\n").encode() + body, up.encode() + body


PA = H("Proxy-Authorization", "Basic " + SECRET.decode(), True)
PC = H("Proxy-Connection", "keep-alive", True)


def chunked(*parts, trailer=b""):
    out = b""
    for p in parts:
        out += b"%x\r\n%s\r\n" % (len(p), p)
    return out + b"0\r\n" + trailer + b"\r\n"


class Client:
    def __init__(self, proxy):
        host, _, port = proxy.rpartition(":")
        self.s = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        self.buf = b""

    def send(self, b):
        self.s.sendall(b)

    def fill(self):
        try:
            d = self.s.recv(65536)
        except socket.timeout:
            raise Fail("timed out waiting for the guard")
        except ConnectionResetError:
            d = b""
        if not d:
            raise EOFError()
        self.buf += d

    def take(self, n):
        while len(self.buf) < n:
            self.fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        out, _, self.buf = self.buf.partition(b"\r\n")
        return out

    def response(self, head=False):
        """(status, {lower name: value}, body as sent on the wire)"""
        try:
            status = int(self.line().split(b" ")[1])
            hdrs = {}
            for _ in range(200):
                ln = self.line()
                if not ln:
                    break
                k, _, v = ln.partition(b":")
                hdrs[k.decode().lower()] = v.strip().decode()
            if head or status < 200 or status in (204, 304):
                return status, hdrs, b""
            if "content-length" in hdrs:
                return status, hdrs, self.take(int(hdrs["content-length"]))
            if hdrs.get("transfer-encoding", "").lower() == "chunked":
                raw = b""
                while True:
                    ln = self.line()
                    raw += ln + b"\r\n"
                    n = int(ln.split(b";")[0], 16)
                    if n == 0:
                        while True:
                            t = self.line()
                            raw += t + b"\r\n"
                            if not t:
                                return status, hdrs, raw
                    raw += self.take(n + 2)
            body = self.buf
            self.buf = b""
            try:
                while True:
                    self.fill()
                    body += self.buf
                    self.buf = b""
            except EOFError:
                return status, hdrs, body
        except EOFError:
            raise Fail("connection closed before a whole response")
        except (ValueError, IndexError):
            raise Fail("malformed response from the guard")

    def ok(self, want_body=None, head=False):
        st, hdrs, body = self.response(head)
        if st != 200:
            raise Fail("status %d %r, wanted 200" % (st, body[:80]))
        if want_body is not None and body != want_body:
            raise Fail("body %r, wanted %r" % (body[:120], want_body))
        return hdrs, body

    def closed(self):
        """True once the guard closed (bounded wait)."""
        try:
            self.s.settimeout(TIMEOUT)
            while True:
                self.fill()
        except EOFError:
            return True
        except Fail:
            return False


class Upstream:
    """What the recorders received since the case started."""

    def __init__(self, d):
        self.dir, self.before = d, set(os.listdir(d))

    def conns(self):
        names = sorted(n[:-4] for n in set(os.listdir(self.dir)) - self.before if n.endswith(".bin"))
        return names

    def streams(self):
        return [open(os.path.join(self.dir, n + ".bin"), "rb").read() for n in self.conns()]

    def expect(self, want, settle=0.3):
        """The new upstream connections received exactly want (a list of
        byte strings, one per connection, in accept order per recorder)."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if self.streams() == want:
                break
            time.sleep(0.05)
        time.sleep(settle)
        got = self.streams()
        for g in got:
            if SECRET in g or b"proxy-" in g.lower():
                raise Fail("Proxy-* header or its secret reached the upstream: %r" % g[:300])
        if got != want:
            raise Fail("upstream received %r, wanted %r" % (got, want))

    def eof(self, conn, wait=TIMEOUT):
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if os.path.exists(os.path.join(self.dir, conn + ".eof")):
                return True
            time.sleep(0.05)
        return False


def expect_body(conn, j, method, n):
    return ("conn=%d req=%d method=%s body=%d" % (conn, j, method, n)).encode()


CASES = []


def case(name):
    def reg(fn):
        CASES.append((name, fn))
        return fn
    return reg


def origins(prefix):
    """Registers a case once per origin kind: literal and name."""
    def reg(fn):
        for tag, o in (("literal", L), ("name", N), ("literal6", L6)):
            CASES.append(("%s_%s" % (prefix, tag), lambda a, up, o=o, fn=fn: fn(a, up, o)))
        return fn
    return reg


def conn0(up, o=L):
    """The index of the next connection of the recorder serving o."""
    rec = "r6-" if o == L6 else "r8080-"
    return sum(1 for n in up.before if n.startswith(rec) and n.endswith(".bin"))


@origins("hostile_keepalive_second_and_third_bodies_exact_no_proxy_auth")
def _(a, up, o):
    k = conn0(up, o)
    long = b"L" * 700
    r = [req("GET", o, "/first"),
         req("POST", o, "/second", [PA, H("Content-Length", "5")], b"hello"),
         req("POST", o, "/third", [PA, PC, H("Content-Length", str(len(long)))], long)]
    c = Client(a.proxy)
    for j, (m, n) in enumerate((("GET", 0), ("POST", 5), ("POST", 700)), 1):
        c.send(r[j - 1][0])
        c.ok(expect_body(k, j, m, n))
    up.expect([b"".join(x[1] for x in r)])


@origins("hostile_keepalive_chunked_bodies_exact")
def _(a, up, o):
    k = conn0(up, o)
    b2 = chunked(b"hello", b" chunked", trailer=b"X-T: 1\r\n")
    b3 = b"4;ext=\"q\"\r\nwxyz\r\n0\r\n\r\n"
    r = [req("GET", o, "/"),
         req("POST", o, "/c2", [PA, H("Transfer-Encoding", "chunked")], b2),
         req("PUT", o, "/c3", [H("Transfer-Encoding", "chunked")], b3),
         req("GET", o, "/4")]
    c = Client(a.proxy)
    for j, (m, n) in enumerate((("GET", 0), ("POST", 13), ("PUT", 4), ("GET", 0)), 1):
        x = r[j - 1][0]
        if j == 2:	# the body in pieces, across reads
            c.send(x[:-len(b2)])
            for i in range(0, len(b2), 7):
                c.send(x[len(x) - len(b2) + i:len(x) - len(b2) + i + 7])
                time.sleep(0.01)
        else:
            c.send(x)
        c.ok(expect_body(k, j, m, n))
    up.expect([b"".join(x[1] for x in r)])


@origins("keepalive_expect_100_continue_bodies_exact")
def _(a, up, o):
    k = conn0(up, o)
    r = [req("GET", o, "/"),
         req("POST", o, "/e2", [PA, H("Expect", "100-continue"), H("Content-Length", "11")],
             b"hello world"),
         req("POST", o, "/e3", [H("Expect", "100-continue"), H("Transfer-Encoding", "chunked")],
             chunked(b"abc")),
         req("GET", o, "/4")]
    c = Client(a.proxy)
    c.send(r[0][0])
    c.ok(expect_body(k, 1, "GET", 0))
    for j in (2, 3):
        x, body = r[j - 1][0], (b"hello world" if j == 2 else chunked(b"abc"))
        c.send(x[:-len(body)])
        st, _, _ = c.response()
        if st != 100:
            raise Fail("request %d: %d before the body, wanted 100" % (j, st))
        c.send(body)
        c.ok(expect_body(k, j, "POST", 11 if j == 2 else 3))
    c.send(r[3][0])
    c.ok(expect_body(k, 4, "GET", 0))
    up.expect([b"".join(x[1] for x in r)])


@origins("keepalive_zero_length_and_head_bodies")
def _(a, up, o):
    k = conn0(up, o)
    r = [req("GET", o, "/"),
         req("POST", o, "/z", [PA, H("Content-Length", "0")]),
         req("POST", o, "/c0", [H("Transfer-Encoding", "chunked")], b"0\r\n\r\n"),
         req("HEAD", o, "/h"),
         req("POST", o, "/5", [H("Content-Length", "3")], b"abc")]
    c = Client(a.proxy)
    for j, (m, n) in enumerate((("GET", 0), ("POST", 0), ("POST", 0), ("HEAD", 0), ("POST", 3)), 1):
        c.send(r[j - 1][0])
        if m == "HEAD":
            c.ok(b"", head=True)
        else:
            c.ok(expect_body(k, j, m, n))
    up.expect([b"".join(x[1] for x in r)])


@origins("hostile_pipelined_in_one_write_bodies_exact")
def _(a, up, o):
    k = conn0(up, o)
    r = [req("GET", o, "/1", [PA]),
         req("POST", o, "/2", [PA, H("Content-Length", "5")], b"hello"),
         req("POST", o, "/3", [PA, H("Transfer-Encoding", "chunked")], chunked(b"abc", b"de")),
         req("POST", o, "/4", [PC, H("Content-Length", "4")], b"wxyz"),
         req("GET", o, "/5")]
    c = Client(a.proxy)
    c.send(b"".join(x[0] for x in r))
    for j, (m, n) in enumerate((("GET", 0), ("POST", 5), ("POST", 5), ("POST", 4), ("GET", 0)), 1):
        c.ok(expect_body(k, j, m, n))
    up.expect([b"".join(x[1] for x in r)])


@origins("hostile_hop_by_hop_stripped_on_every_request")
def _(a, up, o):
    k = conn0(up, o)
    hop = [PA, PC, H("Connection", "keep-alive, X-Secret", True), H("X-Secret", "leaked", True),
           H("Keep-Alive", "timeout=5", True), H("TE", "trailers", True),
           H("Proxy-Authenticate", "x", True), H("X-Keep", "yes")]
    r = [req("GET", o, "/%d" % j, hop) for j in (1, 2, 3)]
    c = Client(a.proxy)
    for j in (1, 2, 3):
        c.send(r[j - 1][0])
        c.ok(expect_body(k, j, "GET", 0))
    up.expect([b"".join(x[1] for x in r)])


def refused(a, up, o, bad, name_pipelined):
    """GET, GET, then a request the guard must refuse (400, close): the
    upstream sees the first two and nothing of the third."""
    k = conn0(up, o)
    r = [req("GET", o, "/1"), req("GET", o, "/2")]
    c = Client(a.proxy)
    if name_pipelined:
        c.send(r[0][0] + r[1][0] + bad)
    else:
        c.send(r[0][0])
    c.ok(expect_body(k, 1, "GET", 0))
    if not name_pipelined:
        c.send(r[1][0])
    c.ok(expect_body(k, 2, "GET", 0))
    if not name_pipelined:
        c.send(bad)
    st, _, _ = c.response()
    if st != 400:
        raise Fail("third request answered %d, wanted 400" % st)
    if not c.closed():
        raise Fail("connection left open after the refusal")
    up.expect([r[0][1] + r[1][1]])


SMUGGLE = {
    "cl_and_te": lambda o: req("POST", o, "/s", [H("Content-Length", "5"),
                                                H("Transfer-Encoding", "chunked")],
                               b"0\r\n\r\nGET /evil HTTP/1.1\r\n\r\n")[0],
    "two_content_lengths": lambda o: req("POST", o, "/s", [H("Content-Length", "5"),
                                                          H("Content-Length", "30")],
                                         b"helloGET /evil HTTP/1.1\r\n\r\n")[0],
    "obs_fold": lambda o: req("POST", o, "/s", [H("Content-Length", "5"),
                                               H("X-A", "a\r\n Transfer-Encoding: chunked")],
                              b"hello")[0],
    "te_not_final_chunked": lambda o: req("POST", o, "/s", [H("Transfer-Encoding",
                                                             "chunked, identity")],
                                          b"0\r\n\r\n")[0],
    "content_length_sign": lambda o: req("POST", o, "/s", [H("Content-Length", "+5")],
                                         b"hello")[0],
    "bare_lf_in_head": lambda o: b"POST http://%s/s HTTP/1.1\r\nHost: %s\nContent-Length: 5"
                                 b"\r\n\r\nhello" % (o.encode(), o.encode()),
}
for _sname in SMUGGLE:
    for _pipe in (0, 1):
        origins("hostile_%s_on_third_request_refused%s" % (_sname, "_pipelined" if _pipe else ""))(
            lambda a, up, o, s=_sname, p=_pipe: refused(a, up, o, SMUGGLE[s](o), p))


@origins("hostile_proxy_authorization_in_chunked_trailer_refused")
def _(a, up, o):
    # The chunked body goes upstream verbatim: a Proxy-* (or framing)
    # field in its trailer section would arrive there.
    k = conn0(up, o)
    r1 = req("GET", o, "/1")
    r2 = req("POST", o, "/2", [H("Transfer-Encoding", "chunked")],
             chunked(b"hello", trailer=b"Proxy-Authorization: Basic " + SECRET + b"\r\n"))
    c = Client(a.proxy)
    c.send(r1[0])
    c.ok(expect_body(k, 1, "GET", 0))
    c.send(r2[0])
    st, _, _ = c.response()
    if st != 400:
        raise Fail("answered %d, wanted 400" % st)
    if not c.closed():
        raise Fail("connection left open after the refusal")
    # The refusal comes while the body is read: the head went first
    # unless the whole request came in one read (then nothing did).
    head2 = r2[1][:r2[1].index(b"\r\n\r\n") + 4]
    try:
        up.expect([r1[1]])
    except Fail:
        up.expect([r1[1] + head2], settle=0)


@origins("hostile_body_overflow_is_the_next_request_rechecked")
def _(a, up, o):
    k = conn0(up, o)
    r = req("POST", o, "/1", [H("Content-Length", "5")], b"hello")
    nxt = req("GET", "other.example.test:8080", "/evil")[0]
    c = Client(a.proxy)
    c.send(r[0] + nxt)
    c.ok(expect_body(k, 1, "POST", 5))
    st, hdrs, _ = c.response()
    if st != 403 or hdrs.get("x-egress-guard-reason") != "not_allowlisted":
        raise Fail("the bytes after the body answered %d %s, wanted 403 not_allowlisted" %
                   (st, hdrs.get("x-egress-guard-reason")))
    up.expect([r[1]])


@case("hostile_other_origin_on_same_connection_gets_own_upstream")
def _(a, up):
    # Same address, three authorities, and back: four upstream connections.
    k = conn0(up)
    seq = [(L, "r8080", k), (N, "r8080", k + 1), (L2, "r8081", None), (L, "r8080", k + 2),
           (N2, "r8080", k + 3)]
    c = Client(a.proxy)
    want = {}
    for o, rec, idx in seq:
        x = req("POST", o, "/o", [PA, H("Content-Length", "2")], b"hi")
        c.send(x[0])
        hdrs, body = c.ok()
        if idx is not None and body != expect_body(idx, 1, "POST", 2):
            raise Fail("%s answered by %r: an upstream was reused across origins" % (o, body))
        want.setdefault(rec, []).append(x[1])
    up.expect(want["r8080"] + want["r8081"])	# file names sort r8080 first


@case("hostile_connect_after_pooled_upstream_closes_it")
def _(a, up):
    k = conn0(up)
    c = Client(a.proxy)
    c.send(req("GET", L, "/")[0])
    c.ok(expect_body(k, 1, "GET", 0))
    c.send(b"CONNECT 198.18.1.10:7 HTTP/1.1\r\nHost: 198.18.1.10:7\r\n\r\n")
    st, _, _ = c.response(head=True)
    if st != 200:
        raise Fail("CONNECT answered %d" % st)
    if not up.eof("r8080-%04d" % k):
        raise Fail("the pooled upstream stayed open under the tunnel")
    c.send(b"ping")
    if c.take(4) != b"ping":
        raise Fail("the tunnel did not echo")


def http10(a, up, o, path):
    c = Client(a.proxy)
    c.send(b"GET http://%s%s HTTP/1.0\r\nHost: %s\r\n\r\n" % (o.encode(), path, o.encode()))
    st, hdrs, body = c.response()
    return c, st, hdrs, body


@origins("hostile_http10_client_never_gets_chunked")
def _(a, up, o):
    c, st, hdrs, body = http10(a, up, o, b"/chunked")
    if st != 200 or "transfer-encoding" in hdrs or hdrs.get("connection") != "close" or \
            "content-length" in hdrs or body != b"hello, world":
        raise Fail("HTTP/1.0 client got %d %r %r" % (st, hdrs, body))


def expect_reset(c, got):
    """The guard ends the connection with a reset, not a clean close."""
    try:
        for _ in range(1000):
            d = c.s.recv(65536)
            if not d:
                raise Fail("clean close after %r: the cut looks like the end" % got)
            got += d
    except ConnectionResetError:
        return
    except socket.timeout:
        raise Fail("neither closed nor reset after %r" % got)


@origins("hostile_http10_client_truncated_chunked_body_ends_in_reset")
def _(a, up, o):
    # De-chunked, the body is delimited by the close: cut short upstream,
    # it must not end in a clean close the client takes for the end.
    c = Client(a.proxy)
    c.send(b"GET http://%s/chunked-cut HTTP/1.0\r\nHost: %s\r\n\r\n" % (o.encode(), o.encode()))
    expect_reset(c, b"")


@case("control_http11_client_gets_chunked_verbatim")
def _(a, up):
    c = Client(a.proxy)
    c.send(req("GET", L, "/chunked")[0])
    hdrs, body = c.ok(b"5\r\nhello\r\n7;x=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n")
    if hdrs.get("transfer-encoding") != "chunked" or "connection" in hdrs:
        raise Fail("HTTP/1.1 client got %r" % hdrs)


@origins("hostile_http10_client_never_gets_1xx")
def _(a, up, o):
    c, st, hdrs, body = http10(a, up, o, b"/early100")
    if st != 200 or body != b"final":
        raise Fail("HTTP/1.0 client got %d %r first" % (st, body))


@case("hostile_http10_client_transfer_coding_not_chunked_refused")
def _(a, up):
    c, st, hdrs, body = http10(a, up, L, b"/te-gzip")
    if st != 502 or "transfer-encoding" in hdrs:
        raise Fail("HTTP/1.0 client got %d %r" % (st, hdrs))


def extra(a, up, o, path, pipelined):
    k = conn0(up, o)
    r = [req("GET", o, path), req("POST", o, "/2", [H("Content-Length", "2")], b"hi")]
    c = Client(a.proxy)
    c.send(r[0][0] + (r[1][0] if pipelined else b""))
    c.ok(b"ok")
    if not pipelined:
        # The next request only once the unasked bytes are on their way to
        # the guard (the recorder marks it after sending them), so that
        # they come before it, however late the recorder's thread runs.
        mark = os.path.join(a.dir, "%s-%04d.extra" % ("r6" if o == L6 else "r8080", k))
        deadline = time.monotonic() + TIMEOUT
        while not os.path.exists(mark):
            if time.monotonic() > deadline:
                raise Fail("the recorder never sent its unasked bytes (no %s)" % mark)
            time.sleep(0.01)
        c.send(r[1][0])
    c.ok(expect_body(k + 1, 1, "POST", 2))
    up.expect([r[0][1], r[1][1]])


for _p in (0, 1):
    origins("hostile_upstream_extra_bytes_not_the_next_answer%s" % ("_pipelined" if _p else ""))(
        lambda a, up, o, p=_p: extra(a, up, o, "/extra", p))
origins("hostile_upstream_late_extra_bytes_not_the_next_answer")(
    lambda a, up, o: extra(a, up, o, "/extra-late", 0))


@case("hostile_http10_client_revoked_mid_body_ends_in_reset")
def _(a, up):
    # A policy that no longer admits the origin closes the exchange in the
    # middle of a de-chunked body: that must not look like its end.
    pol = open(a.policy).read()
    epoch = int(re.search(r'"epoch": ([0-9]+)', pol).group(1))
    c = Client(a.proxy)
    c.send(b"GET http://%s/slow-chunked HTTP/1.0\r\nHost: %s\r\n\r\n" % (L.encode(), L.encode()))
    got = b""
    try:
        while b"hello" not in got:
            d = c.s.recv(65536)
            if not d:
                raise Fail("closed before the first chunk: %r" % got)
            got += d
        with open(a.policy + ".tmp", "w") as f:
            f.write(pol.replace('{"host": "198.18.1.10", "port": 8080}, ', "").replace(
                '"epoch": %d' % epoch, '"epoch": %d' % (epoch + 1)))
        os.rename(a.policy + ".tmp", a.policy)
        os.kill(a.guard_pid, signal.SIGHUP)
        expect_reset(c, got)
    finally:
        with open(a.policy + ".tmp", "w") as f:	# epochs only go up
            f.write(pol.replace('"epoch": %d' % epoch, '"epoch": %d' % (epoch + 2)))
        os.rename(a.policy + ".tmp", a.policy)
        os.kill(a.guard_pid, signal.SIGHUP)
        # The cases after this one need the old policy back: until the
        # guard says it is active.
        active = wait_epoch(a.control, epoch + 2)
    if active != epoch + 2:
        raise Fail("policy epoch %d not active 5 s after SIGHUP (active: %s)" %
                   (epoch + 2, active))


def active_epoch(control):
    """The epoch of the guard's active policy (GET /v1/policy on its control
    socket), None if it does not answer."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    try:
        s.connect(control)
        s.sendall(b"GET /v1/policy HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        buf = b""
        for _ in range(1000):
            d = s.recv(65536)
            if not d:
                break
            buf += d
        head, _, body = buf.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            return None
        return json.loads(body)["epoch"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    finally:
        s.close()


def wait_epoch(control, epoch, wait=5):
    """Polls the active epoch until it is epoch (at most wait s); returns
    the last one seen."""
    deadline, e = time.monotonic() + wait, None
    for _ in range(int(wait / 0.05) + 1):
        e = active_epoch(control)
        if e == epoch or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return e


@case("control_direct_to_upstream_proxy_auth_is_recorded")
def _(a, up):
    # Straight to the recorder, not through the guard: the check that no
    # Proxy-Authorization arrived can see one.
    host, _, port = a.direct.rpartition(":")
    s = socket.create_connection((host, int(port)), timeout=TIMEOUT)
    s.sendall(req("GET", L, "/", [PA])[0])
    s.recv(4096)
    s.close()
    try:
        up.expect([b""], settle=0.1)
    except Fail as e:
        if "Proxy-" in str(e):
            return
    raise Fail("the recorder's check did not see the Proxy-Authorization sent to it")


@origins("keepalive_megabytes_both_ways_to_a_slow_reader_exact")
def _(a, up, o):
    # Bodies far above the socket buffers and the guard's high water, and
    # a client that reads late: the guard's writes go out at once while
    # the socket takes them and wait for room when it does not (issue
    # 17), with nothing lost or reordered; then the next request on the
    # same connection.
    k = conn0(up, o)
    n = 3 * 1024 * 1024
    r = [req("POST", o, "/big/%d" % n, [H("Content-Length", str(n))], big(n)),
         req("GET", o, "/after")]
    c = Client(a.proxy)
    c.send(r[0][0])
    time.sleep(0.3)
    c.ok(big(n))
    c.send(r[1][0])
    c.ok(expect_body(k, 2, "GET", 0))
    up.expect([b"".join(x[1] for x in r)])


def cases(a):
    bad = 0
    only = set(a.only.split(",")) if a.only else None
    for name, fn in CASES:
        if (only and name not in only) or (not only and name.startswith("control_direct")):
            continue	# the direct control runs from where the recorder is reachable
        up = Upstream(a.dir)
        try:
            fn(a, up)
            print("PASS %s" % name)
        except (Fail, OSError) as e:
            print("FAIL %s: %s" % (name, e))
            bad += 1
        sys.stdout.flush()
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--listen", required=True)
    s.add_argument("--dir", required=True)
    s.add_argument("--name", required=True)
    s.add_argument("--ready", required=True)
    c = sub.add_parser("cases")
    c.add_argument("--proxy", required=True)
    c.add_argument("--dir", required=True)
    c.add_argument("--direct", required=True)
    c.add_argument("--only", default="")
    c.add_argument("--policy", required=True, help="the guard's --policy file")
    c.add_argument("--guard-pid", type=int, required=True)
    c.add_argument("--control", required=True, help="the guard's --control socket")
    a = ap.parse_args()
    if a.cmd == "serve":
        serve(a)
    else:
        sys.exit(cases(a))


if __name__ == "__main__":
    main()
