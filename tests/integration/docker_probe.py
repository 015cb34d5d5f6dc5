#!/usr/bin/env python3
"""docker_probe.py - the workload's side of tests/integration/docker_test.sh.

Run inside the workload container (python3 - ARGS < docker_probe.py). Each
probe prints one line "NAME ok|blocked DETAIL" and never waits longer than
--timeout seconds; "ok" means a packet got through and something answered.

  tcp IP PORT            connect()
  udp_dns IP PORT NAME   one DNS query for NAME (A) over UDP, any answer
  tcp_dns IP PORT NAME   the same over TCP
Several probes in one run: separate them with "+"; they run at once and
print in the order given.

  addr IFACE IP          add IP/32 to IFACE (label IFACE:eg), as `ip addr
                         add` would: needs CAP_NET_ADMIN in the container
                         (the tools image has no iproute2)
  route DST GW           a host route to DST via GW (`ip route add`)
Each prints "addr|route ok|blocked DETAIL" ("blocked": the kernel said no,
e.g. EPERM without CAP_NET_ADMIN). Within one run nothing is ordered: run
them before the probes that need them.

  tunnel PROXY_IP PROXY_PORT HOST PORT SECONDS
                         CONNECT through the proxy, then wait up to SECONDS
                         for the guard to close the tunnel: prints
                         "tunnel open" once it is up (flushed), then
                         "tunnel closed T" or "tunnel still-open"
"""
import fcntl, os, socket, struct, sys, threading, time

TIMEOUT = 3.0


def query(name):
    q = struct.pack(">HHHHHH", os.getpid() & 0xFFFF, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", 1, 1)


def attempt(kind, ip, port, exchange):
    """One socket of KIND to ip:port; EXCHANGE(sock) gives the detail of
    an answer. Any OSError (refused, unreachable, EPERM, timeout) is
    "blocked"."""
    s = socket.socket(socket.AF_INET, kind)
    s.settimeout(TIMEOUT)
    try:
        return exchange(s, (ip, int(port)))
    except OSError as e:
        return "blocked", type(e).__name__ + ":" + str(e.errno)
    finally:
        s.close()


def tcp(ip, port):
    def ex(s, addr):
        s.connect(addr)
        return "ok", "connected"
    return attempt(socket.SOCK_STREAM, ip, port, ex)


def udp_dns(ip, port, name):
    def ex(s, addr):
        s.sendto(query(name), addr)
        data = s.recv(4096)
        return "ok", "answer rcode=%d ancount=%d" % (data[3] & 15, struct.unpack(">H", data[6:8])[0])
    return attempt(socket.SOCK_DGRAM, ip, port, ex)


def tcp_dns(ip, port, name):
    def ex(s, addr):
        s.connect(addr)
        q = query(name)
        s.sendall(struct.pack(">H", len(q)) + q)
        data = s.recv(4096)
        if len(data) < 14:
            return "blocked", "closed without an answer"
        return "ok", "answer rcode=%d" % (data[5] & 15)
    return attempt(socket.SOCK_STREAM, ip, port, ex)


SIOCSIFADDR, SIOCSIFNETMASK, SIOCADDRT = 0x8916, 0x891C, 0x890B


def sockaddr_in(ip):
    # struct sockaddr_in, 16 bytes: family, port 0, address, zero pad.
    return struct.pack("=H2s4s8s", socket.AF_INET, b"", socket.inet_aton(ip), b"")


def net_ioctl(req, buf):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        fcntl.ioctl(s.fileno(), req, buf)
        return "ok", "done"
    except OSError as e:
        return "blocked", "%s:%s" % (type(e).__name__, e.errno)
    finally:
        s.close()


def addr(iface, ip):
    # struct ifreq: the name (IFNAMSIZ 16) then the address, 40 bytes.
    name = (iface + ":eg").encode()[:15]
    res = net_ioctl(SIOCSIFADDR, struct.pack("16s16s8s", name, sockaddr_in(ip), b""))
    if res[0] != "ok":
        return res
    return net_ioctl(SIOCSIFNETMASK, struct.pack("16s16s8s", name, sockaddr_in("255.255.255.255"), b""))


def route(dst, gw):
    # struct rtentry (x86-64): pad, dst, gateway, genmask, flags
    # RTF_UP|RTF_GATEWAY|RTF_HOST, pads, metric, dev NULL (the kernel
    # picks it by the gateway), mtu, window, irtt.
    rt = struct.pack("@L16s16s16sHhLPhPLLH", 0, sockaddr_in(dst), sockaddr_in(gw),
                     sockaddr_in("255.255.255.255"), 0x1 | 0x2 | 0x4, 0, 0, 0, 0, 0, 0, 0, 0)
    return net_ioctl(SIOCADDRT, rt)


def tunnel(pip, pport, host, port, secs):
    s = socket.create_connection((pip, int(pport)), timeout=TIMEOUT)
    s.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (host, port, host, port)).encode())
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 8192:
        chunk = s.recv(1024)
        if not chunk:
            break
        head += chunk
    if not head.startswith(b"HTTP/1.1 200"):
        print("tunnel refused", head.split(b"\r\n")[0].decode(errors="replace"), flush=True)
        return
    print("tunnel open", flush=True)
    t0 = time.monotonic()
    s.settimeout(float(secs))
    try:
        while True:
            if not s.recv(4096):
                break
    except socket.timeout:
        print("tunnel still-open", flush=True)
        return
    except OSError:
        pass
    print("tunnel closed %.1f" % (time.monotonic() - t0), flush=True)


def main():
    global TIMEOUT
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "--timeout":
        TIMEOUT = float(a[1])
        a = a[2:]
    if not a:
        sys.exit(__doc__)
    if a[0] == "tunnel":
        tunnel(*a[1:])
        return
    probes = [[]]
    for w in a:
        if w == "+":
            probes.append([])
        else:
            probes[-1].append(w)
    probes = [p for p in probes if p][:32]
    out = [None] * len(probes)

    def run(i, kind, args):
        try:
            res, detail = {"tcp": tcp, "udp_dns": udp_dns, "tcp_dns": tcp_dns,
                           "addr": addr, "route": route}[kind](*args)
        except (KeyError, TypeError, ValueError) as e:
            res, detail = "error", repr(e)
        out[i] = "%s %s %s" % (kind, res, detail)

    threads = [threading.Thread(target=run, args=(i, p[0], p[1:]), daemon=True)
               for i, p in enumerate(probes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT + 2)
    for line in out:
        print(line or "? error no result", flush=True)


if __name__ == "__main__":
    main()
