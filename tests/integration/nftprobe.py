#!/usr/bin/env python3
"""Probes for the nftables fence (nft_test.sh, the conformance matrix).

  nftprobe.py dns-serve LOG READY   Docker's embedded resolver, stood in
      for: UDP on 127.0.0.11:40054 (answered), TCP on 127.0.0.11:40053; one
      log line per query. Runs at most 600 s.
  nftprobe.py dns-query [UDP TCP]   queries 127.0.0.11:53 (or the resolver's
      real ports UDP and TCP, asked directly) over UDP and TCP; prints
      "udp answered|refused tcp connected|refused".
  nftprobe.py nd DST                a neighbour solicitation carrying data,
      hop limit 255, from a raw socket to DST (needs CAP_NET_RAW).
  nftprobe.py rthdr DST PORT VIA    TCP connect to DST with an IPv6 segment
      routing header whose next segment is VIA (unprivileged): the packet
      leaves addressed to VIA, port PORT.
  nftprobe.py lsrr DST PORT VIA     the same with an IPv4 LSRR option
      (needs CAP_NET_RAW).
  nftprobe.py spoof6 SRC DST PORT   TCP connect to DST from a source that is
      not this namespace's own, bound with IPV6_FREEBIND (unprivileged).
  nftprobe.py spoof4 SRC DST PORT   one TCP SYN from SRC on a raw socket
      (needs CAP_NET_RAW).
  nftprobe.py fsuid UID DST PORT    setfsuid(UID) around socket(), then a
      TCP connect to DST (needs CAP_SETUID); prints "reached" or "blocked".
  nftprobe.py origdst-serve ADDR PORT LOG READY   transparent-mode listener
      (TCP, IPv4 or IPv6): per connection one log line "conn PEER orig
      DST" with DST from getsockopt SO_ORIGINAL_DST (IPv6: its sibling
      IP6T_SO_ORIGINAL_DST), then an HTTP/1.0 200 whose body says the same.
      Runs at most 600 s.
  nftprobe.py udp-serve ADDR PORT LOG READY   UDP: one log line "dgram PEER"
      per datagram, answered with the datagram (a DNS-shaped reply).
  nftprobe.py udp DST PORT          one DNS-shaped datagram to DST:PORT;
      prints "udp answered|refused|silent" (1 s).
Several probes in one process (each process start costs on a loaded
machine): separate them with "--". "as UID PROBE..." runs one probe as UID
(no groups, in a child process).
Every wait is bounded; send errors are ignored (the counters tell).
"""
import os
import select
import socket
import struct
import sys
import time

QUERY = bytes.fromhex("123401000001000000000000076578616d706c6503636f6d0000010001")


def dns_serve(log_path, ready):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.11", 40054))
    t = socket.socket()
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.bind(("127.0.0.11", 40053))
    t.listen(8)
    log = open(log_path, "a")
    open(ready, "w").write("ready\n")
    end = time.time() + 600
    while time.time() < end:
        r, _, _ = select.select([u, t], [], [], 1)
        for s in r:
            if s is u:
                d, peer = u.recvfrom(4096)
                log.write("udp query from %s:%d\n" % peer)
                u.sendto(d[:2] + b"\x81\x80" + d[4:], peer)
            else:
                c, peer = t.accept()
                log.write("tcp connection from %s:%d\n" % peer)
                c.close()
            log.flush()


def dns_query(uport=53, tport=53):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    try:
        s.sendto(QUERY, ("127.0.0.11", int(uport)))
        s.recv(512)
        u = "answered"
    except OSError:
        u = "refused"
    t = socket.socket()
    t.settimeout(1)
    try:
        t.connect(("127.0.0.11", int(tport)))
        c = "connected"
    except OSError:
        c = "refused"
    print("udp %s tcp %s" % (u, c))


SO_ORIGINAL_DST = 80		# linux/netfilter_ipv4.h, and IP6T_ for IPv6


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def original_dst(c, fam):
    if fam == socket.AF_INET:
        raw = c.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
        port = struct.unpack("!H", raw[2:4])[0]
        return "%s:%d" % (socket.inet_ntop(socket.AF_INET, raw[4:8]), port)
    raw = c.getsockopt(socket.IPPROTO_IPV6, SO_ORIGINAL_DST, 28)
    port = struct.unpack("!H", raw[2:4])[0]
    return "[%s]:%d" % (socket.inet_ntop(socket.AF_INET6, raw[8:24]), port)


