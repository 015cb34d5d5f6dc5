#!/usr/bin/env python3
"""faults_upstream.py - misbehaving upstreams for faults_test.sh (stdlib only).

  faults_upstream.py --listen IP:PORT --mode MODE --log FILE [--ready FILE]

Modes (one per process; every accepted connection gets its own thread):
  rst       reads what comes for 0.3 s, sends an HTTP head announcing
            1,000,000 bytes and 20,000 of them, waits 0.5 s, then closes
            with SO_LINGER 0: the peer gets a RST in the middle of the body.
  silent    accepts and never sends a byte (reads and discards, so it
            notices the peer going away).
  halfbody  reads one request head, answers 200 with Content-Length 100000,
            sends 50,000 body bytes, then closes normally (FIN).
  slowread  small receive buffer; reads 1 KiB every 50 ms (about 20 KiB/s).
  sink      reads as fast as it can and discards.

Log: "conn" on accept and "end <bytes read> <how>" when a connection ends,
one line each, flushed at once. --ready is written once listening.
"""
import argparse, os, socket, struct, sys, threading, time

LOCK = threading.Lock()
LOG = None


def log(line):
    with LOCK:
        LOG.write(line + "\n")
        LOG.flush()


def read_head(s, limit=65536):
    buf = b""
    while b"\r\n\r\n" not in buf and len(buf) < limit:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return buf


def serve(s, mode):
    got, how = 0, "eof"
    try:
        if mode == "rst":
            s.settimeout(0.3)
            try:
                got += len(s.recv(65536))
            except socket.timeout:
                pass
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + b"r" * 20000)
            time.sleep(0.5)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            how = "rst_sent"
        elif mode == "silent":
            s.settimeout(60)
            while True:
                d = s.recv(65536)
                if not d:
                    break
                got += len(d)
        elif mode == "halfbody":
            s.settimeout(10)
            got += len(read_head(s))
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n"
                      b"Content-Type: application/octet-stream\r\n\r\n" + b"h" * 50000)
            s.shutdown(socket.SHUT_WR)
            how = "half_sent"
            time.sleep(0.2)
        elif mode == "slowread":
            s.settimeout(60)
            while True:
                d = s.recv(1024)
                if not d:
                    break
                got += len(d)
                time.sleep(0.05)
        elif mode == "sink":
            s.settimeout(60)
            while True:
                d = s.recv(1 << 20)
                if not d:
                    break
                got += len(d)
    except socket.timeout:
        how = "timeout"
    except OSError as e:
        how = "error:%s" % e.__class__.__name__
    finally:
        s.close()
        log("end %d %s" % (got, how))


def main():
    global LOG
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--mode", required=True,
                    choices=["rst", "silent", "halfbody", "slowread", "sink"])
    ap.add_argument("--log", required=True)
    ap.add_argument("--ready")
    a = ap.parse_args()
    host, _, port = a.listen.rpartition(":")
    LOG = open(a.log, "a")
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if a.mode == "slowread":	# inherited by accepted sockets: a small window
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    srv.bind((host, int(port)))
    srv.listen(256)
    if a.ready:
        with open(a.ready + ".tmp", "w") as f:
            f.write("%s %s\n" % (host, port))
        os.rename(a.ready + ".tmp", a.ready)
    while True:
        try:
            s, _ = srv.accept()
        except OSError:
            time.sleep(0.05)
            continue
        log("conn")
        threading.Thread(target=serve, args=(s, a.mode), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
