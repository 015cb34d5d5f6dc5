#!/usr/bin/env python3
"""mkcorpus.py - writes the checked-in seed corpus of the fuzz harnesses.

  python3 tests/fuzz/mkcorpus.py [--ctl build/egress-guardctl] [--only fuzz_receipt,...]

Rewrites tests/fuzz/corpus/<harness>/<name> for every harness it knows (or
those --only names; another harness's seeds are left alone): a handful of
valid inputs and the hostile cases the unit tests name, a few KB per
harness. Only needed when the seeds change; the files are checked in.

  fuzz_tlshello  real ClientHellos made by Python's ssl module (OpenSSL)
                 through a MemoryBIO, whole and re-split across records
  fuzz_dns       answers captured from tests/integration/dnsd.py, started
                 here on 127.0.0.1 (loopback only), plus hand-built
                 hostile messages (pointer loops, lengths past the end)
  fuzz_bundle    bundles signed with egress-guardctl sign by the fixed
                 fuzz key (FUZZ_SEED in fuzz_bundle.c: public, test only)
  fuzz_receipt   reports (v2) under the harness's suite (FUZZ_SUITE in
                 fuzzsuite.h), and receipts naming that suite's digest,
                 written canonically here (json.dumps) and signed with
                 `openssl pkeyutl -rawin` by the same key for an empty
                 binary: valid, hollow, stale, future, unknown-suite ones
  fuzz_suite     FUZZ_SUITE and refused variants of it; control evidences
"""
import argparse, base64, hashlib, json, os, shutil, socket, ssl, struct, subprocess
import sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")
FUZZ_SEED = b"egress-guard fuzz key, public!!!"
assert len(FUZZ_SEED) == 32