def serve(kind, addr, port, log_path, ready):
    fam = family(addr)
    s = socket.socket(fam, socket.SOCK_STREAM if kind == "tcp" else
                      socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, int(port)))
    if kind == "tcp":
        s.listen(16)
    log = open(log_path, "a")
    open(ready, "w").write("ready\n")
    end = time.time() + 600
    while time.time() < end:
        r, _, _ = select.select([s], [], [], 1)
        if not r:
            continue
        if kind == "udp":
            d, peer = s.recvfrom(4096)
            log.write("dgram %s:%d\n" % peer[:2])
            log.flush()
            s.sendto(d[:2] + b"\x81\x80" + d[4:], peer)
            continue
        c, peer = s.accept()
        try:
            orig = original_dst(c, fam)
        except OSError as e:
            orig = "none (%s)" % e.strerror
        log.write("conn %s:%d orig %s\n" % (peer[0], peer[1], orig))
        log.flush()
        body = ("transparent orig %s\n" % orig).encode()
        c.settimeout(1)
        try:
            c.recv(4096)
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n"
                      % len(body) + body)
        except OSError:
            pass
        c.close()


def udp_probe(dst, port):
    s = socket.socket(family(dst), socket.SOCK_DGRAM)
    s.settimeout(1)
    try:
        s.sendto(QUERY, (dst, int(port)))
        s.recv(512)
        print("udp answered")
    except socket.timeout:
        print("udp silent")
    except OSError:
        print("udp refused")


def csum(b):
    b += b"\0" * (len(b) % 2)
    n = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while n >> 16:
        n = (n & 0xffff) + (n >> 16)
    return ~n & 0xffff


def connect(s, dst):
    s.settimeout(0.5)
    try:
        s.connect(dst)
    except OSError:
        pass


def probe(argv):
    cmd = argv[0]
    if cmd == "as":
        pid = os.fork()
        if pid == 0:
            uid = int(argv[1])
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            probe(argv[2:])
            sys.stdout.flush()
            os._exit(0)
        os.waitpid(pid, 0)
    elif cmd == "dns-serve":
        dns_serve(argv[1], argv[2])
    elif cmd == "dns-query":
        dns_query(*argv[1:3])
    elif cmd == "origdst-serve":
        serve("tcp", *argv[1:5])
    elif cmd == "udp-serve":
        serve("udp", *argv[1:5])
    elif cmd == "udp":
        udp_probe(argv[1], argv[2])
    elif cmd == "nd":
        s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 255)
        tgt = socket.inet_pton(socket.AF_INET6, argv[1])
        try:
            s.sendto(bytes([135, 0, 0, 0, 0, 0, 0, 0]) + tgt + b"exfiltrated-data",
                     (argv[1], 0))
        except OSError:
            pass
    elif cmd == "rthdr":
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        # type 4 (segment routing), two segments, segments left 1: the
        # kernel puts DST in segment 0 and sends to segment 1
        srh = struct.pack("!BBBBBBH", 0, 4, 4, 1, 1, 0, 0) + \
            socket.inet_pton(socket.AF_INET6, argv[1]) + \
            socket.inet_pton(socket.AF_INET6, argv[3])
        s.setsockopt(socket.IPPROTO_IPV6, 57, srh)  # IPV6_RTHDR
        connect(s, (argv[1], int(argv[2])))
    elif cmd == "lsrr":
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # NOP, then LSRR (length 7, pointer 4) through VIA
        s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS,
                     bytes([1, 131, 7, 4]) + socket.inet_aton(argv[3]))
        connect(s, (argv[1], int(argv[2])))
    elif cmd == "spoof6":
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_IPV6, 78, 1)	# IPV6_FREEBIND
        s.bind((argv[1], 31337))
        connect(s, (argv[2], int(argv[3])))
    elif cmd == "spoof4":
        src, dst = socket.inet_aton(argv[1]), socket.inet_aton(argv[2])
        tcp = struct.pack("!HHIIBBHHH", 31337, int(argv[3]), 1, 0, 5 << 4, 0x02,
                          65535, 0, 0)
        pseudo = src + dst + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
        tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0, 64,
                         socket.IPPROTO_TCP, 0, src, dst)
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        try:
            s.sendto(ip + tcp, (argv[2], 0))
        except OSError:
            pass
    elif cmd == "fsuid":
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.setfsuid(int(argv[1]))
        s = socket.socket()		# owned by the fsuid
        libc.setfsuid(0)
        s.settimeout(2)
        try:
            s.connect((argv[2], int(argv[3])))
            print("reached")
        except OSError:
            print("blocked")
    else:
        sys.exit("unknown probe " + cmd)


def main():
    cur = []
    for a in sys.argv[1:] + ["--"]:
        if a == "--":
            if cur:
                probe(cur)
            cur = []
        else:
            cur.append(a)


if __name__ == "__main__":
    main()
