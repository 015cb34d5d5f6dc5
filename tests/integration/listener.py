#!/usr/bin/env python3
"""listener.py - HTTP/1.1 (plain or TLS) or raw echo server that logs every byte.

CLI:
  listener.py --listen IP:PORT|[IPv6]:PORT --log FILE
              [--tls --cert CERT.pem --key KEY.pem] [--raw]
              [--ready FILE] [--pidfile FILE] [--name NAME]
  --ready    written (atomically) once listening: "IP PORT" (port 0 picks one).
  --name     used in bodies and X-Served-By; default the --listen text.
  Runs until SIGTERM/SIGINT, then exits 0 at once.

Log (FILE is created empty; nothing is written to it until a client comes):
  conn <peer-ip>:<port>    on accept, before any TLS handshake ([v6]:port)
  bytes <n>                every recv() chunk off the socket: raw wire bytes,
                           so with --tls it counts handshake/record bytes
  sni <name>               --tls: the server name the client sent, if any
  req <METHOD> <target>    each parsed HTTP request
Lines are flushed at once; a listener that received nothing has an empty log.

HTTP (unless --raw; keep-alive; request head <= 64 KiB, else 431; Content-Length
or chunked request bodies; Expect: 100-continue honoured; HTTP/1.0 or
"Connection: close" closes after the response). Routes (query string ignored,
absolute-form targets routed by their path, any method, HEAD sends no body):
  /                 200 "hello from NAME\\n"
  /redirect?to=URL  302, Location: URL (percent-decoded; everything after "to=")
  /status/NNN       status NNN (200-599), body "status NNN\\n" (none for 204/304)
  /bytes/N          N bytes of "x" (N <= 1 GiB), streamed in 64 KiB chunks
  /echo             the request body (<= 64 MiB, else 413)
  /headers          the request head exactly as received (request line, headers,
                    final blank line)
  /close            200 with Connection: close, then close
  other             404
Every response has Content-Length (except 204) and X-Served-By: NAME.
--raw: a TCP (or, with --tls, TLS) echo server: every byte read is sent back.
Up to 512 connections at once (further accepts wait); idle timeout 120 s.
"""
import argparse, os, signal, socket, ssl, sys, threading, time
from urllib.parse import unquote

MAX_HEAD, MAX_ECHO, MAX_BYTES, MAX_CONNS, IDLE = 64 << 10, 64 << 20, 1 << 30, 512, 120
REASONS = {200: "OK", 201: "Created", 204: "No Content", 301: "Moved Permanently", 302: "Found",
           304: "Not Modified", 307: "Temporary Redirect", 400: "Bad Request", 403: "Forbidden",
           404: "Not Found", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 413: "Content Too Large", 431: "Request Header Fields Too Large"}
LOG_LOCK = threading.Lock()
LOG = None


def log(text):
    with LOG_LOCK:
        LOG.write(text + "\n")
        LOG.flush()


class Closed(Exception):
    pass


class Conn:
    """A socket (optionally TLS through memory BIOs) that logs raw recv chunks."""

    def __init__(self, sock, ctx):
        self.sock, self.buf, self.tls = sock, bytearray(), None
        if ctx is not None:
            self.inc, self.out = ssl.MemoryBIO(), ssl.MemoryBIO()
            self.tls = ctx.wrap_bio(self.inc, self.out, server_side=True)
            self._tls_op(self.tls.do_handshake)

    def _raw_recv(self):
        data = self.sock.recv(65536)
        if data:
            log("bytes %d" % len(data))
        return data

    def _flush(self):
        pending = self.out.read()
        if pending:
            self.sock.sendall(pending)

    def _tls_op(self, op, *args):
        for _ in range(1 << 20):
            try:
                r = op(*args)
                self._flush()
                return r
            except ssl.SSLWantReadError:
                self._flush()
                data = self._raw_recv()
                if not data:
                    self.inc.write_eof()
                else:
                    self.inc.write(data)
        raise Closed()

    def recv(self):
        if self.tls is None:
            return self._raw_recv()
        try:
            return self._tls_op(self.tls.read, 65536)
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            return b""

    def sendall(self, data):
        if self.tls is None:
            self.sock.sendall(data)
            return
        view = memoryview(data)
        while view:
            n = self._tls_op(self.tls.write, view[:65536])
            view = view[n:]

    def close_notify(self):
        if self.tls is not None:
            try:
                self.tls.unwrap()
            except ssl.SSLError:
                pass
            self._flush()

    def fill(self):
        data = self.recv()
        if not data:
            raise Closed()
        self.buf += data

    def read_until(self, sep, limit):
        """Bytes up to and including sep; None if limit passes first."""
        while True:
            i = self.buf.find(sep)
            if i >= 0 and i + len(sep) <= limit:
                out = bytes(self.buf[:i + len(sep)])
                del self.buf[:i + len(sep)]
                return out
            if len(self.buf) > limit or i >= 0:
                return None
            self.fill()

    def read_exact(self, n, sink):
        while n > 0:
            if not self.buf:
                self.fill()
            take = min(n, len(self.buf))
            sink(bytes(self.buf[:take]))
            del self.buf[:take]
            n -= take