def write(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("latin-1")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def dest():
    seeds = {
        "name": "example.com:443", "name_upper_dot": "API.Example.COM.:8443",
        "ipv4": "198.18.1.10:80", "ipv6": "[2001:db8::1]:443",
        "ipv6_full": "[2001:0db8:0000:0000:0000:0000:0000:0001]:443",
        "short_ipv4": "127.1:80", "hex_ipv4": "0x7f.0.0.1:80",
        "octal_ipv4": "0177.0.0.1:80", "int_ipv4": "2130706433:80",
        "mapped": "[::ffff:127.0.0.1]:80", "zone": "[fe80::1%eth0]:80",
        "userinfo": "user@example.com:80", "percent": "exa%6dple.com:80",
        "wildcard": "*.example.com:443", "port_zero": "example.com:0",
        "port_lead0": "example.com:0443", "port_big": "example.com:65536",
        "bare_ipv6": "2001:db8::1:443", "underscore": "_srv.example.test:53",
        "long_label": "a" * 64 + ".example:80", "hexlabel": "example.0x1f:80",
        "host_only": "example.com", "bracket_ipv4": "[1.2.3.4]:80",
    }
    for k, v in seeds.items():
        write("fuzz_dest", k, v)


def http_head():
    seeds = {
        "get_absolute": "GET http://example.com/path?q=1 HTTP/1.1\r\n"
                        "Host: example.com\r\nUser-Agent: curl/7.88\r\n"
                        "Proxy-Authorization: Basic eDp4\r\n"
                        "Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\n"
                        "Accept: */*\r\n\r\n",
        "connect": "CONNECT api.example.test:443 HTTP/1.1\r\n"
                   "Host: api.example.test:443\r\n\r\n",
        "post_chunked": "POST http://[2001:db8::1]:8080 HTTP/1.1\r\n"
                        "Host: [2001:db8::1]:8080\r\n"
                        "Transfer-Encoding: gzip, chunked\r\nTE: trailers\r\n\r\n",
        "post_length": "POST http://a.test:8080/x HTTP/1.0\r\nContent-Length: 5\r\n"
                       "Connection: close\r\n\r\nhello",
        "smuggle_cl_te": "POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\n"
                         "Transfer-Encoding: chunked\r\n\r\n",
        "conn_names_cl": "POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\n"
                         "Connection: content-length\r\n\r\n",
        "host_mismatch": "GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n",
        "bare_lf": "GET http://a.test/ HTTP/1.1\nHost: a.test\n\n",
        "obs_fold": "GET http://a.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
        "https_abs": "GET https://a.test/ HTTP/1.1\r\n\r\n",
        "userinfo": "GET http://u:p@a.test/ HTTP/1.1\r\n\r\n",
        "resp_length": "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
                       "Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n",
        "resp_chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                        "Trailer: X-Sum\r\n\r\n",
        "resp_close": "HTTP/1.0 200\r\nServer:x\r\n\r\n",
        "resp_204": "HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n",
        "resp_101": "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
        "resp_gzip": "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        # Found by this harness (README.md): Connection naming a framing field.
        "resp_conn_names_cl": "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
                              "Connection: content-length\r\n\r\n",
    }
    for k, v in seeds.items():
        write("fuzz_http_head", k, v)


def chunked():
    # Two bytes of split seed, then the body.
    seeds = {
        "simple": "5\r\nhello\r\n0\r\n\r\n",
        "ext_trailer": "5;a=b;c=\"q\\\"x\"\r\nhello\r\n0;last\r\n"
                       "X-Sum: 1\r\nY:\t2 \r\n\r\nNEXT",
        "upper_hex": "A\r\n0123456789\r\n0\r\n\r\n",
        "bws": "5 ;a=b\r\nhello\r\n0\r\n\r\n",
        "bare_lf": "5\nhello\n0\n\n",
        "too_long_data": "3\r\nhello\r\n0\r\n\r\n",
        "huge_size": "7fffffffffffffff\r\nxx",
        "overflow_size": "10000000000000000\r\n",
        "neg": "-1\r\n",
        "hex_prefix": "0x5\r\nhello\r\n0\r\n\r\n",
        "te_list": "gzip, chunked",
        "te_twice": "chunked , chunked",
        "te_param": "chunked;q=1",
    }
    for i, (k, v) in enumerate(seeds.items()):
        write("fuzz_chunked", k, bytes([0x12, i]) + v.encode())


def socks5():
    req_dom = b"\x05\x01\x00\x03\x0bexample.com\x01\xbb"
    req_v4 = b"\x05\x01\x00\x01\xc6\x12\x01\x0a\x00\x50"
    req_v6 = b"\x05\x01\x00\x04" + socket.inet_pton(socket.AF_INET6, "2001:2:0:1::10") + b"\x01\xbb"
    seeds = {
        "greeting": b"\x05\x01\x00",
        "greeting_auth_only": b"\x05\x01\x02",
        "socks4": b"\x04\x01\x00\x50\x7f\x00\x00\x01\x00",
        "greet_req_domain": b"\x05\x02\x00\x02" + req_dom,
        "greet_req_v4": b"\x05\x01\x00" + req_v4,
        "greet_req_v6": b"\x05\x01\x00" + req_v6,
        "req_domain_v6literal": b"\x05\x01\x00\x03\x05[::1]\x00\x50",
        "req_domain_shortv4": b"\x05\x01\x00\x03\x05127.1\x00\x50",
        "req_bind": b"\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50",
        "req_port0": b"\x05\x01\x00\x01\x01\x02\x03\x04\x00\x00",
        "req_atyp9": b"\x05\x01\x00\x09",
        "req_mapped": b"\x05\x01\x00\x04" + b"\x00" * 10 + b"\xff\xff\x7f\x00\x00\x01\x00\x50",
    }
    for k, v in seeds.items():
        write("fuzz_socks5", k, v)


def client_hello(sni):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inb, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
    s = ctx.wrap_bio(inb, outb, server_hostname=sni)
    try:
        s.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outb.read()


def resplit(rec, cut):
    """The same handshake message in two records, cut at byte cut."""
    body = rec[5:]
    a, b = body[:cut], body[cut:]
    return (rec[:3] + struct.pack(">H", len(a)) + a +
            rec[:3] + struct.pack(">H", len(b)) + b)


def tlshello():
    ch = client_hello("api.example.test")
    noname = client_hello(None)
    ipname = client_hello("198.18.1.10")
    write("fuzz_tlshello", "sni", ch)
    write("fuzz_tlshello", "no_sni", noname)
    write("fuzz_tlshello", "ip_sni", ipname)
    write("fuzz_tlshello", "split_records", resplit(ch, 40))
    write("fuzz_tlshello", "truncated", ch[:60])
    write("fuzz_tlshello", "not_tls", "GET / HTTP/1.1\r\n\r\n")
    write("fuzz_tlshello", "sslv2", b"\x80\x2e\x01\x00\x02")
    # A record of another type in the middle of the ClientHello.
    r = resplit(ch, 40)
    write("fuzz_tlshello", "alert_inside", r[:45] + b"\x15" + r[46:])
    # A minimal hello with two server_name extensions.
    name = b"a.test"
    sn = struct.pack(">HBH", len(name) + 3, 0, len(name)) + name
    ext1 = struct.pack(">HH", 0, len(sn)) + sn
    exts = ext1 + ext1
    body = (b"\x03\x03" + b"\x00" * 32 + b"\x00" + b"\x00\x02\x13\x01" +
            b"\x01\x00" + struct.pack(">H", len(exts)) + exts)
    hs = b"\x01" + struct.pack(">I", len(body))[1:] + body
    write("fuzz_tlshello", "two_sni", b"\x16\x03\x01" + struct.pack(">H", len(hs)) + hs)
    # Issue 14's shapes: a leading alert, an odd record version, a hello
    # in one-byte records, an ECH extension.
    write("fuzz_tlshello", "leading_alert", b"\x15\x03\x01\x00\x02\x01\x5a" + ch)
    write("fuzz_tlshello", "record_version_0001", ch[:1] + b"\x00\x01" + ch[3:])
    write("fuzz_tlshello", "one_byte_records", b"".join(
        ch[:3] + b"\x00\x01" + ch[i:i + 1] for i in range(5, len(ch))))
    ech = struct.pack(">HH", 0xfe0d, 4) + b"\x00\x00\x01\x00"
    body2 = (b"\x03\x03" + b"\x00" * 32 + b"\x00" + b"\x00\x02\x13\x01" +
             b"\x01\x00" + struct.pack(">H", len(ext1) + len(ech)) + ext1 + ech)
    hs2 = b"\x01" + struct.pack(">I", len(body2))[1:] + body2
    write("fuzz_tlshello", "ech", b"\x16\x03\x01" + struct.pack(">H", len(hs2)) + hs2)


def policy():
    ex = open(os.path.join(TOP, "examples", "policy.json"), "rb").read()
    write("fuzz_policy", "compiled", ex)
    write("fuzz_policy", "profile", open(os.path.join(TOP, "examples", "profile.json"), "rb").read())
    seeds = {
        "none": '{"allow":[],"epoch":0,"mode":"none","schema":"egress-guard.policy.v1"}',
        "unrestricted": '{"allow":[],"epoch":9007199254740991,"mode":"unrestricted",'
                        '"schema":"egress-guard.policy.v1"}',
        "unsorted_dups": '{"schema":"egress-guard.policy.v1","mode":"allowlist","epoch":3,'
                         '"allow":[{"host":"B.test.","port":80},{"host":"[2001:DB8::1]","port":443},'
                         '{"host":"b.test","port":80},{"host":"1.2.3.4","port":1}]}',
        "dup_key": '{"allow":[],"allow":[],"epoch":0,"mode":"none","schema":"egress-guard.policy.v1"}',
        "wildcard": '{"network_policy":"allowlist","allowed_hosts":["*.example.com:443"]}',
        "profile_bad_entry": '{"network_policy":"allowlist","allowed_hosts":["127.1:80",'
                             '"example.com:0443"]}',
        "profile_none": '{"network_policy":"none"}',
        "profile_grade": '{"network_policy":"allowlist","allowed_hosts":["[::1]:8080"],'
                         '"required_egress_certification":"security_boundary"}',
        "unknown_key": '{"allow":[],"epoch":0,"mode":"none","schema":"egress-guard.policy.v1",'
                       '"extra":1}',
        "epoch_float": '{"allow":[],"epoch":1.0,"mode":"none","schema":"egress-guard.policy.v1"}',
        "nested": "[" * 200 + "]" * 200,
        "nul_escape": '{"network_policy":"allowlist","allowed_hosts":["a\\u0000b:80"]}',
    }
    # The profile abbreviations (expanded from the harness's own catalog)
    # and compiled policies that carry provenance.
    cat = ('"catalog":{"digest":"sha256:' + "0" * 64 + '","version":"fuzz"}')
    seeds.update({
        "profile_pm": '{"network_policy":"allowlist","allowed_hosts":["a.example:443",'
                      '"registry.npm.example.test:443"],"allow_package_managers":true,'
                      '"package_managers":["npm","pypi","go"],"allow_mcp_servers":true}',
        "profile_pm_unknown": '{"network_policy":"allowlist","allow_package_managers":true,'
                              '"package_managers":["npm","leftpad"]}',
        "profile_pm_twice": '{"network_policy":"allowlist","allow_package_managers":true,'
                            '"package_managers":["npm","npm"]}',
        "profile_pm_type": '{"network_policy":"allowlist","allow_package_managers":"yes",'
                           '"package_managers":"npm"}',
        "profile_mcp_alone": '{"network_policy":"allowlist","allow_mcp_servers":true}',
        "compiled_via": '{"allow":[{"host":"a.example","port":443},{"host":"pypi.example.test",'
                        '"port":443,"via":"package_managers:pypi"}],' + cat +
                        ',"epoch":7,"mode":"allowlist","schema":"egress-guard.policy.v1"}',
        "compiled_via_no_catalog": '{"allow":[{"host":"a.example","port":443,'
                                   '"via":"package_managers:npm"}],"epoch":7,"mode":"allowlist",'
                                   '"schema":"egress-guard.policy.v1"}',
        "compiled_via_profile": '{"schema":"egress-guard.policy.v1","mode":"allowlist","epoch":1,'
                                + cat + ',"allow":[{"host":"a.example","port":1,'
                                '"via":"package_managers:npm"},{"host":"a.example","port":1,'
                                '"via":"profile"}]}',
    })
    for k, v in seeds.items():
        write("fuzz_policy", k, v)


def catalog():
    write("fuzz_catalog", "example",
          open(os.path.join(TOP, "examples", "catalog.json"), "rb").read())
    head = '{"schema":"egress-guard.catalog.v1","version":"v1","ecosystems":'
    seeds = {
        "wildcard": head + '{"npm":["*.npm.example.test:443"]}}',
        "unknown_ecosystem": head + '{"leftpad":["a.example.test:443"]}}',
        "twice": head + '{"npm":["a.example.test:443","A.example.test.:443"]}}',
        "two_ecosystems": head + '{"npm":["a.example.test:443"],"pypi":["a.example.test:443"]}}',
        "ipv6": head + '{"go":["[2001:DB8::1]:443","[::1]:80"]}}',
        "empty": head + '{"npm":[]}}',
        "bad_version": '{"schema":"egress-guard.catalog.v1","version":"v 1","ecosystems":'
                       '{"npm":["a.example.test:443"]}}',
    }
    for k, v in seeds.items():
        write("fuzz_catalog", k, v)


def tspec():
    write("fuzz_tspec", "example",
          open(os.path.join(TOP, "examples", "tenant.json"), "rb").read())
    one = ('{"address":"10.81.1.1","dns_port":5353,"id":"a","link":"eg-a","max_conns":256,'
           '"max_dns":64,"peer":"10.81.1.2","port":3128,"transparent_port":0}')
    seeds = {
        "canonical": one,
        "ipv6": '{"id":"b","link":"eg-b","address":"fd77::1","peer":"fd77::2","port":3128}',
        "ipv6_upper": '{"id":"b","link":"eg-b","address":"FD77::1","peer":"fd77::2","port":3128}',
        "same_ports": '{"id":"c","link":"c0","address":"10.0.0.1","peer":"10.0.0.2","port":53,"dns_port":53}',
        "duplicate_key": '{"id":"a","id":"b","link":"l","address":"10.0.0.1","peer":"10.0.0.2","port":1}',
        "list": '{"schema":"egress-guard.tenants.v1","tenants":[' + one + ',' +
                one.replace('"id":"a"', '"id":"b"').replace('eg-a', 'eg-b') + ']}',
        "list_same_link": '{"schema":"egress-guard.tenants.v1","tenants":[' + one + ',' +
                          one.replace('"id":"a"', '"id":"b"') + ']}',
        "list_empty": '{"schema":"egress-guard.tenants.v1","tenants":[]}',
    }
    for k, v in seeds.items():
        write("fuzz_tspec", k, v)


def fuzz_key(tmp):
    """The fixed fuzz key as a PKCS#8 PEM file in tmp; returns its path."""
    der = bytes.fromhex("302e020100300506032b657004220420") + FUZZ_SEED
    key = os.path.join(tmp, "fuzz.pem")
    with open(key, "w") as f:
        f.write("-----BEGIN PRIVATE KEY-----\n" +
                base64.b64encode(der).decode() + "\n-----END PRIVATE KEY-----\n")
    return key


def bundle(ctl):
    tmp = tempfile.mkdtemp(prefix="egfuzz.")
    try:
        key = fuzz_key(tmp)
        pol = os.path.join(TOP, "examples", "policy.json")
        out = subprocess.run([ctl, "sign", pol, "--key", key], check=True,
                             capture_output=True).stdout.strip()
        b = json.loads(out)
        even = lambda s: b"\x00" + (s if isinstance(s, bytes) else s.encode())
        write("fuzz_bundle", "signed", even(out))
        bad = dict(b)
        sig = bad["signature"]
        bad["signature"] = sig[:10] + ("a" if sig[10] != "a" else "b") + sig[11:]
        write("fuzz_bundle", "bad_signature", even(json.dumps(bad, separators=(",", ":"))))
        unk = dict(b)
        unk["key_id"] = "0" * 64
        write("fuzz_bundle", "unknown_key", even(json.dumps(unk, separators=(",", ":"))))
        nc = dict(b)
        nc["policy"] = nc["policy"].rstrip("=") + "\n"
        write("fuzz_bundle", "bad_base64", even(json.dumps(nc)))
        write("fuzz_bundle", "dup_key", even(out[:-1] + b',"schema":"x"}'))
        write("fuzz_bundle", "not_object", even("[1,2,3]"))
        # Odd first byte: policy bytes the harness signs itself.
        write("fuzz_bundle", "sign_canonical", b"\x01" + open(pol, "rb").read().strip())
        write("fuzz_bundle", "sign_noncanonical",
              b"\x01" + b'{"schema":"egress-guard.policy.v1","mode":"allowlist","epoch":2,'
              b'"allow":[{"host":"B.test","port":80},{"host":"a.test","port":443}]}')
        write("fuzz_bundle", "sign_none",
              b"\x03" + b'{"allow":[],"epoch":0,"mode":"none","schema":"egress-guard.policy.v1"}')
    finally:
        shutil.rmtree(tmp)


FACTS = ["exact_destination_match", "connect_time_public_address",
         "redirect_recheck", "authority_separation", "default_deny"]
SHA_EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
# Evidence of each kind, as the harness side writes it (spec29).
EVIDENCE = {"listener": "listener pub80: 1 connection, 78 bytes",
            "resolver": "resolver dns198: 2 queries",
            "socket": "socket A.sock: 1 connection",
            "counter": "counter in-icmp: 1 packet",
            "process": "process 4242: CapEff 000001ffffffffff"}


def fuzz_suite():
    """FUZZ_SUITE's bytes, read from tests/fuzz/fuzzsuite.h (its string
    pieces joined; only \" escapes), and the suite it parses to."""
    import re
    text = open(os.path.join(HERE, "fuzzsuite.h")).read()
    body = text.split("#define FUZZ_SUITE", 1)[1].split("\n\n", 1)[0]
    s = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', body))
    assert "\\" not in s.replace('\\"', ""), "only \\\" escapes in FUZZ_SUITE"
    s = s.replace('\\"', '"').encode()
    return s, json.loads(s)


def canonical(obj):
    """The canonical receipt bytes (docs/receipts.md), as Python writes them."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True).encode()


def sign_envelope(tmp, key, canon):
    """An envelope over canon by the fuzz key: openssl signs (Ed25519,
    context + 0x00 + canon), independently of egress-guardctl."""
    msg = os.path.join(tmp, "msg")
    with open(msg, "wb") as f:
        f.write(b"egress-guard.sandbox-egress-conformance.v1\x00" + canon)
    sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", key, "-rawin",
                          "-in", msg], check=True, capture_output=True).stdout
    pub = subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-outform", "DER"],
                         check=True, capture_output=True).stdout[-32:]
    return json.dumps({"schema": "egress-guard.receipt-envelope.v1",
                       "key_id": hashlib.sha256(pub).hexdigest(),
                       "receipt": base64.b64encode(canon).decode(),
                       "signature": base64.b64encode(sig).decode()},
                      separators=(",", ":")).encode()


def receipt(ctl):
    """Reports (odd first byte) and envelopes signed by the fuzz key for an
    empty binary (even), as fuzz_receipt grades them (SHA-256 of "", suite
    FUZZ_SUITE, clock 2026-12-01)."""
    del ctl  # receipts are signed here, under the harness's own suite
    tmp = tempfile.mkdtemp(prefix="egfuzz.")
    try:
        key = fuzz_key(tmp)
        raw, suite = fuzz_suite()
        digest = hashlib.sha256(raw).hexdigest()
        words = {c["id"]: c for c in suite["cases"]}

        def case(cid, verdict="pass", **kw):
            s = words[cid]
            c = {"id": cid, "fact": s["fact"], "probe": "probe \u2192 \"x\"\t\\",
                 "expected": s["expected"],
                 "observed": s["expected"] if verdict != "fail" else s["control_expected"],
                 "control_expected": s["control_expected"],
                 "control": s["control_expected"] if verdict != "inconclusive" else s["expected"],
                 "control_evidence": EVIDENCE[s["evidence"]] if verdict != "inconclusive" else "",
                 "verdict": verdict}
            c.update(kw)
            return c

        def report(**kw):
            r = {"schema": "egress-guard.conformance-report.v2", "provider": "egress-guard",
                 "suite": suite["id"], "guard_binary": "/opt/eg/egress-guard",
                 "guard_sha256": SHA_EMPTY, "version": "0.1.0",
                 "ran_at": "2026-11-29T10:00:00.5Z",
                 "facts": {f: True for f in FACTS},
                 "cases": [case(c["id"]) for c in suite["cases"]]}
            r.update(kw)
            return r

        def envelope(rep, facts=None, suite_ref=None):
            """rep's receipt, facts recomputed unless given."""
            if facts is None:
                ok = {f: rep["facts"].get(f, False) for f in FACTS}
                for s in suite["cases"]:
                    c = next((c for c in rep["cases"] if c["id"] == s["id"]), None)
                    if (c is None or c["verdict"] != "pass" or
                            c["control_evidence"] != EVIDENCE[s["evidence"]]):
                        ok[s["fact"]] = False
                facts = ok
            rec = {"schema": "egress-guard.conformance.v2", "provider": "egress-guard",
                   "provider_revision": rep["version"] + "+sha256:" + SHA_EMPTY,
                   "ran_at": rep["ran_at"], "facts": facts, "cases": rep["cases"],
                   "suite": suite_ref or {"id": suite["id"], "version": str(suite["version"]),
                                          "digest": digest}}
            return sign_envelope(tmp, key, canonical(rec))

        odd = lambda r: b"\x01" + (r if isinstance(r, bytes) else
                                   json.dumps(r, separators=(",", ":")).encode())
        even = lambda s: b"\x00" + s
        good = report()
        write("fuzz_receipt", "report_all_facts", odd(good))
        write("fuzz_receipt", "report_inconclusive",
              odd(report(cases=[case("c-0", "inconclusive")])))
        write("fuzz_receipt", "report_failing_four_facts",
              odd(report(facts={f: True for f in FACTS[:4]},
                         cases=[case("c-0", "fail")] + good["cases"][1:])))
        write("fuzz_receipt", "report_unknown_key",
              odd(json.dumps(good, separators=(",", ":"))[:-1] + ',"summary":"x"}'))
        write("fuzz_receipt", "report_dup_id",
              odd(report(cases=[case("c-0"), case("c-0")])))
        write("fuzz_receipt", "report_zero_evidence",
              odd(report(cases=[case("c-0", control_evidence="listener pub80: 0 connections")]
                         + good["cases"][1:])))
        write("fuzz_receipt", "report_fact_false",
              odd(report(facts=dict(good["facts"], default_deny=False))))
        nce = report()
        for c in nce["cases"]:
            del c["control_expected"]
        write("fuzz_receipt", "report_no_control_expected", odd(nce))
        write("fuzz_receipt", "report_unknown_suite", odd(report(suite="lab")))
        write("fuzz_receipt", "report_future", odd(report(ran_at="2027-01-01T00:00:00Z")))
        out = envelope(good)
        write("fuzz_receipt", "envelope_signed", even(out))
        write("fuzz_receipt", "envelope_signed_inconclusive",
              even(envelope(report(cases=[case("c-0", "inconclusive")] + good["cases"][1:]))))
        # Hollow, every fact signed true: graded below security_boundary.
        hollow = report(cases=[case(c["id"], control_evidence="n/a") for c in suite["cases"]])
        write("fuzz_receipt", "envelope_hollow_placeholder",
              even(envelope(hollow, facts={f: True for f in FACTS})))
        write("fuzz_receipt", "envelope_stale", even(envelope(report(ran_at="2020-01-01T00:00:00Z"))))
        write("fuzz_receipt", "envelope_future", even(envelope(report(ran_at="2027-01-01T00:00:00Z"))))
        write("fuzz_receipt", "envelope_unknown_suite",
              even(envelope(good, suite_ref={"id": suite["id"], "version": "1", "digest": "0" * 64})))
        write("fuzz_receipt", "envelope_no_selector", even(envelope(good, facts={})))
        e = json.loads(out)
        bad = dict(e)
        sig = bad["signature"]
        bad["signature"] = sig[:10] + ("a" if sig[10] != "a" else "b") + sig[11:]
        write("fuzz_receipt", "envelope_bad_signature",
              even(json.dumps(bad, separators=(",", ":")).encode()))
        write("fuzz_receipt", "envelope_escaped", even(out.replace(b'"schema":"e', b'"schema":"\\u0065')))
        write("fuzz_receipt", "envelope_not_object", even(b"[]"))
    finally:
        shutil.rmtree(tmp)


def suites():
    """Suite files (even first byte) and control evidences (odd, then the
    kind's index in fuzz_suite.c's kinds[]) for fuzz_suite."""
    raw, suite = fuzz_suite()
    write("fuzz_suite", "suite_fuzz", b"\x00" + raw)
    pretty = json.dumps(suite, indent=1).encode() + b"\n"
    write("fuzz_suite", "suite_pretty", b"\x00" + pretty)
    two = dict(suite, cases=suite["cases"] + [dict(suite["cases"][0], id="c-5")])
    write("fuzz_suite", "suite_two_for_a_fact", b"\x00" + json.dumps(two).encode())
    bad = {
        "dup_id": dict(suite, cases=suite["cases"] + [suite["cases"][0]]),
        "unknown_kind": dict(suite, cases=[dict(suite["cases"][0], evidence="log")]
                             + suite["cases"][1:]),
        "fact_uncovered": dict(suite, cases=suite["cases"][:4]),
        "control_is_expected": dict(suite, cases=[dict(suite["cases"][0], control_expected="deny")]
                                    + suite["cases"][1:]),
        "bad_id": dict(suite, id="Fuzz"),
        "version_0": dict(suite, version=0),
        "unknown_key": dict(suite, owner="x"),
    }
    for name, s in bad.items():
        write("fuzz_suite", "suite_" + name, b"\x00" + json.dumps(s).encode())
    kinds = ["listener", "resolver", "socket", "counter", "process"]
    for i, k in enumerate(kinds):
        write("fuzz_suite", "evidence_" + k, bytes([1, i]) + EVIDENCE[k].encode())
    write("fuzz_suite", "evidence_zero", b"\x01\x00listener pub80: 0 connections")
    write("fuzz_suite", "evidence_colon_name", b"\x01\x00listener 198.18.0.10:8443: 1 connection")
    write("fuzz_suite", "evidence_junk", b"\x01\x00listener pub80 1 connection")


def dns_query(name, qtype, qid):
    q = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\x00"
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + q + struct.pack(">HH", qtype, 1)


def dns():
    tmp = tempfile.mkdtemp(prefix="egfuzz.")
    zone = {
        "public.test": {"A": ["198.18.1.10"], "AAAA": ["2001:2:0:1::10"], "ttl": 30},
        "mixed.test": {"A": ["198.18.1.10", "10.99.0.5", "169.254.169.254"],
                       "AAAA": ["fd00::5", "64:ff9b::a63:5"]},
        "alias.test": {"CNAME": "public.test"},
        "nx.test": {"rcode": "NXDOMAIN"},
        "cut.test": {"A": ["198.18.1.10", "198.18.1.11", "198.18.1.12"], "mode": "truncate"},
        "mapped.test": {"AAAA": ["::ffff:127.0.0.1", "::1", "2606:4700::1"]},
    }
    proc = None
    try:
        zf = os.path.join(tmp, "zone.json")
        with open(zf, "w") as f:
            json.dump(zone, f)
        ready = os.path.join(tmp, "ready")
        proc = subprocess.Popen([sys.executable, os.path.join(TOP, "tests", "integration", "dnsd.py"),
                                 "--listen", "127.0.0.1:0", "--zone", zf,
                                 "--log", os.path.join(tmp, "q.log"), "--ready", ready])
        for _ in range(100):
            if os.path.exists(ready) and os.path.getsize(ready) > 0:
                break
            time.sleep(0.05)
        port = next(int(l.split()[2]) for l in open(ready) if l.startswith("udp"))
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        qid = 0x4242
        for name in zone:
            for qtype, tn in ((1, "a"), (28, "aaaa")):
                s.sendto(dns_query(name, qtype, qid), ("127.0.0.1", port))
                ans, _ = s.recvfrom(4096)
                write("fuzz_dns", "%s_%s" % (name.split(".")[0], tn), ans)
                qid += 1
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()
        shutil.rmtree(tmp)
    # Hand-built hostile answers.
    q = dns_query("x.test", 1, 7)[12:]
    hdr = lambda an: struct.pack(">HHHHHH", 7, 0x8180, 1, an, 0, 0)
    a_rr = lambda ip, name=b"\xc0\x0c": name + struct.pack(">HHIH", 1, 1, 0, 4) + socket.inet_aton(ip)
    # The answer's owner name points at itself (offset 24).
    write("fuzz_dns", "pointer_loop", hdr(1) + q + a_rr("1.2.3.4", b"\xc0\x18"))
    write("fuzz_dns", "rdlength_past_end", hdr(1) + q + b"\xc0\x0c" +
          struct.pack(">HHIH", 1, 1, 0, 200) + b"\x01\x02\x03\x04")
    write("fuzz_dns", "a_rdlength_5", hdr(1) + q + b"\xc0\x0c" +
          struct.pack(">HHIH", 1, 1, 0, 5) + b"\x01\x02\x03\x04\x05")
    write("fuzz_dns", "ancount_lies", hdr(9) + q + a_rr("1.2.3.4"))
    write("fuzz_dns", "other_owner", hdr(2) + q + a_rr("8.8.8.8") +
          a_rr("10.0.0.1", b"\x05other\x04test\x00"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctl", default=os.path.join(TOP, "build", "egress-guardctl"))
    ap.add_argument("--only", metavar="HARNESS[,HARNESS]",
                    help="rewrite only these harnesses' seeds (e.g. fuzz_receipt)")
    a = ap.parse_args()
    gens = {"fuzz_dest": dest, "fuzz_http_head": http_head, "fuzz_chunked": chunked,
            "fuzz_socks5": socks5, "fuzz_tlshello": tlshello, "fuzz_policy": policy, "fuzz_catalog": catalog,
            "fuzz_bundle": lambda: bundle(a.ctl), "fuzz_dns": dns,
            "fuzz_receipt": lambda: receipt(a.ctl), "fuzz_suite": suites,
            "fuzz_tspec": tspec}
    only = a.only.split(",") if a.only else list(gens)
    for h in only:
        if h not in gens:
            ap.error("no harness %s (one of %s)" % (h, ", ".join(sorted(gens))))
        if os.path.isdir(os.path.join(CORPUS, h)):
            shutil.rmtree(os.path.join(CORPUS, h))
    for h in only:
        gens[h]()
    for h in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, h))
        size = sum(os.path.getsize(os.path.join(CORPUS, h, f)) for f in files)
        print("%-16s %2d files %6d bytes" % (h, len(files), size))


if __name__ == "__main__":
    main()