def read_body(conn, headers, sink):
    """Reads the request body into sink(bytes); ValueError on bad framing."""
    te = headers.get("transfer-encoding", "").lower()
    if te:
        if te.split(",")[-1].strip() != "chunked":
            raise ValueError("unsupported transfer-encoding")
        for _ in range(1 << 24):
            line = conn.read_until(b"\r\n", 8192)
            if line is None:
                raise ValueError("chunk size line too long")
            digits = line.split(b";")[0].strip()
            if not digits or len(digits) > 15 or digits.strip(b"0123456789abcdefABCDEF"):
                raise ValueError("bad chunk size")
            size = int(digits, 16)
            if size == 0:
                for _ in range(1000):  # trailers
                    t = conn.read_until(b"\r\n", 8192)
                    if t is None:
                        raise ValueError("trailer too long")
                    if t == b"\r\n":
                        return
                raise ValueError("too many trailers")
            conn.read_exact(size, sink)
            if conn.read_until(b"\r\n", 2) != b"\r\n":
                raise ValueError("chunk not followed by CRLF")
        raise ValueError("too many chunks")
    cl = headers.get("content-length")
    if cl is not None:
        if not (cl.isascii() and cl.isdigit()):
            raise ValueError("bad content-length")
        conn.read_exact(int(cl), sink)


def respond(conn, status, body=b"", close=False, ctype="text/plain", extra=(), head_only=False,
            length=None, stream=None):
    n = len(body) if length is None else length
    lines = ["HTTP/1.1 %d %s" % (status, REASONS.get(status, "Status")), "X-Served-By: " + NAME,
             "Content-Type: " + ctype, "Connection: " + ("close" if close else "keep-alive")]
    if status != 204:
        lines.append("Content-Length: %d" % n)
    lines += list(extra)
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    if head_only or status in (204, 304):
        return
    if stream:
        chunk = stream * (65536 // len(stream))
        while n > 0:
            conn.sendall(chunk[:min(n, len(chunk))])
            n -= min(n, len(chunk))
    elif body:
        conn.sendall(body)


def route(conn, method, target, head, headers, close):
    """Handles one request (body unread). Returns True to keep the connection."""
    path = target
    if not path.startswith("/") and "://" in path:
        path = "/" + path.split("://", 1)[1].partition("/")[2]
    path, _, query = path.partition("?")
    body = bytearray()

    def sink(data):
        if path == "/echo" and len(body) + len(data) <= MAX_ECHO:
            body.extend(data)
        elif path == "/echo":
            raise OverflowError()
    if "100-continue" in headers.get("expect", "").lower():
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    try:
        read_body(conn, headers, sink)
    except OverflowError:
        respond(conn, 413, b"request body too large\n", close=True)
        return False
    except ValueError as e:
        respond(conn, 400, ("bad request body: %s\n" % e).encode(), close=True)
        return False
    ho = method == "HEAD"
    parts = path.split("/")
    if path == "/":
        respond(conn, 200, ("hello from %s\n" % NAME).encode(), close, head_only=ho)
    elif path == "/redirect":
        to = unquote(query[3:]) if query.startswith("to=") else ""
        if not to or "\r" in to or "\n" in to:
            respond(conn, 400, b"need ?to=URL\n", close, head_only=ho)
        else:
            respond(conn, 302, ("redirecting to %s\n" % to).encode("utf-8", "replace"), close,
                    extra=["Location: " + to], head_only=ho)
    elif len(parts) == 3 and parts[1] == "status" and parts[2].isdigit() and 200 <= int(parts[2]) <= 599:
        respond(conn, int(parts[2]), ("status %s\n" % parts[2]).encode(), close, head_only=ho)
    elif len(parts) == 3 and parts[1] == "bytes" and parts[2].isdigit() and int(parts[2]) <= MAX_BYTES:
        respond(conn, 200, close=close, ctype="application/octet-stream", length=int(parts[2]),
                stream=b"x", head_only=ho)
    elif path == "/echo":
        respond(conn, 200, bytes(body), close, ctype="application/octet-stream", head_only=ho)
    elif path == "/headers":
        respond(conn, 200, head, close, head_only=ho)
    elif path == "/close":
        respond(conn, 200, b"closing\n", True, head_only=ho)
        return False
    else:
        respond(conn, 404, b"not found\n", close, head_only=ho)
    return not close


def serve_http(conn):
    for _ in range(1 << 20):
        try:
            head = conn.read_until(b"\r\n\r\n", MAX_HEAD)
        except Closed:
            return
        if head is None:
            respond(conn, 431, b"request head too large\n", close=True)
            return
        lines = head.decode("latin-1").split("\r\n")
        req = lines[0].split(" ")
        headers, ok = {}, len(req) == 3 and req[2].startswith("HTTP/1.")
        for h in lines[1:-2]:
            k, sep, v = h.partition(":")
            if not sep or not k or k != k.strip():
                ok = False
                break
            headers[k.lower()] = v.strip()
        if not ok:
            respond(conn, 400, b"malformed request\n", close=True)
            return
        log("req %s %s" % (req[0], req[1]))
        close = req[2] == "HTTP/1.0" or "close" in headers.get("connection", "").lower()
        if not route(conn, req[0], req[1], head, headers, close):
            return


def serve_raw(conn):
    for _ in range(1 << 30):
        data = conn.recv()
        if not data:
            return
        conn.sendall(data)


def handle(sock, ctx, raw, slots):
    try:
        sock.settimeout(IDLE)
        conn = Conn(sock, ctx)
        (serve_raw if raw else serve_http)(conn)
        conn.close_notify()
    except (Closed, OSError, ssl.SSLError, ValueError, UnicodeError):
        pass
    finally:
        try:  # lingering close: let the peer read our reply before any RST
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(1)
            for _ in range(64):
                data = sock.recv(65536)
                if not data:
                    break
                log("bytes %d" % len(data))
        except OSError:
            pass
        sock.close()
        slots.release()


def parse_listen(s):
    if s.startswith("["):
        host, _, port = s[1:].partition("]:")
    else:
        host, _, port = s.rpartition(":")
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    socket.inet_pton(fam, host)
    return fam, host, int(port)


def main():
    global LOG, NAME
    ap = argparse.ArgumentParser(description="logging HTTP/TLS/raw test listener")
    ap.add_argument("--listen", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--raw", action="store_true")
    ap.add_argument("--ready")
    ap.add_argument("--pidfile")
    ap.add_argument("--name")
    a = ap.parse_args()
    NAME = a.name or a.listen
    if a.pidfile:
        with open(a.pidfile, "w") as f:
            f.write("%d\n" % os.getpid())
    try:
        fam, host, port = parse_listen(a.listen)
    except (ValueError, OSError):
        sys.exit("listener: bad --listen %r" % a.listen)
    ctx = None
    if a.tls:
        if not (a.cert and a.key):
            sys.exit("listener: --tls needs --cert and --key")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
        ctx.set_alpn_protocols(["http/1.1"])
        ctx.sni_callback = lambda obj, name, c: log("sni %s" % name) if name else None
    LOG = open(a.log, "a", encoding="utf-8", errors="replace")

    def stop(*_):
        with LOG_LOCK:
            LOG.flush()
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    srv = socket.socket(fam, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if fam == socket.AF_INET6:
        srv.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    try:
        srv.bind((host, port))
        srv.listen(128)
    except OSError as e:
        sys.exit("listener: bind %s: %s" % (a.listen, e))
    if a.ready:
        with open(a.ready + ".tmp", "w") as f:
            f.write("%s %d\n" % (host, srv.getsockname()[1]))
        os.rename(a.ready + ".tmp", a.ready)
    slots = threading.BoundedSemaphore(MAX_CONNS)
    while True:
        slots.acquire()
        try:
            sock, peer = srv.accept()
        except OSError:
            slots.release()
            time.sleep(0.05)
            continue
        log("conn %s:%d" % ("[%s]" % peer[0] if fam == socket.AF_INET6 else peer[0], peer[1]))
        threading.Thread(target=handle, args=(sock, ctx, a.raw, slots), daemon=True).start()


if __name__ == "__main__":
    main()
