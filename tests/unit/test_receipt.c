/* Conformance receipts and grades (conform/, ctl/receiptcmd.c):
 * pinned canonical bytes and an independently made signature; the round
 * trip to security_boundary; and every way a receipt must fall short of
 * it, each named: tampered bytes, a foreign binary, an untrusted signer,
 * a missing, false or unproved fact, a malformed envelope; the hollow
 * reports of issue 29, signed by a trusted attester (placeholder or
 * zero-count evidence, a required case missing, words other than the
 * suite's, an unknown or misnamed suite, a stale or future ran_at); the
 * suite parser's refusals and the control-evidence grammar.
 *
 * The suites this program ships (conform/suites/) are not used here: the
 * tests grade by a suite of their own (test_suite_text), parsed with
 * suite_parse, so that what is pinned does not move when a shipped suite
 * is edited. */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "conform/canon.h"
#include "conform/receipt.h"
#include "conform/suite.h"
#include "ctl/receiptcmd.h"
#include "ctl/receiptshow.h"
#include "plane/bundle.h"

/* SHA-256 of the empty string: the "binary" of the pinned receipt. */
#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_ABC   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

/* RFC 8032 section 7.1 TEST 1 key pair (as in test_bundle.c). */
#define RFC_SEED "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
#define RFC_KEY_ID "21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9"

/* The clock of every grade here, fixed so that pinned receipts do not go
 * stale: 2026-12-01T00:00:00Z (Python: calendar.timegm((2026, 12, 1, 0, 0,
 * 0))), two and a half days after the pinned ran_at. */
#define NOW		1796083200LL
#define DAY		86400LL
#define MAX_AGE		(30 * DAY)	/* RECEIPT_MAX_AGE_DAYS */

/* The suite the tests grade by: two cases for exact_destination_match
 * and for authority_separation (so "one case per fact" is short of it),
 * and every evidence kind. */
static const char test_suite_text[] =
    "{\n"
    " \"schema\": \"egress-guard.conformance-suite.v1\",\n"
    " \"id\": \"unit\",\n"
    " \"version\": 3,\n"
    " \"target\": \"test_receipt.c\",\n"
    " \"cases\": [\n"
    "  {\"id\": \"edm-01\", \"fact\": \"exact_destination_match\", \""
    "expected\": \"deny not_allowlisted\", \"control_expected\": \"al"
    "low\", \"evidence\": \"listener\"},\n"
    "  {\"id\": \"edm-02\", \"fact\": \"exact_destination_match\", \""
    "expected\": \"deny not_allowlisted\", \"control_expected\": \"al"
    "low\", \"evidence\": \"listener\"},\n"
    "  {\"id\": \"ctpa-08\", \"fact\": \"connect_time_public_address"
    "\", \"expected\": \"deny non_public_address\", \"control_expecte"
    "d\": \"allow\", \"evidence\": \"resolver\"},\n"
    "  {\"id\": \"rr-01\", \"fact\": \"redirect_recheck\", \"expected"
    "\": \"deny not_allowlisted\", \"control_expected\": \"allow\", "
    "\"evidence\": \"listener\"},\n"
    "  {\"id\": \"as-03\", \"fact\": \"authority_separation\", \"expe"
    "cted\": \"400\", \"control_expected\": \"200\", \"evidence\": \""
    "socket\"},\n"
    "  {\"id\": \"as-08\", \"fact\": \"authority_separation\", \"expe"
    "cted\": \"CapEff 0\", \"control_expected\": \"CapEff set\", \"ev"
    "idence\": \"process\"},\n"
    "  {\"id\": \"dd-03\", \"fact\": \"default_deny\", \"expected\": "
    "\"blocked\", \"control_expected\": \"reached\", \"evidence\": \""
    "counter\"}\n"
    " ]\n"
    "}\n";

/* SHA-256 of test_suite_text's bytes, by Python's
 * hashlib.sha256(open("suite.json", "rb").read()).hexdigest(). */
#define SUITE_DIGEST \
    "5970cf83972a7c12bac97776ea2a959b7b87fe0a6dcbabf9673072a2e30477d1"

/* A report as the matrix runner could spell it: keys in any order,
 * whitespace, JSON escapes, probe text with every class of character the
 * canonical form escapes, every required case of the suite passing with
 * its evidence, and one case the suite does not name (dd-90,
 * inconclusive): kept in the receipt, not graded. */
static const char pinned_report[] =
    "{\n"
    " \"version\": \"0.1.0\",\n"
    " \"schema\": \"egress-guard.conformance-report.v2\",\n"
    " \"provider\": \"egress-guard\",\n"
    " \"suite\": \"unit\",\n"
    " \"guard_binary\": \"/opt/eg/egress-guard\",\n"
    " \"guard_sha256\": \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649"
    "b934ca495991b7852b855\",\n"
    " \"ran_at\": \"2026-11-29T10:00:00Z\",\n"
    " \"facts\": {\"exact_destination_match\": true,\n"
    "           \"connect_time_public_address\": true,\n"
    "           \"redirect_recheck\": true, \"authority_separation\":"
    " true,\n"
    "           \"default_deny\": true},\n"
    " \"cases\": [\n"
    "  {\"id\": \"edm-01\", \"fact\": \"exact_destination_match\",\n"
    "   \"probe\": \"CONNECT www.api.example.test:443\",\n"
    "   \"expected\": \"deny not_allowlisted\",\n"
    "   \"observed\": \"deny not_allowlisted\", \"control\": \"allow"
    "\",\n"
    "   \"control_expected\": \"allow\",\n"
    "   \"control_evidence\": \"listener pub443: 1 connection, 517 by"
    "tes\",\n"
    "   \"verdict\": \"pass\"},\n"
    "  {\"id\": \"edm-02\", \"fact\": \"exact_destination_match\",\n"
    "   \"probe\": \"CONNECT api.example.test.:443\",\n"
    "   \"expected\": \"deny not_allowlisted\",\n"
    "   \"observed\": \"deny not_allowlisted\", \"control\": \"allow"
    "\",\n"
    "   \"control_expected\": \"allow\",\n"
    "   \"control_evidence\": \"listener pub443: 2 connections\",\n"
    "   \"verdict\": \"pass\"},\n"
    "  {\"id\": \"ctpa-08\", \"fact\": \"connect_time_public_address"
    "\",\n"
    "   \"probe\": \"answer flips public\\u2192private, TTL 0\",\n"
    "   \"expected\": \"deny non_public_address\",\n"
    "   \"observed\": \"deny non_public_address\",\n"
    "   \"control_expected\": \"allow\", \"control\": \"allow\",\n"
    "   \"control_evidence\": \"resolver dns198: 2 queries\",\n"
    "   \"verdict\": \"pass\"},\n"
    "  {\"id\": \"rr-01\", \"fact\": \"redirect_recheck\",\n"
    "   \"probe\": \"curl -L: 302 to \\\"http://other.example.test/\\"
    "\"\",\n"
    "   \"expected\": \"deny not_allowlisted\",\n"
    "   \"observed\": \"deny not_allowlisted\", \"control\": \"allow"
    "\",\n"
    "   \"control_expected\": \"allow\",\n"
    "   \"control_evidence\": \"listener other80: 1 connection, 78 by"
    "tes\",\n"
    "   \"verdict\": \"pass\"},\n"
    "  {\"id\": \"as-03\", \"fact\": \"authority_separation\",\n"
    "   \"probe\": \"GET /v1/status\\r\\n over the workload listener"
    "\",\n"
    "   \"expected\": \"400\", \"observed\": \"400\", \"control\": \""
    "200\",\n"
    "   \"control_expected\": \"200\",\n"
    "   \"control_evidence\": \"socket A.sock: 1 connection\",\n"
    "   \"verdict\": \"pass\"},\n"
    "  {\"id\": \"as-08\", \"fact\": \"authority_separation\",\n"
    "   \"probe\": \"CapEff of the guard in /proc/PID/status\",\n"
    "   \"expected\": \"CapEff 0\", \"observed\": \"CapEff 0\", \"con"
    "trol\": \"CapEff set\",\n"
    "   \"control_expected\": \"CapEff set\",\n"
    "   \"control_evidence\": \"process 4242: CapEff 000001ffffffffff"
    "\",\n"
    "   \"verdict\": \"pass\"},\n"
    "  {\"id\": \"dd-03\", \"fact\": \"default_deny\",\n"
    "   \"probe\": \"ICMP echo\\t(ping -c1) \\\\ \\u00e9\\ud83d\\ude0"
    "0 \\u007f\\u0001\",\n"
    "   \"expected\": \"blocked\", \"observed\": \"blocked\",\n"
    "   \"control\": \"reached\", \"control_expected\": \"reached\","
    "\n"
    "   \"control_evidence\": \"counter in-icmp: 1 packet\",\n"
    "   \"verdict\": \"pass\"},\n"
    "  {\"id\": \"dd-90\", \"fact\": \"default_deny\",\n"
    "   \"probe\": \"a case the suite does not name: kept, not graded"
    "\",\n"
    "   \"expected\": \"blocked\", \"observed\": \"blocked\",\n"
    "   \"control\": \"blocked\", \"control_expected\": \"reached\","
    "\n"
    "   \"control_evidence\": \"\",\n"
    "   \"verdict\": \"inconclusive\"}\n"
    " ]\n"
    "}\n";

/* Its canonical receipt for SHA_EMPTY, written independently by Python:
 *   rep = json.load(open("report.json"))      # pinned_report's text
 *   rec = {"schema": "egress-guard.conformance.v2",
 *          "provider": "egress-guard",
 *          "provider_revision": rep["version"] + "+sha256:" + SHA_EMPTY,
 *          "ran_at": rep["ran_at"], "cases": rep["cases"],
 *          "facts": {f: True for f in the five facts},
 *          "suite": {"id": "unit", "version": "3", "digest": SUITE_DIGEST}}
 *   json.dumps(rec, sort_keys=True, separators=(",", ":"),
 *              ensure_ascii=True)
 * An independent implementation pins the bytes. */
#define PINNED_CANON \
    "{\"cases\":[{\"control\":\"allow\",\"control_evidence\":\"listen" \
    "er pub443: 1 connection, 517 bytes\",\"control_expected\":\"allo" \
    "w\",\"expected\":\"deny not_allowlisted\",\"fact\":\"exact_desti" \
    "nation_match\",\"id\":\"edm-01\",\"observed\":\"deny not_allowli" \
    "sted\",\"probe\":\"CONNECT www.api.example.test:443\",\"verdict" \
    "\":\"pass\"},{\"control\":\"allow\",\"control_evidence\":\"liste" \
    "ner pub443: 2 connections\",\"control_expected\":\"allow\",\"exp" \
    "ected\":\"deny not_allowlisted\",\"fact\":\"exact_destination_ma" \
    "tch\",\"id\":\"edm-02\",\"observed\":\"deny not_allowlisted\",\"" \
    "probe\":\"CONNECT api.example.test.:443\",\"verdict\":\"pass\"}," \
    "{\"control\":\"allow\",\"control_evidence\":\"resolver dns198: 2" \
    " queries\",\"control_expected\":\"allow\",\"expected\":\"deny no" \
    "n_public_address\",\"fact\":\"connect_time_public_address\",\"id" \
    "\":\"ctpa-08\",\"observed\":\"deny non_public_address\",\"probe" \
    "\":\"answer flips public\\u2192private, TTL 0\",\"verdict\":\"pa" \
    "ss\"},{\"control\":\"allow\",\"control_evidence\":\"listener oth" \
    "er80: 1 connection, 78 bytes\",\"control_expected\":\"allow\",\"" \
    "expected\":\"deny not_allowlisted\",\"fact\":\"redirect_recheck" \
    "\",\"id\":\"rr-01\",\"observed\":\"deny not_allowlisted\",\"prob" \
    "e\":\"curl -L: 302 to \\\"http://other.example.test/\\\"\",\"ver" \
    "dict\":\"pass\"},{\"control\":\"200\",\"control_evidence\":\"soc" \
    "ket A.sock: 1 connection\",\"control_expected\":\"200\",\"expect" \
    "ed\":\"400\",\"fact\":\"authority_separation\",\"id\":\"as-03\"," \
    "\"observed\":\"400\",\"probe\":\"GET /v1/status\\r\\n over the w" \
    "orkload listener\",\"verdict\":\"pass\"},{\"control\":\"CapEff s" \
    "et\",\"control_evidence\":\"process 4242: CapEff 000001fffffffff" \
    "f\",\"control_expected\":\"CapEff set\",\"expected\":\"CapEff 0" \
    "\",\"fact\":\"authority_separation\",\"id\":\"as-08\",\"observed" \
    "\":\"CapEff 0\",\"probe\":\"CapEff of the guard in /proc/PID/sta" \
    "tus\",\"verdict\":\"pass\"},{\"control\":\"reached\",\"control_e" \
    "vidence\":\"counter in-icmp: 1 packet\",\"control_expected\":\"r" \
    "eached\",\"expected\":\"blocked\",\"fact\":\"default_deny\",\"id" \
    "\":\"dd-03\",\"observed\":\"blocked\",\"probe\":\"ICMP echo\\t(p" \
    "ing -c1) \\\\ \\u00e9\\ud83d\\ude00 \\u007f\\u0001\",\"verdict\"" \
    ":\"pass\"},{\"control\":\"blocked\",\"control_evidence\":\"\",\"" \
    "control_expected\":\"reached\",\"expected\":\"blocked\",\"fact\"" \
    ":\"default_deny\",\"id\":\"dd-90\",\"observed\":\"blocked\",\"pr" \
    "obe\":\"a case the suite does not name: kept, not graded\",\"ver" \
    "dict\":\"inconclusive\"}],\"facts\":{\"authority_separation\":tr" \
    "ue,\"connect_time_public_address\":true,\"default_deny\":true,\"" \
    "exact_destination_match\":true,\"redirect_recheck\":true},\"prov" \
    "ider\":\"egress-guard\",\"provider_revision\":\"0.1.0+sha256:e3b" \
    "0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"," \
    "\"ran_at\":\"2026-11-29T10:00:00Z\",\"schema\":\"egress-guard.co" \
    "nformance.v2\",\"suite\":{\"digest\":\"5970cf83972a7c12bac97776e" \
    "a2a959b7b87fe0a6dcbabf9673072a2e30477d1\",\"id\":\"unit\",\"vers" \
    "ion\":\"3\"}}"

/* PINNED_CANON signed with the RFC key by Node.js (v20) crypto, the
 * envelope assembled there too (Ed25519 signatures are deterministic):
 *   key = crypto.createPrivateKey({format: "der", type: "pkcs8", key:
 *       Buffer.concat([Buffer.from("302e020100300506032b657004220420",
 *       "hex"), Buffer.from(RFC_SEED, "hex")])});
 *   sig = crypto.sign(null, Buffer.concat([Buffer.from(
 *       "egress-guard.sandbox-egress-conformance.v1\0"), canon]), key);
 *   JSON.stringify({schema: "egress-guard.receipt-envelope.v1",
 *       key_id: RFC_KEY_ID, receipt: canon.toString("base64"),
 *       signature: sig.toString("base64")}) */
#define PINNED_ENVELOPE \
    "{\"schema\":\"egress-guard.receipt-envelope.v1\",\"key_id\":\"" \
    RFC_KEY_ID "\",\"receipt\":\"" \
    "eyJjYXNlcyI6W3siY29udHJvbCI6ImFsbG93IiwiY29udHJvbF9ldmlkZW5jZSI6Imxpc3Rl" \
    "bmVyIHB1YjQ0MzogMSBjb25uZWN0aW9uLCA1MTcgYnl0ZXMiLCJjb250cm9sX2V4cGVjdGVk" \
    "IjoiYWxsb3ciLCJleHBlY3RlZCI6ImRlbnkgbm90X2FsbG93bGlzdGVkIiwiZmFjdCI6ImV4" \
    "YWN0X2Rlc3RpbmF0aW9uX21hdGNoIiwiaWQiOiJlZG0tMDEiLCJvYnNlcnZlZCI6ImRlbnkg" \
    "bm90X2FsbG93bGlzdGVkIiwicHJvYmUiOiJDT05ORUNUIHd3dy5hcGkuZXhhbXBsZS50ZXN0" \
    "OjQ0MyIsInZlcmRpY3QiOiJwYXNzIn0seyJjb250cm9sIjoiYWxsb3ciLCJjb250cm9sX2V2" \
    "aWRlbmNlIjoibGlzdGVuZXIgcHViNDQzOiAyIGNvbm5lY3Rpb25zIiwiY29udHJvbF9leHBl" \
    "Y3RlZCI6ImFsbG93IiwiZXhwZWN0ZWQiOiJkZW55IG5vdF9hbGxvd2xpc3RlZCIsImZhY3Qi" \
    "OiJleGFjdF9kZXN0aW5hdGlvbl9tYXRjaCIsImlkIjoiZWRtLTAyIiwib2JzZXJ2ZWQiOiJk" \
    "ZW55IG5vdF9hbGxvd2xpc3RlZCIsInByb2JlIjoiQ09OTkVDVCBhcGkuZXhhbXBsZS50ZXN0" \
    "Ljo0NDMiLCJ2ZXJkaWN0IjoicGFzcyJ9LHsiY29udHJvbCI6ImFsbG93IiwiY29udHJvbF9l" \
    "dmlkZW5jZSI6InJlc29sdmVyIGRuczE5ODogMiBxdWVyaWVzIiwiY29udHJvbF9leHBlY3Rl" \
    "ZCI6ImFsbG93IiwiZXhwZWN0ZWQiOiJkZW55IG5vbl9wdWJsaWNfYWRkcmVzcyIsImZhY3Qi" \
    "OiJjb25uZWN0X3RpbWVfcHVibGljX2FkZHJlc3MiLCJpZCI6ImN0cGEtMDgiLCJvYnNlcnZl" \
    "ZCI6ImRlbnkgbm9uX3B1YmxpY19hZGRyZXNzIiwicHJvYmUiOiJhbnN3ZXIgZmxpcHMgcHVi" \
    "bGljXHUyMTkycHJpdmF0ZSwgVFRMIDAiLCJ2ZXJkaWN0IjoicGFzcyJ9LHsiY29udHJvbCI6" \
    "ImFsbG93IiwiY29udHJvbF9ldmlkZW5jZSI6Imxpc3RlbmVyIG90aGVyODA6IDEgY29ubmVj" \
    "dGlvbiwgNzggYnl0ZXMiLCJjb250cm9sX2V4cGVjdGVkIjoiYWxsb3ciLCJleHBlY3RlZCI6" \
    "ImRlbnkgbm90X2FsbG93bGlzdGVkIiwiZmFjdCI6InJlZGlyZWN0X3JlY2hlY2siLCJpZCI6" \
    "InJyLTAxIiwib2JzZXJ2ZWQiOiJkZW55IG5vdF9hbGxvd2xpc3RlZCIsInByb2JlIjoiY3Vy" \
    "bCAtTDogMzAyIHRvIFwiaHR0cDovL290aGVyLmV4YW1wbGUudGVzdC9cIiIsInZlcmRpY3Qi" \
    "OiJwYXNzIn0seyJjb250cm9sIjoiMjAwIiwiY29udHJvbF9ldmlkZW5jZSI6InNvY2tldCBB" \
    "LnNvY2s6IDEgY29ubmVjdGlvbiIsImNvbnRyb2xfZXhwZWN0ZWQiOiIyMDAiLCJleHBlY3Rl" \
    "ZCI6IjQwMCIsImZhY3QiOiJhdXRob3JpdHlfc2VwYXJhdGlvbiIsImlkIjoiYXMtMDMiLCJv" \
    "YnNlcnZlZCI6IjQwMCIsInByb2JlIjoiR0VUIC92MS9zdGF0dXNcclxuIG92ZXIgdGhlIHdv" \
    "cmtsb2FkIGxpc3RlbmVyIiwidmVyZGljdCI6InBhc3MifSx7ImNvbnRyb2wiOiJDYXBFZmYg" \
    "c2V0IiwiY29udHJvbF9ldmlkZW5jZSI6InByb2Nlc3MgNDI0MjogQ2FwRWZmIDAwMDAwMWZm" \
    "ZmZmZmZmZmYiLCJjb250cm9sX2V4cGVjdGVkIjoiQ2FwRWZmIHNldCIsImV4cGVjdGVkIjoi" \
    "Q2FwRWZmIDAiLCJmYWN0IjoiYXV0aG9yaXR5X3NlcGFyYXRpb24iLCJpZCI6ImFzLTA4Iiwi" \
    "b2JzZXJ2ZWQiOiJDYXBFZmYgMCIsInByb2JlIjoiQ2FwRWZmIG9mIHRoZSBndWFyZCBpbiAv" \
    "cHJvYy9QSUQvc3RhdHVzIiwidmVyZGljdCI6InBhc3MifSx7ImNvbnRyb2wiOiJyZWFjaGVk" \
    "IiwiY29udHJvbF9ldmlkZW5jZSI6ImNvdW50ZXIgaW4taWNtcDogMSBwYWNrZXQiLCJjb250" \
    "cm9sX2V4cGVjdGVkIjoicmVhY2hlZCIsImV4cGVjdGVkIjoiYmxvY2tlZCIsImZhY3QiOiJk" \
    "ZWZhdWx0X2RlbnkiLCJpZCI6ImRkLTAzIiwib2JzZXJ2ZWQiOiJibG9ja2VkIiwicHJvYmUi" \
    "OiJJQ01QIGVjaG9cdChwaW5nIC1jMSkgXFwgXHUwMGU5XHVkODNkXHVkZTAwIFx1MDA3Zlx1" \
    "MDAwMSIsInZlcmRpY3QiOiJwYXNzIn0seyJjb250cm9sIjoiYmxvY2tlZCIsImNvbnRyb2xf" \
    "ZXZpZGVuY2UiOiIiLCJjb250cm9sX2V4cGVjdGVkIjoicmVhY2hlZCIsImV4cGVjdGVkIjoi" \
    "YmxvY2tlZCIsImZhY3QiOiJkZWZhdWx0X2RlbnkiLCJpZCI6ImRkLTkwIiwib2JzZXJ2ZWQi" \
    "OiJibG9ja2VkIiwicHJvYmUiOiJhIGNhc2UgdGhlIHN1aXRlIGRvZXMgbm90IG5hbWU6IGtl" \
    "cHQsIG5vdCBncmFkZWQiLCJ2ZXJkaWN0IjoiaW5jb25jbHVzaXZlIn1dLCJmYWN0cyI6eyJh" \
    "dXRob3JpdHlfc2VwYXJhdGlvbiI6dHJ1ZSwiY29ubmVjdF90aW1lX3B1YmxpY19hZGRyZXNz" \
    "Ijp0cnVlLCJkZWZhdWx0X2RlbnkiOnRydWUsImV4YWN0X2Rlc3RpbmF0aW9uX21hdGNoIjp0" \
    "cnVlLCJyZWRpcmVjdF9yZWNoZWNrIjp0cnVlfSwicHJvdmlkZXIiOiJlZ3Jlc3MtZ3VhcmQi" \
    "LCJwcm92aWRlcl9yZXZpc2lvbiI6IjAuMS4wK3NoYTI1NjplM2IwYzQ0Mjk4ZmMxYzE0OWFm" \
    "YmY0Yzg5OTZmYjkyNDI3YWU0MWU0NjQ5YjkzNGNhNDk1OTkxYjc4NTJiODU1IiwicmFuX2F0" \
    "IjoiMjAyNi0xMS0yOVQxMDowMDowMFoiLCJzY2hlbWEiOiJlZ3Jlc3MtZ3VhcmQuY29uZm9y" \
    "bWFuY2UudjIiLCJzdWl0ZSI6eyJkaWdlc3QiOiI1OTcwY2Y4Mzk3MmE3YzEyYmFjOTc3NzZl" \
    "YTJhOTU5YjdiODdmZTBhNmRjYmFiZjk2NzMwNzJhMmUzMDQ3N2QxIiwiaWQiOiJ1bml0Iiwi" \
    "dmVyc2lvbiI6IjMifX0=" \
    "\",\"signature\":\"" \
    "aILB+g0Q5exogw2WIDEqmztmBCjVPoa7JVkQcPHfZacbfzgnYiut9CoojNRKNJdw" \
    "eR7x3eYo2p5woJAENU6JDg==\"}"

/* The suites every grade here is made against: test_suite_text alone. */
static struct suite_set suites;
/* A trusted attester the hollow-report tests share (one key, one keyring
 * for the whole run: dozens of them would cost a temporary directory
 * each). Set up once ring() exists, in main's group setup. */
static EVP_PKEY *attester;
static struct bundle_keyring *trusted;

static int
suites_setup(void **state)
{
	char err[512] = "";

	(void)state;
	if ((suites.v = calloc(1, sizeof(*suites.v))) == NULL)
		return -1;
	suites.v[0] = suite_parse(test_suite_text, strlen(test_suite_text),
	    err, sizeof(err));
	if (suites.v[0] == NULL) {
		fprintf(stderr, "test suite: %s\n", err);
		return -1;
	}
	suites.n = 1;
	return 0;
}

/* ---- helpers ---- */

/* 257 printable bytes: one past a suite target's bound. */
#define T64 "1234567890123456789012345678901234567890123456789012345678901234"
#define T257 T64 T64 T64 T64 "x"

static void
check_err(const char *err)
{
	size_t i;

	assert_true(err[0] != '\0');
	for (i = 0; err[i] != '\0'; i++)
		if (!(err[i] >= 0x20 && err[i] < 0x7f))
			fail_msg("byte %zu of the message is 0x%02x: \"%s\"", i,
			    (unsigned char)err[i], err);
}

static void
err_has(const char *err, const char *want)
{
	if (want != NULL && strstr(err, want) == NULL)
		fail_msg("message \"%s\" does not contain \"%s\"", err, want);
}

static int
nibble(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

static EVP_PKEY *
rfc_key(void)
{
	unsigned char seed[32];
	EVP_PKEY *pk;
	size_t i;

	for (i = 0; i < sizeof(seed); i++)
		seed[i] = (unsigned char)(nibble(RFC_SEED[2 * i]) << 4 |
		    nibble(RFC_SEED[2 * i + 1]));
	pk = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed,
	    sizeof(seed));
	assert_non_null(pk);
	return pk;
}

static EVP_PKEY *
gen_key(const char *type)
{
	EVP_PKEY *pk = EVP_PKEY_Q_keygen(NULL, NULL, type);

	assert_non_null(pk);
	return pk;
}

static char *
write_tmp_in(const char *dir, const char *name, const void *content,
    size_t len)
{
	char *path;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(content, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Writes pk's SPKI PEM (or, with priv, its PKCS#8 PEM) to dir/name. */
static void
write_key_in(const char *dir, const char *name, EVP_PKEY *pk, int priv)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data;
	long n;

	assert_non_null(bio);
	if (priv)
		assert_int_equal(PEM_write_bio_PKCS8PrivateKey(bio, pk, NULL,
		    NULL, 0, NULL, NULL), 1);
	else
		assert_int_equal(PEM_write_bio_PUBKEY(bio, pk), 1);
	n = BIO_get_mem_data(bio, &data);
	assert_true(n > 0);
	free(write_tmp_in(dir, name, data, (size_t)n));
	BIO_free(bio);
}

static char *
tmp_dir(void)
{
	char *d = strdup("/tmp/eg-receipt-test-XXXXXX");

	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static void
rm_dir(char *d)
{
	char *cmd;

	assert_true(asprintf(&cmd, "rm -rf '%s'", d) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(d);
}

/* A keyring trusting the public halves of the given keys (NULLs skipped). */
static struct bundle_keyring *
ring(EVP_PKEY *a, EVP_PKEY *b)
{
	struct bundle_keyring *kr = bundle_keyring_new();
	char err[512] = "", *d = tmp_dir();

	assert_non_null(kr);
	if (a != NULL)
		write_key_in(d, "a.pub.pem", a, 0);
	if (b != NULL)
		write_key_in(d, "b.pub.pem", b, 0);
	if (receiptcmd_load_attesters(kr, d, err, sizeof(err)) == -1)
		fail_msg("attesters: %s", err);
	rm_dir(d);
	return kr;
}

static json_t *
pinned(void)
{
	json_t *r = json_loads(pinned_report, 0, NULL);

	assert_non_null(r);
	return r;
}

static json_t *
case_of(json_t *report, const char *id)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(report, "cases"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "id")), id) == 0)
			return c;
	fail_msg("no case %s", id);
	return NULL;
}

/* Removes the case id from report's cases. */
static void
drop_case(json_t *report, const char *id)
{
	json_t *cases = json_object_get(report, "cases");
	size_t i;

	for (i = 0; i < json_array_size(cases); i++) {
		if (strcmp(json_string_value(json_object_get(json_array_get(
		    cases, i), "id")), id) == 0) {
			assert_int_equal(json_array_remove(cases, i), 0);
			return;
		}
	}
	fail_msg("no case %s", id);
}

static void
set_str(json_t *obj, const char *key, const char *val)
{
	assert_int_equal(json_object_set_new(obj, key, json_string(val)), 0);
}

static char *
text_of(json_t *report)
{
	char *s = json_dumps(report, JSON_INDENT(1));

	assert_non_null(s);
	return s;
}

static struct receipt_report *
parse_ok(const char *text)
{
	char err[512] = "";
	struct receipt_report *r;

	r = receipt_report_parse(text, strlen(text), &suites, NOW, err,
	    sizeof(err));
	if (r == NULL)
		fail_msg("report refused: %s", err);
	return r;
}

static void
refuse_report_text(const char *text, const char *want)
{
	char err[512] = "";
	struct receipt_report *r;

	r = receipt_report_parse(text, strlen(text), &suites, NOW, err,
	    sizeof(err));
	if (r != NULL) {
		receipt_report_free(r);
		fail_msg("report accepted, want \"%s\": %s", want, text);
	}
	check_err(err);
	err_has(err, want);
}

static void
refuse_report(json_t *report, const char *want)
{
	char *text = text_of(report);

	refuse_report_text(text, want);
	free(text);
	json_decref(report);
}

/* The canonical receipt of a report text for a binary hash. */
static char *
canon_of(const char *text, const char *sha, size_t *len)
{
	struct receipt_report *r = parse_ok(text);
	char err[512] = "", *c;

	c = receipt_canonical(r, sha, len, err, sizeof(err));
	if (c == NULL)
		fail_msg("canonical: %s", err);
	receipt_report_free(r);
	return c;
}

/* Signs bytes (whatever they are) into an envelope. */
static char *
sign_bytes(const char *bytes, size_t len, EVP_PKEY *pk)
{
	char err[512] = "", *env;

	env = receiptcmd_sign_envelope(bytes, len, pk, err, sizeof(err));
	if (env == NULL)
		fail_msg("sign: %s", err);
	return env;
}

/* report (consumed) → signed envelope for binary sha. */
static char *
envelope_of(json_t *report, const char *sha, EVP_PKEY *pk)
{
	char *text = text_of(report), *c, *env;
	size_t len;

	c = canon_of(text, sha, &len);
	env = sign_bytes(c, len, pk);
	free(c);
	free(text);
	json_decref(report);
	return env;
}

/* What the tests grade against unless they say otherwise. */
static struct receipt_check
check_for(const char *sha)
{
	return (struct receipt_check){ &suites, sha, NOW, MAX_AGE };
}

/* Grades env under kr and chk; receipt_verify must return want_rc. The
 * message, when there is one, is printable; it is "" exactly for ok. */
static struct receipt_verdict
grade_chk(const struct bundle_keyring *kr, const char *env, size_t len,
    const struct receipt_check *chk, int want_rc, char *err, size_t errlen)
{
	struct receipt_verdict v;
	int rc;

	rc = receipt_verify(kr, env, len, chk, &v, err, errlen);
	if (rc != want_rc)
		fail_msg("receipt_verify returned %d (%s: %s), want %d", rc,
		    receipt_reason_name(v.reason), err, want_rc);
	if (rc == -1 || v.reason != RECEIPT_OK)
		check_err(err);
	else
		assert_string_equal(err, "");
	if (rc == -1)
		assert_int_equal(v.reason, RECEIPT_MALFORMED);
	return v;
}

static struct receipt_verdict
grade_n(const struct bundle_keyring *kr, const char *env, size_t len,
    const char *sha, int want_rc)
{
	struct receipt_check chk = check_for(sha);
	char err[1024] = "";

	return grade_chk(kr, env, len, &chk, want_rc, err, sizeof(err));
}

static struct receipt_verdict
grade(const struct bundle_keyring *kr, const char *env, const char *sha,
    int want_rc)
{
	return grade_n(kr, env, strlen(env), sha, want_rc);
}

/* env graded g for why under chk, the message holding want (NULL: any). */
static void
expect_grade_chk(const struct bundle_keyring *kr, const char *env,
    const struct receipt_check *chk, enum receipt_grade g,
    enum receipt_reason why, const char *want)
{
	char err[1024] = "";
	struct receipt_verdict v = grade_chk(kr, env, strlen(env), chk, 0,
	    err, sizeof(err));

	if (v.grade != g || v.reason != why)
		fail_msg("graded %s (%s: %s), want %s (%s)",
		    receipt_grade_name(v.grade), receipt_reason_name(v.reason),
		    err, receipt_grade_name(g), receipt_reason_name(why));
	err_has(err, want);
}

static void
expect_grade(const struct bundle_keyring *kr, const char *env,
    const char *sha, enum receipt_grade g, enum receipt_reason why)
{
	struct receipt_check chk = check_for(sha);

	expect_grade_chk(kr, env, &chk, g, why, NULL);
}

static void
expect_malformed(const struct bundle_keyring *kr, const char *env)
{
	(void)grade(kr, env, SHA_EMPTY, -1);
}

/* The receipt bytes inside an envelope, malloc'd and NUL-terminated. */
static char *
receipt_of(const char *env, size_t *len)
{
	json_t *root = json_loads(env, 0, NULL);
	const char *s;
	size_t n;
	char *out;

	assert_non_null(root);
	s = json_string_value(json_object_get(root, "receipt"));
	assert_non_null(s);
	n = strlen(s);
	out = malloc(n + 1);
	assert_non_null(out);
	assert_int_equal(EVP_DecodeBlock((unsigned char *)out,
	    (const unsigned char *)s, (int)n), (int)(n / 4 * 3));
	*len = n / 4 * 3 - (s[n - 1] == '=') - (s[n - 2] == '=');
	out[*len] = '\0';
	json_decref(root);
	return out;
}

/* env with its receipt bytes replaced, the signature kept. */
static char *
with_receipt(const char *env, const char *bytes, size_t len)
{
	json_t *root = json_loads(env, 0, NULL);
	char *b, *out;

	assert_non_null(root);
	b = malloc(4 * ((len + 2) / 3) + 1);
	assert_non_null(b);
	EVP_EncodeBlock((unsigned char *)b, (const unsigned char *)bytes,
	    (int)len);
	set_str(root, "receipt", b);
	out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_non_null(out);
	free(b);
	json_decref(root);
	return out;
}

/* env with field set to value (any JSON), the rest kept. */
static char *
with_field(const char *env, const char *field, json_t *value)
{
	json_t *root = json_loads(env, 0, NULL);
	char *out;

	assert_non_null(root);
	if (value == NULL)
		assert_int_equal(json_object_del(root, field), 0);
	else
		assert_int_equal(json_object_set_new(root, field, value), 0);
	out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_non_null(out);
	json_decref(root);
	return out;
}

/* s with the one occurrence of from replaced by to, malloc'd. */
static char *
replace_once(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	size_t n;
	char *out;

	if (at == NULL)
		fail_msg("\"%s\" not found", from);
	assert_null(strstr(at + 1, from));
	n = strlen(s) - strlen(from) + strlen(to);
	out = malloc(n + 1);
	assert_non_null(out);
	memcpy(out, s, (size_t)(at - s));
	strcpy(out + (at - s), to);
	strcat(out, at + strlen(from));
	return out;
}

/* The pinned canonical receipt edited (from → to) and signed by pk: what a
 * trusted attester running some other signer could hand over. */
static char *
signed_edit(const char *from, const char *to, EVP_PKEY *pk)
{
	char *c = replace_once(PINNED_CANON, from, to), *env;

	env = sign_bytes(c, strlen(c), pk);
	free(c);
	return env;
}

/* A receipt a trusted attester could sign with some other signer than
 * receipt sign: the report's cases (and ran_at, and deployment) under a
 * facts map that says all five facts are true, naming the suite by id,
 * version and digest as given, in canonical form. The report is kept. */
static char *
forge(json_t *report, const char *id, const char *version,
    const char *digest, size_t *len)
{
	json_t *facts = json_object(), *obj;
	char *c;
	size_t i;

	assert_non_null(facts);
	for (i = 0; i < RECEIPT_NFACTS; i++)
		assert_int_equal(json_object_set_new(facts, receipt_fact_name(i),
		    json_true()), 0);
	obj = json_pack("{s:s, s:s, s:s, s:O, s:o, s:O, s:{s:s, s:s, s:s}}",
	    "schema", RECEIPT_SCHEMA, "provider", RECEIPT_PROVIDER,
	    "provider_revision", "0.1.0+sha256:" SHA_EMPTY,
	    "ran_at", json_object_get(report, "ran_at"), "facts", facts,
	    "cases", json_object_get(report, "cases"),
	    "suite", "id", id, "version", version, "digest", digest);
	assert_non_null(obj);
	if (json_object_get(report, "deployment") != NULL)
		assert_int_equal(json_object_set(obj, "deployment",
		    json_object_get(report, "deployment")), 0);
	c = canon_dump(obj, len);
	assert_non_null(c);
	json_decref(obj);
	return c;
}

/* forge() under the test suite's own name, signed by pk. */
static char *
forged_envelope(json_t *report, EVP_PKEY *pk)
{
	size_t len;
	char *c = forge(report, "unit", "3", SUITE_DIGEST, &len), *env;

	env = sign_bytes(c, len, pk);
	free(c);
	return env;
}
/* ---- pinned bytes ---- */

static void
test_canonical_bytes_of_pinned_report_are_exact(void **state)
{
	static const size_t flags[] = {
		JSON_COMPACT, JSON_INDENT(4) | JSON_SORT_KEYS, JSON_ENSURE_ASCII
	};
	json_t *r;
	char *c, *text;
	size_t len, i;

	(void)state;
	c = canon_of(pinned_report, SHA_EMPTY, &len);
	assert_string_equal(c, PINNED_CANON);
	assert_int_equal(len, strlen(PINNED_CANON));
	free(c);
	/* Any other spelling of the same report: the same bytes. */
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		r = pinned();
		text = json_dumps(r, flags[i]);
		assert_non_null(text);
		c = canon_of(text, SHA_EMPTY, &len);
		assert_string_equal(c, PINNED_CANON);
		free(c);
		free(text);
		json_decref(r);
	}
}

static void
test_envelope_matches_node_signature_for_rfc8032_key(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	struct receipt_verdict v;
	char *env;

	(void)state;
	env = sign_bytes(PINNED_CANON, strlen(PINNED_CANON), k);
	assert_string_equal(env, PINNED_ENVELOPE);
	v = grade(kr, PINNED_ENVELOPE, SHA_EMPTY, 0);
	assert_int_equal(v.grade, RECEIPT_SECURITY_BOUNDARY);
	assert_int_equal(v.reason, RECEIPT_OK);
	assert_string_equal(v.key_id, RFC_KEY_ID);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_signed_message_is_context_nul_then_receipt(void **state)
{
	static const char ctx[] = "egress-guard.sandbox-egress-conformance.v1";
	unsigned char *m;
	size_t len;

	(void)state;
	m = receipt_signed_message("{}", 2, &len);
	assert_non_null(m);
	assert_int_equal(len, sizeof(ctx) + 2);
	assert_memory_equal(m, ctx, sizeof(ctx));	/* with the 0x00 */
	assert_memory_equal(m + sizeof(ctx), "{}", 2);
	free(m);
}

/* ---- round trip ---- */

static void
test_sign_then_verify_is_security_boundary(void **state)
{
	EVP_PKEY *k = gen_key("ED25519"), *other = gen_key("ED25519");
	struct bundle_keyring *kr = ring(other, k);
	struct receipt_verdict v;
	char id[BUNDLE_KEY_ID_LEN + 1], err[128], *env;
	json_t *r = pinned();

	(void)state;
	/* A version with build metadata keeps its own '+'. */
	set_str(r, "version", "0.1.0+git.ab12");
	env = envelope_of(r, SHA_ABC, k);
	assert_true(strlen(env) + 1 <= RECEIPT_MAX_BYTES);
	v = grade(kr, env, SHA_ABC, 0);
	assert_int_equal(v.grade, RECEIPT_SECURITY_BOUNDARY);
	assert_int_equal(v.reason, RECEIPT_OK);
	assert_int_equal(bundle_key_id(k, id, err, sizeof(err)), 0);
	assert_string_equal(v.key_id, id);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
	EVP_PKEY_free(other);
}

/* Appends n copies of the first case (with a 1000-byte probe). */
static void
add_bulk_cases(json_t *r, const char *prefix, size_t n)
{
	json_t *cases = json_object_get(r, "cases"), *c;
	char id[32], probe[1001];
	size_t i;

	memset(probe, 'p', sizeof(probe) - 1);
	probe[sizeof(probe) - 1] = '\0';
	for (i = 0; i < n; i++) {
		c = json_deep_copy(json_array_get(cases, 0));
		assert_non_null(c);
		snprintf(id, sizeof(id), "%s-%zu", prefix, i);
		set_str(c, "id", id);
		set_str(c, "probe", probe);
		assert_int_equal(json_array_append_new(cases, c), 0);
	}
}

static void
test_large_receipt_near_the_size_bound_round_trips(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	json_t *r = pinned();
	char err[256] = "", *text, *canon, *env;
	size_t len;

	(void)state;
	/* About 700 KB of canonical receipt: under the envelope bound once
	 * base64 (4/3) is added. */
	add_bulk_cases(r, "bulk", 600);
	text = json_dumps(r, JSON_COMPACT);
	assert_non_null(text);
	canon = canon_of(text, SHA_EMPTY, &len);
	assert_true(len > 650000);
	env = sign_bytes(canon, len, k);
	assert_true(strlen(env) + 1 <= RECEIPT_MAX_BYTES);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK);
	free(env);
	free(canon);
	free(text);
	/* A report that still parses but whose envelope would not fit:
	 * refused at signing, never truncated. */
	add_bulk_cases(r, "more", 120);
	text = json_dumps(r, JSON_COMPACT);
	assert_non_null(text);
	canon = canon_of(text, SHA_EMPTY, &len);
	assert_null(receiptcmd_sign_envelope(canon, len, k, err, sizeof(err)));
	assert_non_null(strstr(err, "too large"));
	free(canon);
	free(text);
	json_decref(r);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* ---- tampering: never security_boundary ---- */

static void
expect_tampered(const char *env, const char *from, const char *to,
    const struct bundle_keyring *kr)
{
	char *rec, *bad, *benv;
	size_t len;

	rec = receipt_of(env, &len);
	bad = replace_once(rec, from, to);
	benv = with_receipt(env, bad, strlen(bad));
	expect_grade(kr, benv, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_BAD_SIGNATURE);
	free(benv);
	free(bad);
	free(rec);
}

static void
test_tampered_fact_is_bad_signature(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	json_t *r = pinned();
	char *env;

	(void)state;
	env = envelope_of(pinned(), SHA_EMPTY, k);
	expect_tampered(env, "\"default_deny\":true",
	    "\"default_deny\":false", kr);
	free(env);
	/* The dangerous direction: a false fact flipped to true. */
	set_str(case_of(r, "dd-03"), "verdict", "fail");
	env = envelope_of(r, SHA_EMPTY, k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	expect_tampered(env, "\"default_deny\":false",
	    "\"default_deny\":true", kr);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_tampered_case_verdict_is_bad_signature(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	json_t *r = pinned();
	char *env;

	(void)state;
	drop_case(r, "dd-90");		/* the one inconclusive case */
	set_str(case_of(r, "rr-01"), "verdict", "inconclusive");
	env = envelope_of(r, SHA_EMPTY, k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	expect_tampered(env, "\"verdict\":\"inconclusive\"",
	    "\"verdict\":\"pass\"", kr);
	expect_tampered(env, "\"id\":\"rr-01\"", "\"id\":\"rr-02\"", kr);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_tampered_ran_at_is_bad_signature(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char *env;

	(void)state;
	env = envelope_of(pinned(), SHA_EMPTY, k);
	expect_tampered(env, "2026-11-29T10:00:00Z", "2026-11-29T10:00:01Z",
	    kr);
	expect_tampered(env, SHA_EMPTY, SHA_ABC, kr);	/* the revision */
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_flipped_bit_anywhere_in_receipt_bytes_is_bad_signature(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	char *bad = strdup(PINNED_CANON), *env;
	size_t i, n = strlen(PINNED_CANON);

	(void)state;
	assert_non_null(bad);
	for (i = 0; i < n; i++) {
		bad[i] ^= (char)(1 << (i % 8));
		env = with_receipt(PINNED_ENVELOPE, bad, n);
		expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
		    RECEIPT_BAD_SIGNATURE);
		free(env);
		bad[i] ^= (char)(1 << (i % 8));
	}
	free(bad);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_flipped_bit_anywhere_in_envelope_never_security_boundary(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	char *bad = strdup(PINNED_ENVELOPE), err[1024];
	size_t i, n = strlen(PINNED_ENVELOPE);
	struct receipt_check chk = check_for(SHA_EMPTY);
	struct receipt_verdict v;
	int rc;

	(void)state;
	assert_non_null(bad);
	for (i = 0; i < n; i++) {
		bad[i] ^= (char)(1 << (i % 8));
		rc = receipt_verify(kr, bad, n, &chk, &v, err, sizeof(err));
		if (rc == 0 && v.grade == RECEIPT_SECURITY_BOUNDARY)
			fail_msg("byte %zu flipped still grades "
			    "security_boundary", i);
		check_err(err);
		bad[i] ^= (char)(1 << (i % 8));
	}
	free(bad);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* ---- revision, signer ---- */

static void
test_swapped_revision_is_revision_mismatch(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);

	(void)state;
	/* Signed for SHA_EMPTY; the binary in hand hashes otherwise. */
	expect_grade(kr, PINNED_ENVELOPE, SHA_ABC, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_REVISION_MISMATCH);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_signer_not_in_attesters_is_untrusted(void **state)
{
	EVP_PKEY *k = rfc_key(), *a = gen_key("ED25519"), *b = gen_key("ED25519");
	struct bundle_keyring *kr = ring(a, b), *empty = ring(NULL, NULL);
	struct receipt_verdict v;

	(void)state;
	expect_grade(kr, PINNED_ENVELOPE, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_UNTRUSTED_SIGNER);
	expect_grade(empty, PINNED_ENVELOPE, SHA_EMPTY,
	    RECEIPT_ADVISORY_FILTER, RECEIPT_UNTRUSTED_SIGNER);
	v = grade(NULL, PINNED_ENVELOPE, SHA_EMPTY, 0);
	assert_int_equal(v.reason, RECEIPT_UNTRUSTED_SIGNER);
	assert_string_equal(v.key_id, RFC_KEY_ID);
	bundle_keyring_free(kr);
	bundle_keyring_free(empty);
	EVP_PKEY_free(k);
	EVP_PKEY_free(a);
	EVP_PKEY_free(b);
}

/* An envelope naming a trusted key but signed by another. */
static void
test_trusted_key_id_with_foreign_signature_is_bad_signature(void **state)
{
	EVP_PKEY *k = rfc_key(), *mallory = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char *env, *forged;

	(void)state;
	env = sign_bytes(PINNED_CANON, strlen(PINNED_CANON), mallory);
	forged = with_field(env, "key_id", json_string(RFC_KEY_ID));
	expect_grade(kr, forged, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_BAD_SIGNATURE);
	free(forged);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
	EVP_PKEY_free(mallory);
}

/* A policy-bundle signature (another context) is no receipt signature. */
static void
test_policy_bundle_context_cannot_pass_as_receipt(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char sig[64], *m;
	char s64[89], *env;
	size_t mlen, slen = sizeof(sig);

	(void)state;
	assert_non_null(ctx);
	m = bundle_signed_message(PINNED_CANON, strlen(PINNED_CANON), &mlen);
	assert_non_null(m);
	assert_int_equal(EVP_DigestSignInit(ctx, NULL, NULL, NULL, k), 1);
	assert_int_equal(EVP_DigestSign(ctx, sig, &slen, m, mlen), 1);
	EVP_EncodeBlock((unsigned char *)s64, sig, (int)slen);
	env = with_field(PINNED_ENVELOPE, "signature", json_string(s64));
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_BAD_SIGNATURE);
	free(env);
	/* And a bundle is not an envelope at all. */
	expect_malformed(kr, "{\"schema\":\"egress-guard.bundle.v1\",\"key_id\":"
	    "\"" RFC_KEY_ID "\",\"policy\":\"e30=\",\"signature\":\"\"}");
	free(m);
	EVP_MD_CTX_free(ctx);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* ---- facts: recomputed, never copied ---- */

static void
expect_fact(const char *text, size_t fact, int want, const char *note_has)
{
	struct receipt_report *r = parse_ok(text);
	char note[256];

	assert_int_equal(receipt_report_fact(r, fact, note, sizeof(note)),
	    want);
	if (note_has == NULL) {
		assert_string_equal(note, "");
	} else if (strstr(note, note_has) == NULL) {
		fail_msg("note \"%s\" does not contain \"%s\"", note, note_has);
	}
	receipt_report_free(r);
}

/* index of a fact name in receipt_fact_name order */
static size_t
fact_ix(const char *name)
{
	size_t i;

	for (i = 0; i < RECEIPT_NFACTS; i++)
		if (strcmp(receipt_fact_name(i), name) == 0)
			return i;
	fail_msg("no fact %s", name);
	return 0;
}

/* The report (consumed) signs into a receipt that grades advisory_filter
 * for facts_incomplete, with fact false in the signed bytes. */
static void
expect_signed_short_of_boundary(json_t *r, const char *fact)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char want[128], *env, *rec;
	size_t len;

	env = envelope_of(r, SHA_EMPTY, k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	rec = receipt_of(env, &len);
	snprintf(want, sizeof(want), "\"%s\":false", fact);
	assert_non_null(strstr(rec, want));
	free(rec);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_report_with_four_facts_never_security_boundary(void **state)
{
	json_t *r = pinned();
	char *text;

	(void)state;
	/* Its cases all pass, but the report does not claim the fact. */
	assert_int_equal(json_object_del(json_object_get(r, "facts"),
	    "default_deny"), 0);
	text = text_of(r);
	expect_fact(text, fact_ix("default_deny"), 0,
	    "fact default_deny is not claimed true by the report");
	expect_fact(text, fact_ix("redirect_recheck"), 1, NULL);
	free(text);
	expect_signed_short_of_boundary(r, "default_deny");
}

static void
test_report_fact_false_stays_false_though_cases_pass(void **state)
{
	json_t *r = pinned();

	(void)state;
	assert_int_equal(json_object_set_new(json_object_get(r, "facts"),
	    "authority_separation", json_false()), 0);
	expect_signed_short_of_boundary(r, "authority_separation");
}

static void
test_report_fact_true_but_case_inconclusive_is_false(void **state)
{
	json_t *r = pinned();
	char *text;

	(void)state;
	/* The control did not flip: the runner says inconclusive. */
	set_str(case_of(r, "as-03"), "control", "400");
	set_str(case_of(r, "as-03"), "verdict", "inconclusive");
	text = text_of(r);
	expect_fact(text, fact_ix("authority_separation"), 0,
	    "case as-03 (suite unit) does not pass");
	free(text);
	expect_signed_short_of_boundary(r, "authority_separation");
}

static void
test_report_fact_true_but_case_failing_is_false(void **state)
{
	json_t *r = pinned();
	char *text;

	(void)state;
	/* The fact's second case fails, after a passing one. */
	set_str(case_of(r, "edm-02"), "observed", "allow");
	set_str(case_of(r, "edm-02"), "verdict", "fail");
	text = text_of(r);
	expect_fact(text, fact_ix("exact_destination_match"), 0,
	    "case edm-02 (suite unit) does not pass");
	free(text);
	expect_signed_short_of_boundary(r, "exact_destination_match");
}

static void
test_report_fact_true_without_cases_is_false(void **state)
{
	json_t *r = pinned(), *cases;
	char *text;
	size_t i;

	(void)state;
	cases = json_object_get(r, "cases");
	for (i = 0; i < json_array_size(cases); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(
		    cases, i), "fact")), "redirect_recheck") == 0)
			assert_int_equal(json_array_remove(cases, i), 0);
	text = text_of(r);
	expect_fact(text, fact_ix("redirect_recheck"), 0,
	    "case rr-01 (suite unit) is missing");
	free(text);
	expect_signed_short_of_boundary(r, "redirect_recheck");
}

/* A runner bug that writes "pass" over a result that is not one. */
static void
test_report_refuses_pass_that_contradicts_its_strings(void **state)
{
	json_t *r;

	(void)state;
	r = pinned();
	set_str(case_of(r, "edm-01"), "observed", "allow");
	refuse_report(r, "case edm-01: verdict pass, but observed differs");
	r = pinned();
	set_str(case_of(r, "as-03"), "control", "400");	/* did not flip */
	refuse_report(r, "case as-03: verdict pass");
	r = pinned();
	set_str(case_of(r, "ctpa-08"), "control_expected", "deny");
	refuse_report(r, "case ctpa-08: verdict pass");
	/* A control that reached nothing has no evidence: not a pass. */
	r = pinned();
	set_str(case_of(r, "rr-01"), "control_evidence", "");
	refuse_report(r, "case rr-01: verdict pass");
	/* Negative control: the same case said inconclusive is signed. */
	r = pinned();
	set_str(case_of(r, "rr-01"), "control_evidence", "");
	set_str(case_of(r, "rr-01"), "verdict", "inconclusive");
	{
		char *text = text_of(r);

		receipt_report_free(parse_ok(text));
		free(text);
	}
	json_decref(r);
}

static void
test_report_refuses_unknown_or_bad_keys(void **state)
{
	/* Not RFC 3339 UTC; the last three are days the month does not
	 * have: the 31st of a 30-day month, 29 February outside a leap
	 * year. */
	static const char *const bad_ran_at[] = { "2026-11-29 10:00:00",
	    "2026-13-29T10:00:00Z", "2026-11-29T10:00:00+01:00",
	    "2026-04-31T00:00:00Z", "2026-02-29T00:00:00Z",
	    "2100-02-29T00:00:00Z" };
	json_t *r;
	size_t i;

	(void)state;
	r = pinned();
	set_str(r, "summary", "all good");
	refuse_report(r, "report: unknown key \"summary\"");
	r = pinned();
	set_str(case_of(r, "rr-01"), "note", "x");
	refuse_report(r, "cases[3]: unknown key \"note\"");
	r = pinned();
	assert_int_equal(json_object_set_new(json_object_get(r, "facts"),
	    "no_egress_at_all", json_true()), 0);
	refuse_report(r, "facts: unknown fact \"no_egress_at_all\"");
	r = pinned();
	assert_int_equal(json_object_set_new(json_object_get(r, "facts"),
	    "default_deny", json_string("true")), 0);
	refuse_report(r, "facts: \"default_deny\" must be true or false");
	r = pinned();
	set_str(case_of(r, "dd-03"), "fact", "default_deny ");
	refuse_report(r, "case dd-03: unknown fact");
	r = pinned();
	set_str(case_of(r, "dd-03"), "verdict", "PASS");
	refuse_report(r, "case dd-03: verdict must be");
	r = pinned();
	set_str(case_of(r, "dd-03"), "id", "edm-01");
	refuse_report(r, "duplicate id \"edm-01\"");
	r = pinned();
	set_str(case_of(r, "dd-03"), "id", "dd 03");
	refuse_report(r, "id \"dd 03\" must be");
	r = pinned();
	assert_int_equal(json_object_del(case_of(r, "dd-03"), "probe"), 0);
	refuse_report(r, "\"probe\" missing or not a string");
	r = pinned();
	assert_int_equal(json_object_set_new(case_of(r, "dd-03"), "expected",
	    json_integer(1)), 0);
	refuse_report(r, "\"expected\" missing or not a string");
	r = pinned();
	set_str(r, "schema", "egress-guard.conformance-report.v1");
	refuse_report(r, "report: schema must be");
	/* Version 2: every case has its control's words and evidence, and
	 * the report names the suite it was run under. */
	r = pinned();
	assert_int_equal(json_object_del(case_of(r, "as-03"),
	    "control_expected"), 0);
	refuse_report(r, "\"control_expected\" missing or not a string");
	r = pinned();
	assert_int_equal(json_object_del(case_of(r, "as-03"),
	    "control_evidence"), 0);
	refuse_report(r, "\"control_evidence\" missing or not a string");
	r = pinned();
	assert_int_equal(json_object_set_new(case_of(r, "as-03"),
	    "control_evidence", json_null()), 0);
	refuse_report(r, "\"control_evidence\" missing or not a string");
	r = pinned();
	assert_int_equal(json_object_del(r, "suite"), 0);
	refuse_report(r, "\"suite\" missing or not a string");
	r = pinned();
	assert_int_equal(json_object_set_new(r, "suite", json_integer(1)), 0);
	refuse_report(r, "\"suite\" missing or not a string");
	r = pinned();
	set_str(r, "suite", "lab");
	refuse_report(r, "report: suite \"lab\" is not one this program "
	    "grades by");
	r = pinned();
	set_str(r, "suite", "unit\n");
	refuse_report(r, "report: suite \"unit\\x0a\" is not one");
	r = pinned();
	set_str(r, "provider", "other-guard");
	refuse_report(r, "report: provider must be");
	r = pinned();
	set_str(r, "version", "0.1.0 beta");
	refuse_report(r, "report: version");
	for (i = 0; i < sizeof(bad_ran_at) / sizeof(bad_ran_at[0]); i++) {
		r = pinned();
		set_str(r, "ran_at", bad_ran_at[i]);
		refuse_report(r, "report: ran_at");
	}
	r = pinned();
	assert_int_equal(json_object_del(r, "cases"), 0);
	refuse_report(r, "\"facts\" and \"cases\" are required");
	r = pinned();
	assert_int_equal(json_object_set_new(r, "cases", json_object()), 0);
	refuse_report(r, "\"cases\" must be an array");
	r = pinned();
	assert_int_equal(json_object_set_new(r, "guard_binary",
	    json_null()), 0);
	refuse_report(r, "\"guard_binary\" missing or not a string");
	/* The hash of the binary that ran: required, exactly 64 lowercase
	 * hex digits (one spelling, so the comparison is a strcmp). */
	r = pinned();
	assert_int_equal(json_object_del(r, "guard_sha256"), 0);
	refuse_report(r, "\"guard_sha256\" missing or not a string");
	r = pinned();
	set_str(r, "guard_sha256", "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA4"
	    "95991B7852B855");
	refuse_report(r, "report: guard_sha256 must be 64 lowercase hex");
	r = pinned();
	set_str(r, "guard_sha256", SHA_EMPTY "0");
	refuse_report(r, "report: guard_sha256 must be 64 lowercase hex");
	r = pinned();
	set_str(r, "guard_sha256", "sha256:" SHA_EMPTY);
	refuse_report(r, "report: guard_sha256 must be 64 lowercase hex");
	refuse_report_text("", "empty report");
	refuse_report_text("[]", "report must be a JSON object");
	refuse_report_text("{\"schema\":1,\"schema\":2}", "duplicate key");
	refuse_report_text("{\"a\":", "not valid JSON");
}

/* Fractional seconds are RFC 3339 too; they survive into the receipt. */
static void
test_report_accepts_fractional_ran_at(void **state)
{
	static const char *const ok[] = { "2026-01-31T00:00:00Z",
	    "2026-04-30T00:00:00Z", "2026-02-28T23:59:60Z",
	    "2024-02-29T00:00:00Z", "2000-02-29T00:00:00Z" };
	json_t *r = pinned();
	char *text, *c;
	size_t len, i;

	(void)state;
	set_str(r, "ran_at", "2026-11-29T10:00:00.123456Z");
	text = text_of(r);
	c = canon_of(text, SHA_EMPTY, &len);
	assert_non_null(strstr(c, "\"ran_at\":\"2026-11-29T10:00:00.123456Z\""));
	free(c);
	free(text);
	json_decref(r);
	/* The control of the day checks: the last day of each kind of
	 * month, and 29 February of leap years (2000 and 2024). */
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		r = pinned();
		set_str(r, "ran_at", ok[i]);
		text = text_of(r);
		c = canon_of(text, SHA_EMPTY, &len);
		free(c);
		free(text);
		json_decref(r);
	}
}

/* ---- what a trusted attester signs is still checked ---- */

/* The pinned receipt edited (from → to), signed by k, graded
 * facts_incomplete under kr, the message holding want. */
static void
expect_edit_incomplete(const struct bundle_keyring *kr, EVP_PKEY *k,
    const char *from, const char *to, const char *want)
{
	struct receipt_check chk = check_for(SHA_EMPTY);
	char *env = signed_edit(from, to, k);

	expect_grade_chk(kr, env, &chk, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE, want);
	free(env);
}

static void
test_signed_receipt_claiming_unproved_fact_never_security_boundary(
    void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);

	(void)state;
	/* facts map all true, a case failing. */
	expect_edit_incomplete(kr, k, "\"observed\":\"400\",\"probe\":\"GET "
	    "/v1/status\\r\\n over the workload listener\",\"verdict\":\"pass\"",
	    "\"observed\":\"400\",\"probe\":\"GET /v1/status\\r"
	    "\\n over the workload listener\",\"verdict\":\"fail\"",
	    "fact authority_separation is false: case as-03 (suite unit) does "
	    "not pass");
	/* "pass" over an observation that differs from the expectation. */
	expect_edit_incomplete(kr, k, "\"observed\":\"400\"",
	    "\"observed\":\"403\"",
	    "case as-03 (suite unit) observed what the suite does not expect");
	/* "pass" with a control that did not flip. */
	expect_edit_incomplete(kr, k, "\"control\":\"reached\"",
	    "\"control\":\"blocked\"",
	    "case dd-03 (suite unit) has a control the suite does not expect");
	/* "pass" with a control that reached nothing. */
	expect_edit_incomplete(kr, k, "listener pub443: 1 connection, 517",
	    "listener pub443: 0 connections, 517",
	    "case edm-01 (suite unit) has no live evidence of its control");
	/* Four facts in the map. */
	expect_edit_incomplete(kr, k, "\"default_deny\":true,", "",
	    "fact default_deny is false");
	/* A fact without its required case (dd-90, which the suite does not
	 * name, is still there). */
	expect_edit_incomplete(kr, k, ",{\"control\":\"reached\","
	    "\"control_evidence\":\"counter in-icmp: 1 packet\","
	    "\"control_expected\":\"reached\",\"expected\":\"blocked\","
	    "\"fact\":\"default_deny\",\"id\":\"dd-03\",\"observed\":\"blocked\","
	    "\"probe\":\"ICMP echo\\t(ping -c1) \\\\ \\u00e9\\ud83d\\ude00 "
	    "\\u007f\\u0001\",\"verdict\":\"pass\"}", "",
	    "fact default_deny is false: case dd-03 (suite unit) is missing");
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_signed_receipt_with_empty_facts_is_unsupported(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char *c, *env;

	(void)state;
	c = replace_once(PINNED_CANON, "\"facts\":{\"authority_separation\":"
	    "true,\"connect_time_public_address\":true,\"default_deny\":true,"
	    "\"exact_destination_match\":true,\"redirect_recheck\":true}",
	    "\"facts\":{}");
	env = sign_bytes(c, strlen(c), k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_UNSUPPORTED,
	    RECEIPT_NO_SELECTOR);
	/* Still bound to the binary: for another one it is advisory. */
	expect_grade(kr, env, SHA_ABC, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_REVISION_MISMATCH);
	free(env);
	free(c);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_signed_non_canonical_receipt_is_malformed(void **state)
{
	static const char *const edits[][2] = {
		{ "{\"cases\":[", "{ \"cases\":[" },		/* whitespace */
		{ "\"provider\":\"egress-guard\",\"provider_revision\"",
		  "\"provider_revision\"" },			/* key missing */
		{ "\\u2192", "\\u21A0" },			/* hex case */
		{ "public\\u2192private", "public\xe2\x86\x92private" },
		{ "\\u007f", "\x7f" },				/* raw DEL */
		{ "/v1/status", "\\/v1\\/status" },		/* escaped / */
		{ "\"id\":\"edm-01\",\"observed\"",
		  "\"observed\":\"deny not_allowlisted\",\"id\":\"edm-01\","
		  "\"observed\"" },				/* dup key */
		{ "\"schema\":\"egress-guard.conformance.v2\"",
		  "\"schema\":\"egress-guard.conformance.v1\"" },
		{ "\"provider\":\"egress-guard\"", "\"provider\":\"other\"" },
		{ "0.1.0+sha256:", "0.1.0+sha1:" },
		{ "\"default_deny\":true", "\"default_deny\":1" },
		{ "\"ran_at\":\"2026", "\"x\":true,\"ran_at\":\"2026" },
	};
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char *env;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		env = signed_edit(edits[i][0], edits[i][1], k);
		expect_malformed(kr, env);
		free(env);
	}
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* ---- the envelope ---- */

static void
test_envelope_refusals_are_malformed(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	char *env, *s64, upper[BUNDLE_KEY_ID_LEN + 1];
	size_t i;

	(void)state;
	env = with_field(PINNED_ENVELOPE, "extra", json_string("x"));
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "signature", NULL);
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "schema",
	    json_string("egress-guard.bundle.v1"));
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "key_id", json_integer(1));
	expect_malformed(kr, env);
	free(env);
	for (i = 0; i < BUNDLE_KEY_ID_LEN; i++)
		upper[i] = RFC_KEY_ID[i] >= 'a' ? (char)(RFC_KEY_ID[i] - 32) :
		    RFC_KEY_ID[i];
	upper[BUNDLE_KEY_ID_LEN] = '\0';
	env = with_field(PINNED_ENVELOPE, "key_id", json_string(upper));
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "receipt", json_string(""));
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "receipt", json_string("e30"));
	expect_malformed(kr, env);				/* no padding */
	free(env);
	env = with_field(PINNED_ENVELOPE, "receipt", json_string("e3 0="));
	expect_malformed(kr, env);
	free(env);
	env = with_field(PINNED_ENVELOPE, "receipt", json_string("e31="));
	expect_malformed(kr, env);			/* unused bits set */
	free(env);
	/* A signature of the wrong length is a bad signature, not a grade
	 * of anything better. */
	s64 = strdup("AAAA");
	env = with_field(PINNED_ENVELOPE, "signature", json_string(s64));
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_BAD_SIGNATURE);
	free(env);
	free(s64);
	expect_malformed(kr, "");
	expect_malformed(kr, "[]");
	expect_malformed(kr, "null");
	expect_malformed(kr, PINNED_ENVELOPE "x");
	env = replace_once(PINNED_ENVELOPE, "\"key_id\"",
	    "\"key_id\":\"x\",\"key_id\"");
	expect_malformed(kr, env);				/* duplicate */
	free(env);
	/* Trailing whitespace (the newline sign prints) is fine. */
	expect_grade(kr, PINNED_ENVELOPE "\n", SHA_EMPTY,
	    RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* One spelling per field, as for bundles: jansson would decode "\u0054"
 * to "T", so the same receipt would verify under a second envelope
 * spelling. Any escape in a key or value is malformed. */
static void
test_escaped_envelope_fields_are_malformed(void **state)
{
	static const char *const esc[][2] = {
		{ "\"signature\":\"a", "\"signature\":\"\\u0061" },
		{ "\"receipt\":\"e", "\"receipt\":\"\\u0065" },
		{ "\"key_id\":\"2", "\"key_id\":\"\\u0032" },
		{ "\"schema\":\"e", "\"schema\":\"\\u0065" },
		{ "\"schema\":", "\"\\u0073chema\":" },
		{ "\"signature\":\"a", "\"signature\":\"\\/a" },
	};
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	char *env;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
		env = replace_once(PINNED_ENVELOPE, esc[i][0], esc[i][1]);
		expect_malformed(kr, env);
		free(env);
	}
	/* Negative control: whitespace between tokens carries nothing. */
	env = replace_once(PINNED_ENVELOPE, "\",\"signature\":",
	    "\" ,\n \"signature\" : ");
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_envelope_larger_than_max_is_malformed(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	size_t n = RECEIPT_MAX_BYTES + 1, pl = strlen(PINNED_ENVELOPE);
	char *big = malloc(n + 1);

	(void)state;
	assert_non_null(big);
	memcpy(big, PINNED_ENVELOPE, pl);
	memset(big + pl, ' ', n - pl);
	big[n] = '\0';
	(void)grade_n(kr, big, n, SHA_EMPTY, -1);
	(void)grade_n(kr, big, n - 1, SHA_EMPTY, 0);	/* at the bound */
	free(big);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_verify_refuses_bad_binary_hash_argument(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	struct receipt_check chk = check_for(NULL);
	struct receipt_verdict v;
	char err[256];

	(void)state;
	assert_int_equal(receipt_verify(kr, PINNED_ENVELOPE,
	    strlen(PINNED_ENVELOPE), NULL, &v, err, sizeof(err)), -1);
	check_err(err);
	assert_int_equal(receipt_verify(kr, PINNED_ENVELOPE,
	    strlen(PINNED_ENVELOPE), &chk, &v, err, sizeof(err)), -1);
	check_err(err);
	chk.sha256 = "E3B0";
	assert_int_equal(receipt_verify(kr, PINNED_ENVELOPE,
	    strlen(PINNED_ENVELOPE), &chk, &v, err, sizeof(err)), -1);
	assert_int_equal(v.reason, RECEIPT_MALFORMED);
	chk.sha256 = SHA_EMPTY;		/* negative control */
	assert_int_equal(receipt_verify(kr, PINNED_ENVELOPE,
	    strlen(PINNED_ENVELOPE), &chk, &v, err, sizeof(err)), 0);
	assert_int_equal(v.reason, RECEIPT_OK);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* ---- grades ---- */

static void
test_grade_names_order_and_parse(void **state)
{
	static const char *const bad[] = {
		"", "Security_boundary", "advisory_filter ", "security",
		"none", "advisory-filter"
	};
	enum receipt_grade g;
	size_t i;

	(void)state;
	assert_true(RECEIPT_UNSUPPORTED < RECEIPT_ADVISORY_FILTER);
	assert_true(RECEIPT_ADVISORY_FILTER < RECEIPT_SECURITY_BOUNDARY);
	assert_int_equal(receipt_grade_parse("unsupported", &g), 0);
	assert_int_equal(g, RECEIPT_UNSUPPORTED);
	assert_int_equal(receipt_grade_parse("advisory_filter", &g), 0);
	assert_int_equal(g, RECEIPT_ADVISORY_FILTER);
	assert_int_equal(receipt_grade_parse("security_boundary", &g), 0);
	assert_int_equal(g, RECEIPT_SECURITY_BOUNDARY);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(receipt_grade_parse(bad[i], &g), -1);
	assert_int_equal(receipt_grade_parse(NULL, &g), -1);
	assert_true(receipt_grade_meets(RECEIPT_SECURITY_BOUNDARY,
	    RECEIPT_ADVISORY_FILTER));
	assert_true(receipt_grade_meets(RECEIPT_ADVISORY_FILTER,
	    RECEIPT_ADVISORY_FILTER));
	assert_false(receipt_grade_meets(RECEIPT_ADVISORY_FILTER,
	    RECEIPT_SECURITY_BOUNDARY));
	assert_false(receipt_grade_meets(RECEIPT_UNSUPPORTED,
	    RECEIPT_ADVISORY_FILTER));
	assert_string_equal(receipt_reason_name(RECEIPT_REVISION_MISMATCH),
	    "revision_mismatch");
	assert_string_equal(receipt_reason_name(RECEIPT_UNTRUSTED_SIGNER),
	    "untrusted_signer");
	assert_string_equal(receipt_fact_name(0), "authority_separation");
	assert_null(receipt_fact_name(RECEIPT_NFACTS));
}

/* ---- binary hashing and the attester directory ---- */

static void
test_file_sha256_known_vectors_and_bounds(void **state)
{
	char *d = tmp_dir(), *p, hex[RECEIPT_SHA256_HEX + 1], err[512];
	FILE *f;

	(void)state;
	p = write_tmp_in(d, "empty", "", 0);
	assert_int_equal(receipt_file_sha256(p, hex, err, sizeof(err)), 0);
	assert_string_equal(hex, SHA_EMPTY);
	free(p);
	p = write_tmp_in(d, "abc", "abc", 3);
	assert_int_equal(receipt_file_sha256(p, hex, err, sizeof(err)), 0);
	assert_string_equal(hex, SHA_ABC);
	free(p);
	/* A directory, a FIFO, a missing file. */
	assert_int_equal(receipt_file_sha256(d, hex, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	assert_true(asprintf(&p, "%s/fifo", d) > 0);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(receipt_file_sha256(p, hex, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	free(p);
	assert_true(asprintf(&p, "%s/missing", d) > 0);
	assert_int_equal(receipt_file_sha256(p, hex, err, sizeof(err)), -1);
	check_err(err);
	free(p);
	/* One byte past the bound (sparse). */
	assert_true(asprintf(&p, "%s/big", d) > 0);
	f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), (off_t)RECEIPT_BINARY_MAX + 1),
	    0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(receipt_file_sha256(p, hex, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "larger than"));
	free(p);
	rm_dir(d);
}

static void
test_load_attesters_reads_only_pub_pem_files(void **state)
{
	EVP_PKEY *a = gen_key("ED25519"), *b = gen_key("ED25519");
	EVP_PKEY *rsa = gen_key("X25519");
	struct bundle_keyring *kr;
	char *d = tmp_dir(), err[1024] = "";

	(void)state;
	kr = bundle_keyring_new();
	assert_int_equal(receiptcmd_load_attesters(kr, d, err, sizeof(err)),
	    0);					/* empty: no attester */
	write_key_in(d, "a.pub.pem", a, 0);
	write_key_in(d, "b.pub.pem", b, 0);
	write_key_in(d, "b.pem", b, 1);		/* private: not *.pub.pem */
	free(write_tmp_in(d, "README", "x", 1));
	free(write_tmp_in(d, ".junk.pub.pem", "x", 1));
	free(write_tmp_in(d, ".pub.pem", "x", 1));
	assert_int_equal(receiptcmd_load_attesters(kr, d, err, sizeof(err)),
	    2);
	assert_int_equal(bundle_keyring_count(kr), 2);
	bundle_keyring_free(kr);
	/* A private key, an RSA key or junk named *.pub.pem is an error. */
	write_key_in(d, "c.pub.pem", b, 1);
	kr = bundle_keyring_new();
	assert_int_equal(receiptcmd_load_attesters(kr, d, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "c.pub.pem: contains a private key"));
	bundle_keyring_free(kr);
	write_key_in(d, "c.pub.pem", rsa, 0);
	kr = bundle_keyring_new();
	assert_int_equal(receiptcmd_load_attesters(kr, d, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "not an Ed25519 key"));
	bundle_keyring_free(kr);
	kr = bundle_keyring_new();
	assert_int_equal(receiptcmd_load_attesters(kr, "/nonexistent/eg",
	    err, sizeof(err)), -1);
	check_err(err);
	bundle_keyring_free(kr);
	rm_dir(d);
	EVP_PKEY_free(a);
	EVP_PKEY_free(b);
	EVP_PKEY_free(rsa);
}

static void
test_sign_envelope_refuses_non_ed25519_and_nothing(void **state)
{
	EVP_PKEY *rsa = gen_key("X25519"), *k = gen_key("ED25519");
	char err[512] = "";

	(void)state;
	assert_null(receiptcmd_sign_envelope(PINNED_CANON,
	    strlen(PINNED_CANON), rsa, err, sizeof(err)));
	check_err(err);
	assert_null(receiptcmd_sign_envelope(PINNED_CANON, 0, k, err,
	    sizeof(err)));
	assert_null(receiptcmd_sign_envelope(NULL, 1, k, err, sizeof(err)));
	assert_null(receiptcmd_sign_envelope(PINNED_CANON,
	    strlen(PINNED_CANON), NULL, err, sizeof(err)));
	assert_null(receiptcmd_sign_envelope(PINNED_CANON,
	    (size_t)RECEIPT_MAX_BYTES, k, err, sizeof(err)));
	assert_non_null(strstr(err, "too large"));
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(k);
}

static void
test_canonical_refuses_bad_hash(void **state)
{
	struct receipt_report *r = parse_ok(pinned_report);
	char err[256] = "";
	size_t len;

	(void)state;
	assert_null(receipt_canonical(r, "E3B0C44298FC1C149AFBF4C8996FB92427AE"
	    "41E4649B934CA495991B7852B855", &len, err, sizeof(err)));
	assert_null(receipt_canonical(r, "e3b0", &len, err, sizeof(err)));
	assert_null(receipt_canonical(r, NULL, &len, err, sizeof(err)));
	assert_string_equal(receipt_report_guard_binary(r),
	    "/opt/eg/egress-guard");
	receipt_report_free(r);
}

/* A receipt certifies the binary the matrix ran: signing another one (a
 * binary modified or replaced after the run) is refused, and the error
 * names both hashes. */
static void
test_report_refuses_binary_changed_since_the_run(void **state)
{
	struct receipt_report *r = parse_ok(pinned_report);
	char err[512] = "";

	(void)state;
	assert_string_equal(receipt_report_guard_sha256(r), SHA_EMPTY);
	assert_int_equal(receipt_report_check_binary(r, SHA_ABC, err,
	    sizeof(err)), -1);
	check_err(err);
	assert_non_null(strstr(err, "sha256:" SHA_ABC));
	assert_non_null(strstr(err, "matrix ran sha256:" SHA_EMPTY));
	assert_int_equal(receipt_report_check_binary(r, NULL, err,
	    sizeof(err)), -1);
	assert_int_equal(receipt_report_check_binary(r, "e3b0", err,
	    sizeof(err)), -1);
	assert_int_equal(receipt_report_check_binary(NULL, SHA_EMPTY, err,
	    sizeof(err)), -1);
	/* Negative control: the binary that ran. */
	assert_int_equal(receipt_report_check_binary(r, SHA_EMPTY, err,
	    sizeof(err)), 0);
	receipt_report_free(r);
}

/* The Docker target's evidence: signed into the receipt, its tampering
 * caught by the signature like any other byte. */
static json_t *
docker_deployment(void)
{
	json_t *d = json_pack("{s:s, s:s, s:s, s:s, s:s}", "target", "docker",
	    "layout", "a", "engine", "docker 20.10.24+dfsg1", "image_id",
	    "sha256:" SHA_ABC, "image_repo_digests", "none");

	assert_non_null(d);
	return d;
}

static void
test_deployment_evidence_is_signed_into_receipt(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	json_t *r = pinned();
	char *text, *c, *env;
	size_t len;

	(void)state;
	assert_int_equal(json_object_set_new(r, "deployment",
	    docker_deployment()), 0);
	text = text_of(r);
	c = canon_of(text, SHA_ABC, &len);
	assert_non_null(strstr(c, ",\"deployment\":{\"engine\":\"docker "
	    "20.10.24+dfsg1\",\"image_id\":\"sha256:" SHA_ABC "\","
	    "\"image_repo_digests\":\"none\",\"layout\":\"a\","
	    "\"target\":\"docker\"},\"facts\":"));
	free(c);
	free(text);
	env = envelope_of(r, SHA_ABC, k);
	expect_grade(kr, env, SHA_ABC, RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK);
	expect_tampered(env, "\"layout\":\"a\"", "\"layout\":\"b\"", kr);
	free(env);
	/* Negative control: without it the receipt says nothing of one. */
	c = canon_of(pinned_report, SHA_ABC, &len);
	assert_null(strstr(c, "deployment"));
	free(c);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_report_refuses_malformed_deployment(void **state)
{
	json_t *r, *d;
	char key[8], big[RECEIPT_DEPLOY_VALUE + 2];
	int i;

	(void)state;
	r = pinned();
	set_str(r, "deployment", "docker");
	refuse_report(r, "deployment must be an object");
	r = pinned();
	assert_int_equal(json_object_set_new(r, "deployment", json_object()), 0);
	refuse_report(r, "deployment must be an object");
	r = pinned();
	d = docker_deployment();
	assert_int_equal(json_object_del(d, "image_id"), 0);
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment lacks \"image_id\"");
	r = pinned();
	d = docker_deployment();
	set_str(d, "Engine", "x");
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment key \"Engine\" must be 1-32 of [a-z_]");
	r = pinned();
	d = docker_deployment();
	set_str(d, "layout", "a\nfacts: all true");
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment \"layout\" must be printable ASCII");
	r = pinned();
	d = docker_deployment();
	assert_int_equal(json_object_set_new(d, "engine", json_pack("{s:s}",
	    "version", "20.10")), 0);
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment \"engine\" must be a string");
	r = pinned();
	d = docker_deployment();
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	set_str(d, "engine", big);
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment \"engine\" must be a string of 1-256");
	r = pinned();
	d = docker_deployment();
	for (i = 0; i < RECEIPT_DEPLOY_KEYS; i++) {
		snprintf(key, sizeof(key), "k_%c", 'a' + i);
		set_str(d, key, "v");
	}
	assert_int_equal(json_object_set_new(r, "deployment", d), 0);
	refuse_report(r, "deployment must be an object of 1-16");
	/* Negative control: the well-formed one passes. */
	r = pinned();
	assert_int_equal(json_object_set_new(r, "deployment",
	    docker_deployment()), 0);
	{
		char *text = text_of(r);

		receipt_report_free(parse_ok(text));
		free(text);
	}
	json_decref(r);
}

/* ---- issue 29: hollow reports, signed by a trusted attester ---- */

/* What a trusted attester makes of the report r (consumed), two ways:
 * signed with receipt sign (facts recomputed from the suite: fact is
 * false, with a note holding note_want), and forged with every fact
 * claimed true in the signed map (the verifier recomputes). Both grade
 * advisory_filter for why, the message holding want. fact NULL: every
 * fact is proved, something else falls short. */
static void
expect_hollow(json_t *r, const char *fact, const char *note_want,
    enum receipt_reason why, const char *want)
{
	EVP_PKEY *k = attester;
	const struct bundle_keyring *kr = trusted;
	struct receipt_check chk = check_for(SHA_EMPTY);
	char *text = text_of(r), *env;
	size_t i;

	if (fact != NULL) {
		expect_fact(text, fact_ix(fact), 0, note_want);
	} else {
		for (i = 0; i < RECEIPT_NFACTS; i++)
			expect_fact(text, i, 1, NULL);
	}
	free(text);
	env = forged_envelope(r, k);
	expect_grade_chk(kr, env, &chk, RECEIPT_ADVISORY_FILTER, why, want);
	free(env);
	env = envelope_of(r, SHA_EMPTY, k);
	expect_grade_chk(kr, env, &chk, RECEIPT_ADVISORY_FILTER, why, want);
	free(env);
}

/* expect_hollow for the usual case: a fact false, its note and the
 * verifier's message both naming the case that made it so. */
static void
expect_fact_hollow(json_t *r, const char *fact, const char *why_case)
{
	expect_hollow(r, fact, why_case, RECEIPT_FACTS_INCOMPLETE, why_case);
}

/* The report r (consumed) signs, by receipt sign and forged, into
 * receipts that grade security_boundary: the negative control of a
 * hollow shape. */
static void
expect_whole(json_t *r)
{
	char *env;

	env = forged_envelope(r, attester);
	expect_grade(trusted, env, SHA_EMPTY, RECEIPT_SECURITY_BOUNDARY,
	    RECEIPT_OK);
	free(env);
	env = envelope_of(r, SHA_EMPTY, attester);
	expect_grade(trusted, env, SHA_EMPTY, RECEIPT_SECURITY_BOUNDARY,
	    RECEIPT_OK);
	free(env);
}

/* The pinned report with case id's key set to val. */
static json_t *
pinned_with(const char *id, const char *key, const char *val)
{
	json_t *r = pinned();

	set_str(case_of(r, id), key, val);
	return r;
}

/* The issue's first shape: one case per fact (the suite wants two for
 * exact_destination_match and authority_separation), nothing else. */
static json_t *
one_case_per_fact(void)
{
	json_t *r = pinned();

	drop_case(r, "edm-02");
	drop_case(r, "as-08");
	drop_case(r, "dd-90");
	return r;
}

/* Sets key to val on every case of r. */
static void
set_all_cases(json_t *r, const char *key, const char *val)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(r, "cases"), i, c)
		set_str(c, key, val);
}

/* Issue 29, hollow report 1 as filed: one case per fact, every control
 * "not run", no control_expected, ran_at 2020-01-01. */
static void
test_hostile_issue29_not_run_controls_never_security_boundary(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	json_t *r, *c;
	char *env;
	size_t i;

	(void)state;
	r = one_case_per_fact();
	set_all_cases(r, "control", "not run");
	set_str(r, "ran_at", "2020-01-01T00:00:00Z");
	json_array_foreach(json_object_get(r, "cases"), i, c)
		assert_int_equal(json_object_del(c, "control_expected"), 0);
	/* receipt sign refuses it: control_expected is required. */
	refuse_report(json_deep_copy(r), "\"control_expected\" missing or not "
	    "a string");
	/* Signed all the same, by hand: not a receipt at all. */
	env = forged_envelope(r, k);
	expect_malformed(kr, env);
	free(env);
	/* With control_expected "not run" and no evidence: still refused,
	 * a pass needs its control's evidence. */
	set_all_cases(r, "control_expected", "not run");
	set_all_cases(r, "control_evidence", "");
	refuse_report(json_deep_copy(r), "verdict pass, but observed differs "
	    "from expected, the control did not flip, or the control has no "
	    "evidence");
	/* With words for everything: signed, but stale, and with every
	 * fact false under the suite. */
	set_all_cases(r, "control_evidence", "listener none: 1 run");
	expect_hollow(json_deep_copy(r), "authority_separation",
	    "case as-03 (suite unit) has a control the suite does not expect",
	    RECEIPT_STALE, "ran_at 2020-01-01T00:00:00Z is older than 30 days");
	set_str(r, "ran_at", "2026-11-29T10:00:00Z");
	expect_fact_hollow(r, "authority_separation",
	    "case as-03 (suite unit) has a control the suite does not expect");
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_hostile_one_case_per_fact_with_placeholder_evidence(void **state)
{
	json_t *r;

	(void)state;
	r = one_case_per_fact();
	set_all_cases(r, "control_evidence", "placeholder");
	expect_fact_hollow(r, "authority_separation",
	    "case as-03 (suite unit) has no live evidence of its control");
	/* Real evidence, but only one case per fact. */
	expect_fact_hollow(one_case_per_fact(), "authority_separation",
	    "case as-08 (suite unit) is missing");
	/* Evidence, but of one kind for every case. */
	r = one_case_per_fact();
	set_all_cases(r, "control_evidence", "listener x: 1 connection");
	expect_fact_hollow(r, "authority_separation",
	    "case as-03 (suite unit) has no live evidence");
}

static void
test_hostile_required_case_missing(void **state)
{
	json_t *r;

	(void)state;
	r = pinned();
	drop_case(r, "edm-02");
	expect_fact_hollow(r, "exact_destination_match",
	    "case edm-02 (suite unit) is missing");
	r = pinned();
	drop_case(r, "dd-03");		/* dd-90 is no stand-in for it */
	expect_fact_hollow(r, "default_deny",
	    "case dd-03 (suite unit) is missing");
	/* A case renamed is a case missing. */
	expect_fact_hollow(pinned_with("as-08", "id", "as-08b"),
	    "authority_separation", "case as-08 (suite unit) is missing");
	/* Negative control: the case the suite does not name may go. */
	r = pinned();
	drop_case(r, "dd-90");
	expect_whole(r);
}

static void
test_hostile_required_case_inconclusive_or_failing(void **state)
{
	json_t *r;

	(void)state;
	r = pinned_with("rr-01", "verdict", "inconclusive");
	set_str(case_of(r, "rr-01"), "control", "deny not_allowlisted");
	set_str(case_of(r, "rr-01"), "control_evidence", "");
	expect_fact_hollow(r, "redirect_recheck",
	    "case rr-01 (suite unit) does not pass");
	/* Inconclusive with evidence and the right words: still no pass. */
	expect_fact_hollow(pinned_with("rr-01", "verdict", "inconclusive"),
	    "redirect_recheck", "case rr-01 (suite unit) does not pass");
	r = pinned_with("ctpa-08", "verdict", "fail");
	set_str(case_of(r, "ctpa-08"), "observed", "allow");
	expect_fact_hollow(r, "connect_time_public_address",
	    "case ctpa-08 (suite unit) does not pass");
	/* "not_run" is no verdict: the report is refused. */
	refuse_report(pinned_with("rr-01", "verdict", "not_run"),
	    "case rr-01: verdict must be pass, fail or inconclusive");
}

static void
test_hostile_zero_count_evidence(void **state)
{
	static const struct {
		const char *id, *fact, *ev;
	} zero[] = {
		{ "edm-01", "exact_destination_match",
		  "listener pub80: 0 connections" },
		{ "edm-02", "exact_destination_match",
		  "listener pub443: 00 connections" },
		{ "ctpa-08", "connect_time_public_address",
		  "resolver dns198: 0 queries" },
		{ "as-03", "authority_separation", "socket A.sock: 0 connections" },
		{ "dd-03", "default_deny", "counter in-icmp: 0 packets" },
		{ "rr-01", "redirect_recheck", "listener other80: -1 connections" },
		{ "rr-01", "redirect_recheck", "listener other80: no connection" },
	};
	char want[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
		snprintf(want, sizeof(want), "case %s (suite unit) has no live "
		    "evidence of its control", zero[i].id);
		expect_fact_hollow(pinned_with(zero[i].id, "control_evidence",
		    zero[i].ev), zero[i].fact, want);
	}
	/* Negative control: one connection is evidence. */
	expect_whole(pinned_with("edm-01", "control_evidence",
	    "listener pub80: 1 connection"));
}

static void
test_hostile_evidence_of_the_wrong_kind(void **state)
{
	(void)state;
	/* The suite wants what the resolver saw, a listener is not it. */
	expect_fact_hollow(pinned_with("ctpa-08", "control_evidence",
	    "listener pub80: 1 connection, 78 bytes"),
	    "connect_time_public_address",
	    "case ctpa-08 (suite unit) has no live evidence of its control");
	expect_fact_hollow(pinned_with("as-08", "control_evidence",
	    "socket A.sock: 1 connection"), "authority_separation",
	    "case as-08 (suite unit) has no live evidence of its control");
	expect_fact_hollow(pinned_with("dd-03", "control_evidence",
	    "process 4242: 1 packet"), "default_deny",
	    "case dd-03 (suite unit) has no live evidence of its control");
	expect_fact_hollow(pinned_with("as-03", "control_evidence",
	    "sockets A.sock: 1 connection"), "authority_separation",
	    "case as-03 (suite unit) has no live evidence of its control");
}

static void
test_hostile_evidence_junk(void **state)
{
	static const char *const junk[] = {
		"ok", "listener", "listener ", "1 connection",
		"listener other80 1 connection", "listener other80:1 connection",
		"listener: 1 connection", "listener other 80: 1 connection",
		"listener other80: ", "listener other80:", "LISTENER other80: 1",
		" listener other80: 1", "listener\tother80: 1 connection",
		"listener other80: 1\tconnection", "listener other80: 1\n",
		"listener other80: 1 connexi\xc3\xb3n",
		"listener other80;x: 1 connection", "listener other80 : 1",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		expect_fact_hollow(pinned_with("rr-01", "control_evidence",
		    junk[i]), "redirect_recheck",
		    "case rr-01 (suite unit) has no live evidence of its control");
}

static void
test_hostile_words_other_than_the_suites(void **state)
{
	json_t *r;

	(void)state;
	/* Self-consistent, but not what the suite's probe must show. */
	r = pinned_with("edm-01", "expected", "deny");
	set_str(case_of(r, "edm-01"), "observed", "deny");
	expect_fact_hollow(r, "exact_destination_match",
	    "case edm-01 (suite unit) observed what the suite does not expect");
	r = pinned_with("as-03", "control", "201");
	set_str(case_of(r, "as-03"), "control_expected", "201");
	expect_fact_hollow(r, "authority_separation",
	    "case as-03 (suite unit) has a control the suite does not expect");
	r = pinned_with("as-08", "control", "not run");
	set_str(case_of(r, "as-08"), "control_expected", "not run");
	expect_fact_hollow(r, "authority_separation",
	    "case as-08 (suite unit) has a control the suite does not expect");
	/* The suite's id under another fact. */
	expect_fact_hollow(pinned_with("dd-03", "fact", "redirect_recheck"),
	    "default_deny", "case dd-03 (suite unit) names another fact");
}

/* test_suite_text with from replaced by to, parsed. */
static struct suite *
suite_edit(const char *from, const char *to)
{
	char *t = replace_once(test_suite_text, from, to), err[512] = "";
	struct suite *s = suite_parse(t, strlen(t), err, sizeof(err));

	if (s == NULL)
		fail_msg("edited suite refused: %s", err);
	free(t);
	return s;
}

static void
test_hostile_unknown_suite_digest(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	struct suite *v[1];
	struct suite_set other = { v, 1 }, none = { NULL, 0 };
	struct receipt_check chk = check_for(SHA_EMPTY);
	char err[512] = "", *env, *c;
	struct receipt_report *rr;
	json_t *r;
	size_t len;

	(void)state;
	/* The same id and version, one byte more: another suite. */
	v[0] = suite_edit("\"target\": \"test_receipt.c\"",
	    "\"target\":  \"test_receipt.c\"");
	assert_string_equal(suite_id(v[0]), "unit");
	assert_int_equal(suite_version(v[0]), 3);
	assert_string_not_equal(suite_digest(v[0]), SUITE_DIGEST);
	env = envelope_of(pinned(), SHA_EMPTY, k);
	chk.suites = &other;
	expect_grade_chk(kr, env, &chk, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_UNKNOWN_SUITE, "suite unit digest " SUITE_DIGEST " is not "
	    "one this verifier grades by");
	chk.suites = &none;
	expect_grade_chk(kr, env, &chk, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_UNKNOWN_SUITE, "is not one this verifier grades by");
	chk.suites = NULL;
	expect_grade_chk(kr, env, &chk, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_UNKNOWN_SUITE, NULL);
	chk.suites = &suites;		/* negative control */
	expect_grade_chk(kr, env, &chk, RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK,
	    NULL);
	free(env);
	/* Signed under the other suite, graded under ours. */
	rr = receipt_report_parse(pinned_report, strlen(pinned_report), &other,
	    NOW, err, sizeof(err));
	assert_non_null(rr);
	c = receipt_canonical(rr, SHA_EMPTY, &len, err, sizeof(err));
	assert_non_null(c);
	assert_non_null(strstr(c, suite_digest(v[0])));
	env = sign_bytes(c, len, k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_UNKNOWN_SUITE);
	chk.suites = &other;		/* negative control */
	expect_grade_chk(kr, env, &chk, RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK,
	    NULL);
	free(env);
	free(c);
	receipt_report_free(rr);
	/* A digest nobody has. */
	r = pinned();
	c = forge(r, "unit", "3",
	    "0000000000000000000000000000000000000000000000000000000000000000",
	    &len);
	json_decref(r);
	env = sign_bytes(c, len, k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_UNKNOWN_SUITE);
	free(env);
	free(c);
	/* And receipt sign refuses a report of a suite it does not have. */
	assert_null(receipt_report_parse(pinned_report, strlen(pinned_report),
	    &none, NOW, err, sizeof(err)));
	err_has(err, "report: suite \"unit\" is not one this program grades by");
	suite_free(v[0]);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_hostile_suite_id_or_version_mismatching_its_digest(void **state)
{
	static const char *const names[][2] = {
		{ "lab", "3" }, { "docker", "3" }, { "unit", "4" },
		{ "unit", "2" }, { "unit", "30" }, { "units", "3" },
	};
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	struct receipt_check chk = check_for(SHA_EMPTY);
	json_t *r = pinned();
	char *c, *env;
	size_t len, i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		c = forge(r, names[i][0], names[i][1], SUITE_DIGEST, &len);
		env = sign_bytes(c, len, k);
		expect_grade_chk(kr, env, &chk, RECEIPT_ADVISORY_FILTER,
		    RECEIPT_UNKNOWN_SUITE, "is not one this verifier grades by");
		free(env);
		free(c);
	}
	/* Negative control: the suite's own id and version. */
	c = forge(r, "unit", "3", SUITE_DIGEST, &len);
	env = sign_bytes(c, len, k);
	expect_grade_chk(kr, env, &chk, RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK,
	    NULL);
	free(env);
	free(c);
	json_decref(r);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_hostile_stale_ran_at(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	struct receipt_check chk = check_for(SHA_EMPTY);
	json_t *r;

	(void)state;
	r = pinned();
	set_str(r, "ran_at", "2020-01-01T00:00:00Z");
	expect_hollow(r, NULL, NULL, RECEIPT_STALE,
	    "ran_at 2020-01-01T00:00:00Z is older than 30 days");
	/* At the bound: 30 days old is fresh, a second more is stale. */
	r = pinned();
	set_str(r, "ran_at", "2026-11-01T00:00:00Z");
	expect_whole(r);
	r = pinned();
	set_str(r, "ran_at", "2026-10-31T23:59:59.999Z");
	expect_hollow(r, NULL, NULL, RECEIPT_STALE, "is older than 30 days");
	/* The pinned receipt is 2.58 days old: stale under a day, fresh
	 * under three. */
	chk.max_age_s = DAY;
	expect_grade_chk(kr, PINNED_ENVELOPE, &chk, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_STALE, "ran_at 2026-11-29T10:00:00Z is older than 1 days");
	chk.max_age_s = 3 * DAY;
	expect_grade_chk(kr, PINNED_ENVELOPE, &chk, RECEIPT_SECURITY_BOUNDARY,
	    RECEIPT_OK, NULL);
	/* A receipt for another binary is revision_mismatch, whatever its
	 * age. */
	chk.max_age_s = DAY;
	chk.sha256 = SHA_ABC;
	expect_grade_chk(kr, PINNED_ENVELOPE, &chk, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_REVISION_MISMATCH, NULL);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

static void
test_hostile_future_ran_at(void **state)
{
	EVP_PKEY *k = rfc_key();
	struct bundle_keyring *kr = ring(k, NULL);
	struct receipt_check chk = check_for(SHA_EMPTY);
	json_t *r;
	char *c, *env;
	size_t len;

	(void)state;
	/* receipt sign refuses a run later than its clock (and its skew). */
	r = pinned();
	set_str(r, "ran_at", "2026-12-01T00:05:01Z");
	refuse_report(r, "report: ran_at 2026-12-01T00:05:01Z is in the future");
	r = pinned();
	set_str(r, "ran_at", "9999-12-31T23:59:59Z");
	refuse_report(r, "is in the future");
	/* Negative control: within RECEIPT_SKEW_S of it. */
	r = pinned();
	set_str(r, "ran_at", "2026-12-01T00:05:00Z");
	expect_whole(r);
	/* Signed by hand all the same: ran_at_in_future. */
	r = pinned();
	set_str(r, "ran_at", "2027-06-01T00:00:00Z");
	c = forge(r, "unit", "3", SUITE_DIGEST, &len);
	env = sign_bytes(c, len, k);
	expect_grade_chk(kr, env, &chk, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FUTURE, "ran_at 2027-06-01T00:00:00Z is in the future");
	free(env);
	free(c);
	json_decref(r);
	/* The pinned receipt seen from before it ran, and within the skew. */
	chk.now = 1795946400LL - RECEIPT_SKEW_S - 1;	/* ran_at - 301 s */
	expect_grade_chk(kr, PINNED_ENVELOPE, &chk, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FUTURE, "is in the future");
	chk.now = 1795946400LL - RECEIPT_SKEW_S;
	expect_grade_chk(kr, PINNED_ENVELOPE, &chk, RECEIPT_SECURITY_BOUNDARY,
	    RECEIPT_OK, NULL);
	assert_string_equal(receipt_reason_name(RECEIPT_FUTURE),
	    "ran_at_in_future");
	assert_string_equal(receipt_reason_name(RECEIPT_STALE), "stale");
	assert_string_equal(receipt_reason_name(RECEIPT_UNKNOWN_SUITE),
	    "unknown_suite");
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* The signed facts map says all five are true; the cases do not prove
 * them. Whoever signed it, the verifier recomputes. */
static void
test_hostile_signed_facts_true_but_cases_do_not_prove_them(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	json_t *r = pinned_with("as-08", "verdict", "inconclusive");
	char *env, *rec;
	size_t len;

	(void)state;
	env = forged_envelope(r, k);
	rec = receipt_of(env, &len);
	assert_non_null(strstr(rec, "\"facts\":{\"authority_separation\":true,"
	    "\"connect_time_public_address\":true,\"default_deny\":true,"
	    "\"exact_destination_match\":true,\"redirect_recheck\":true}"));
	free(rec);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	free(env);
	/* Every case but the extra one gone. */
	drop_case(r, "edm-01");
	drop_case(r, "edm-02");
	drop_case(r, "ctpa-08");
	drop_case(r, "rr-01");
	drop_case(r, "as-03");
	drop_case(r, "as-08");
	drop_case(r, "dd-03");
	env = forged_envelope(r, k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	free(env);
	/* No case at all. */
	assert_int_equal(json_object_set_new(r, "cases", json_array()), 0);
	env = forged_envelope(r, k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_ADVISORY_FILTER,
	    RECEIPT_FACTS_INCOMPLETE);
	free(env);
	json_decref(r);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* What the attester signed false (or left out) stays false, however well
 * the cases pass: a receipt never grades higher than it was signed
 * (docs/receipts.md "Facts are recomputed, never copied"). */
static void
test_signed_false_or_absent_fact_is_never_graded_true(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	char *env;

	(void)state;
	expect_edit_incomplete(kr, k, "\"default_deny\":true",
	    "\"default_deny\":false", "fact default_deny is false");
	expect_edit_incomplete(kr, k, "\"authority_separation\":true,", "",
	    "fact authority_separation is false");
	/* Negative control: signed true, the same cases: security_boundary. */
	env = sign_bytes(PINNED_CANON, strlen(PINNED_CANON), k);
	expect_grade(kr, env, SHA_EMPTY, RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK);
	free(env);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* A suite id is 1-32 of [a-z0-9_-] (docs: spec); a signed receipt naming
 * any other is not a receipt, and its bytes never reach a message (the
 * verifier's reason, receipt show's suite line) raw. */
static void
test_hostile_suite_id_bytes_never_reach_messages(void **state)
{
	static const char *const ids[] = {
		"\x1b[2J\x1b]0;admitted\x07", "unit\nsecurity_boundary", "Unit",
		"unit x", "\xc3\xa9",
	};
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	struct receipt_view rv;
	json_t *r = pinned();
	char err[1024], *c, *env;
	size_t len, i;

	(void)state;
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		c = forge(r, ids[i], "3", SUITE_DIGEST, &len);
		env = sign_bytes(c, len, k);
		expect_malformed(kr, env);
		err[0] = '\0';
		assert_int_equal(receipt_view_open(env, strlen(env), &suites,
		    &rv, err, sizeof(err)), -1);
		check_err(err);
		free(env);
		free(c);
	}
	json_decref(r);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* A suite of any version suite_parse accepts signs into a receipt that
 * verify reads (the receipt's version string is bounded at 18 digits:
 * either suite_parse refuses more, or verify reads them). */
static void
test_suite_version_of_any_size_round_trips(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct bundle_keyring *kr = ring(k, NULL);
	struct suite *v[1];
	struct suite_set big = { v, 1 };
	struct receipt_check chk = check_for(SHA_EMPTY);
	struct receipt_report *r;
	char err[512] = "", *c, *env, *t;
	size_t len;

	(void)state;
	t = replace_once(test_suite_text, "\"version\": 3",
	    "\"version\": 1000000000000000000");
	v[0] = suite_parse(t, strlen(t), err, sizeof(err));
	free(t);
	if (v[0] == NULL) {
		err_has(err, "version");
		bundle_keyring_free(kr);
		EVP_PKEY_free(k);
		return;
	}
	r = receipt_report_parse(pinned_report, strlen(pinned_report), &big,
	    NOW, err, sizeof(err));
	assert_non_null(r);
	c = receipt_canonical(r, SHA_EMPTY, &len, err, sizeof(err));
	assert_non_null(c);
	env = sign_bytes(c, len, k);
	chk.suites = &big;
	expect_grade_chk(kr, env, &chk, RECEIPT_SECURITY_BOUNDARY, RECEIPT_OK,
	    NULL);
	free(env);
	free(c);
	receipt_report_free(r);
	suite_free(v[0]);
	bundle_keyring_free(kr);
	EVP_PKEY_free(k);
}

/* ---- suites ---- */

static void
test_suite_parse_accepts_and_digests_bytes_as_shipped(void **state)
{
	struct suite *s;
	char *t;

	(void)state;
	assert_int_equal(suites.n, 1);
	assert_string_equal(suite_id(suites.v[0]), "unit");
	assert_int_equal(suite_version(suites.v[0]), 3);
	assert_string_equal(suite_digest(suites.v[0]), SUITE_DIGEST);
	assert_ptr_equal(suite_set_by_id(&suites, "unit", 4), suites.v[0]);
	assert_null(suite_set_by_id(&suites, "uni", 3));
	assert_null(suite_set_by_id(&suites, "unit", 3));
	assert_ptr_equal(suite_set_by_digest(&suites, SUITE_DIGEST, 64),
	    suites.v[0]);
	assert_null(suite_set_by_digest(&suites, SUITE_DIGEST, 63));
	assert_null(suite_set_by_digest(NULL, SUITE_DIGEST, 64));
	assert_null(suite_set_by_id(NULL, "unit", 4));
	/* The same suite spelled otherwise is another digest: the digest
	 * is of the bytes as shipped, not of what they parse to. */
	s = suite_edit("\n ]\n}\n", "]}");
	assert_string_not_equal(suite_digest(s), SUITE_DIGEST);
	suite_free(s);
	/* One case per fact is a suite too (a NULL err is allowed). */
	t = replace_once(test_suite_text, ",\n  {\"id\": \"edm-02\", \"fact\": "
	    "\"exact_destination_match\", \"expected\": \"deny not_allowlisted\", "
	    "\"control_expected\": \"allow\", \"evidence\": \"listener\"}", "");
	s = suite_parse(t, strlen(t), NULL, 0);
	assert_non_null(s);
	assert_string_not_equal(suite_digest(s), SUITE_DIGEST);
	suite_free(s);
	free(t);
	suite_free(NULL);
}

static void
test_suite_parse_refusals(void **state)
{
	/* Each an edit of test_suite_text, and what the refusal says. */
	static const char *const bad[][3] = {
		{ "\"target\"", "\"owner\": \"x\", \"target\"",
		  "suite: unknown key \"owner\"" },
		{ "\"evidence\": \"process\"",
		  "\"evidence\": \"process\", \"note\": \"x\"",
		  "cases[5]: unknown key \"note\"" },
		{ "{\"id\": \"edm-02\"", "{\"id\": \"edm-01\"",
		  "cases[1]: duplicate id \"edm-01\"" },
		{ "\"fact\": \"redirect_recheck\"",
		  "\"fact\": \"redirect_recheck_all\"",
		  "case rr-01: unknown fact" },
		{ "\"fact\": \"redirect_recheck\"", "\"fact\": 1",
		  "case rr-01: unknown fact" },
		{ "\"evidence\": \"counter\"", "\"evidence\": \"log\"",
		  "case dd-03: evidence must be listener, resolver, socket, "
		  "counter or process" },
		{ "\"evidence\": \"counter\"", "\"evidence\": \"Counter\"",
		  "case dd-03: evidence must be" },
		{ "\"evidence\": \"counter\"", "\"evidence\": \"\"",
		  "case dd-03: evidence must be" },
		{ "\"control_expected\": \"reached\"",
		  "\"control_expected\": \"blocked\"",
		  "case dd-03: a control that expects what the probe expects "
		  "proves nothing" },
		{ "\"control_expected\": \"reached\"", "\"control_expected\": \"\"",
		  "case dd-03: expected and control_expected must be strings" },
		{ "\"expected\": \"blocked\"", "\"expected\": [\"blocked\"]",
		  "case dd-03: expected and control_expected must be strings" },
		{ "\"control_expected\": \"reached\", ", "",
		  "case dd-03: expected and control_expected must be strings" },
		{ ",\n  {\"id\": \"dd-03\", \"fact\": \"default_deny\", "
		  "\"expected\": \"blocked\", \"control_expected\": \"reached\", "
		  "\"evidence\": \"counter\"}", "",
		  "suite unit: no case for fact default_deny" },
		{ "\"id\": \"unit\"", "\"id\": \"Unit\"",
		  "suite: id must be 1-32 of [a-z0-9_-]" },
		{ "\"id\": \"unit\"", "\"id\": \"unit.v1\"", "suite: id must be" },
		{ "\"id\": \"unit\"", "\"id\": \"\"", "suite: id must be" },
		{ "\"id\": \"unit\"", "\"id\": \"unit/../lab\"", "suite: id must be" },
		{ "\"id\": \"unit\"", "\"id\": \"abcdefghijabcdefghijabcdefghijabc\"",
		  "suite: id must be" },
		{ "\"id\": \"unit\"", "\"id\": 1", "suite: id must be" },
		{ "\"version\": 3", "\"version\": 0",
		  "suite unit: version must be an integer" },
		{ "\"version\": 3", "\"version\": -3", "version must be" },
		{ "\"version\": 3", "\"version\": \"3\"", "version must be" },
		{ "\"version\": 3", "\"version\": 3.0", "version must be" },
		{ "\"version\": 3,", "", "version must be" },
		{ "egress-guard.conformance-suite.v1",
		  "egress-guard.conformance-suite.v2",
		  "suite: schema must be \"egress-guard.conformance-suite.v1\"" },
		{ "\"target\": \"test_receipt.c\"", "\"target\": \"\"",
		  "suite unit: target must be a string of 1-256 bytes" },
		{ "\"target\": \"test_receipt.c\"", "\"target\": \"" T257 "\"",
		  "target must be a string of 1-256 bytes" },
		{ "{\"id\": \"edm-01\"", "{\"id\": \"edm 01\"",
		  "cases[0]: id must be 1-64 of [A-Za-z0-9._-]" },
		{ "{\"id\": \"edm-01\"", "[], {\"id\": \"edm-01\"",
		  "cases[0] must be an object" },
		{ "\"id\": \"unit\"", "\"id\": \"unit\", \"id\": \"lab\"",
		  "suite is not valid JSON (line " },
	};
	char err[512], *t;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = replace_once(test_suite_text, bad[i][0], bad[i][1]);
		err[0] = '\0';
		if (suite_parse(t, strlen(t), err, sizeof(err)) != NULL)
			fail_msg("suite accepted, want \"%s\": %s", bad[i][2], t);
		check_err(err);
		err_has(err, bad[i][2]);
		free(t);
	}
}

static void
test_suite_parse_refuses_empty_other_and_too_large(void **state)
{
	static const char *const other[][2] = {
		{ "", "empty suite" },
		{ "[]", "suite must be a JSON object" },
		{ "{", "suite is not valid JSON" },
		{ "{\"schema\":\"egress-guard.conformance-suite.v1\",\"id\":\"u\","
		  "\"version\":1,\"target\":\"t\",\"cases\":[]}",
		  "suite u: cases must be an array of 1-512" },
		{ "{\"schema\":\"egress-guard.conformance-suite.v1\",\"id\":\"u\","
		  "\"version\":1,\"target\":\"t\",\"cases\":{}}",
		  "cases must be an array" },
	};
	char err[512], *big;
	size_t i, n = SUITE_MAX_BYTES + 1, tl = strlen(test_suite_text);

	(void)state;
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		err[0] = '\0';
		assert_null(suite_parse(other[i][0], strlen(other[i][0]), err,
		    sizeof(err)));
		check_err(err);
		err_has(err, other[i][1]);
	}
	assert_null(suite_parse(NULL, 0, err, sizeof(err)));
	/* Too large: one byte past the bound, whitespace after a valid
	 * suite; at the bound it parses (negative control). */
	big = malloc(n);
	assert_non_null(big);
	memcpy(big, test_suite_text, tl);
	memset(big + tl, ' ', n - tl);
	assert_null(suite_parse(big, n, err, sizeof(err)));
	err_has(err, "suite larger than 262144 bytes");
	{
		struct suite *s = suite_parse(big, n - 1, err, sizeof(err));

		if (s == NULL)
			fail_msg("suite at the bound refused: %s", err);
		suite_free(s);
	}
	free(big);
	/* More cases than SUITE_MAX_CASES. */
	{
		json_t *root = json_loads(test_suite_text, 0, NULL), *c;
		char id[16], *text;

		assert_non_null(root);
		for (i = 0; i < SUITE_MAX_CASES; i++) {
			c = json_deep_copy(json_array_get(json_object_get(root,
			    "cases"), 0));
			snprintf(id, sizeof(id), "x-%zu", i);
			set_str(c, "id", id);
			assert_int_equal(json_array_append_new(json_object_get(
			    root, "cases"), c), 0);
		}
		text = json_dumps(root, JSON_COMPACT);
		assert_null(suite_parse(text, strlen(text), err, sizeof(err)));
		err_has(err, "cases must be an array of 1-512");
		free(text);
		json_decref(root);
	}
}

/* A target is free text, 1-256 printable ASCII bytes. */
static void
test_suite_parse_refuses_unprintable_target(void **state)
{
	static const char *const bad[] = {
		"\"tab\\there\"", "\"del\\u007f\"", "\"esc\\u001b[2J\"",
		"\"caf\\u00e9\"",
	};
	struct suite *s;
	char err[512], *t;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = replace_once(test_suite_text, "\"test_receipt.c\"", bad[i]);
		err[0] = '\0';
		s = suite_parse(t, strlen(t), err, sizeof(err));
		if (s != NULL) {
			suite_free(s);
			fail_msg("suite with target %s accepted", bad[i]);
		}
		err_has(err, "target");
		free(t);
	}
}

static void
test_suite_evidence_grammar(void **state)
{
	static const struct {
		const char	*kind;
		const char	*ev;
		int		 ok;
	} tab[] = {
		/* The spec's examples. */
		{ "listener", "listener pub80: 1 connection, 78 bytes", 1 },
		{ "listener", "listener pub8443: 1 connection, 37 bytes", 1 },
		{ "resolver", "resolver dns198: 2 queries", 1 },
		{ "socket", "socket A.sock: 1 connection", 1 },
		{ "counter", "counter in-icmp: 1 packet", 1 },
		{ "process", "process 4242: CapEff 000001ffffffffff", 1 },
		/* NAME: every byte of its class, 64 at most, ':' inside. */
		{ "listener", "listener a: 1", 1 },
		{ "listener", "listener Az09._:/-: 10 connections", 1 },
		{ "listener", "listener 198.18.0.10:8443: 1 connection", 1 },
		{ "listener", "listener ::: 1", 1 },
		{ "listener", "listener "
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  ": 1", 1 },
		{ "listener", "listener "
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  ": 1", 0 },
		{ "listener", "listener : 1", 0 },
		{ "listener", "listener pub_80: 1", 1 },
		{ "listener", "listener pub80;x: 1", 0 },
		{ "listener", "listener pub80\\x: 1", 0 },
		{ "listener", "listener pub80 : 1", 0 },
		{ "listener", "listener pub80:1", 0 },
		{ "listener", "listener pub80", 0 },
		{ "listener", "listener pub80:", 0 },
		{ "listener", "listener pub80: ", 0 },
		{ "listener", "listener  pub80: 1", 0 },
		/* KIND: exact, the one the suite wants. */
		{ "listener", "Listener pub80: 1", 0 },
		{ "listener", "listeners pub80: 1", 0 },
		{ "listener", "resolver pub80: 1", 0 },
		{ "listener", " listener pub80: 1", 0 },
		{ "listener", "listener", 0 },
		{ "listener", "", 0 },
		{ "log", "log pub80: 1", 0 },
		{ "", " pub80: 1", 0 },
		/* DETAIL: a positive count first for the kinds that count. */
		{ "listener", "listener pub80: 0 connections", 0 },
		{ "listener", "listener pub80: 01 connection", 0 },
		{ "listener", "listener pub80: -1 connection", 0 },
		{ "listener", "listener pub80: +1 connection", 0 },
		{ "listener", "listener pub80: one connection", 0 },
		{ "listener", "listener pub80:  1 connection", 0 },
		{ "resolver", "resolver dns198: 0 queries", 0 },
		{ "socket", "socket A.sock: 0 connections", 0 },
		{ "counter", "counter in-icmp: 0 packets", 0 },
		{ "counter", "counter in-icmp: 12345678901234567890", 1 },
		{ "process", "process 4242: 0", 1 },
		{ "process", "process 4242: CapEff 0", 1 },
		{ "process", "process 4242:  leading space", 1 },
		/* DETAIL: printable ASCII, 1-200 bytes. */
		{ "listener", "listener pub80: 1\tconnection", 0 },
		{ "listener", "listener pub80: 1 connection\n", 0 },
		{ "listener", "listener pub80: 1 conn\x7f", 0 },
		{ "listener", "listener pub80: 1 conexi\xc3\xb3n", 0 },
		{ "process", "process 1: \x1b[2J", 0 },
	};
	char buf[300];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (suite_evidence_ok(tab[i].kind, tab[i].ev,
		    strlen(tab[i].ev)) != tab[i].ok)
			fail_msg("suite_evidence_ok(%s, \"%s\") is not %d",
			    tab[i].kind, tab[i].ev, tab[i].ok);
	/* A NUL anywhere; the length is what counts, not strlen. */
	assert_int_equal(suite_evidence_ok("listener", "listener a: 1\0x", 15),
	    0);
	assert_int_equal(suite_evidence_ok("listener", "listener a\0: 1", 14),
	    0);
	assert_int_equal(suite_evidence_ok("listener", "listener a: 1 x", 13),
	    1);
	assert_int_equal(suite_evidence_ok("listener", "listener a: 1 x", 12),
	    0);
	assert_int_equal(suite_evidence_ok(NULL, "listener a: 1", 13), 0);
	assert_int_equal(suite_evidence_ok("listener", NULL, 0), 0);
	/* DETAIL of 200 bytes, and of 201. */
	n = (size_t)snprintf(buf, sizeof(buf), "counter c: 1");
	memset(buf + n, 'x', 200);
	assert_int_equal(suite_evidence_ok("counter", buf, n + 199), 1);
	assert_int_equal(suite_evidence_ok("counter", buf, n + 200), 0);
}

/* ---- reading a grade (receipt show) ---- */

static void
test_receipt_view_of_good_and_hollow_receipts(void **state)
{
	EVP_PKEY *k = gen_key("ED25519");
	struct suite_set none = { NULL, 0 };
	const struct suite_grade *g;
	const struct suite_case *c;
	struct receipt_view rv;
	json_t *r;
	char err[512] = "", *env, *bad;
	size_t i;

	(void)state;
	assert_int_equal(receipt_view_open(PINNED_ENVELOPE,
	    strlen(PINNED_ENVELOPE), &suites, &rv, err, sizeof(err)), 0);
	assert_string_equal(rv.key_id, RFC_KEY_ID);
	assert_string_equal(rv.revision, "0.1.0+sha256:" SHA_EMPTY);
	assert_string_equal(rv.ran_at, "2026-11-29T10:00:00Z");
	assert_string_equal(rv.suite_id, "unit");
	assert_int_equal(rv.suite_version, 3);
	assert_string_equal(rv.suite_digest, SUITE_DIGEST);
	assert_int_equal(rv.suite_known, 1);
	assert_non_null(g = rv.grade);
	assert_int_equal(g->ncases, 7);
	for (i = 0; i < RECEIPT_NFACTS; i++) {
		assert_int_equal(rv.signed_facts[i], 1);
		assert_int_equal(g->proved[i], 1);
		assert_int_equal(g->npass[i], g->nrequired[i]);
		assert_null(g->first_bad[i]);
	}
	assert_int_equal(g->nrequired[fact_ix("exact_destination_match")], 2);
	assert_int_equal(g->nrequired[fact_ix("default_deny")], 1);
	c = &g->cases[2];
	assert_string_equal(c->id, "ctpa-08");
	assert_string_equal(c->kind, "resolver");
	assert_int_equal(c->status, SUITE_CASE_PASS);
	assert_string_equal(c->evidence, "resolver dns198: 2 queries");
	assert_string_equal(c->verdict, "pass");
	receipt_view_free(&rv);
	receipt_view_free(&rv);		/* twice: a no-op */

	/* Hollow: facts signed true; edm-02 missing, ctpa-08's control saw
	 * nothing, rr-01 inconclusive. */
	r = pinned();
	drop_case(r, "edm-02");
	set_str(case_of(r, "ctpa-08"), "control_evidence",
	    "resolver dns198: 0 queries");
	set_str(case_of(r, "rr-01"), "verdict", "inconclusive");
	set_str(case_of(r, "rr-01"), "control_evidence", "");
	env = forged_envelope(r, k);
	json_decref(r);
	assert_int_equal(receipt_view_open(env, strlen(env), &suites, &rv,
	    err, sizeof(err)), 0);
	assert_non_null(g = rv.grade);
	for (i = 0; i < RECEIPT_NFACTS; i++)
		assert_int_equal(rv.signed_facts[i], 1);
	assert_int_equal(g->proved[fact_ix("authority_separation")], 1);
	assert_int_equal(g->proved[fact_ix("default_deny")], 1);
	assert_int_equal(g->proved[fact_ix("exact_destination_match")], 0);
	assert_int_equal(g->npass[fact_ix("exact_destination_match")], 1);
	c = g->first_bad[fact_ix("exact_destination_match")];
	assert_string_equal(c->id, "edm-02");
	assert_int_equal(c->status, SUITE_CASE_MISSING);
	assert_null(c->evidence);
	assert_null(c->verdict);
	assert_int_equal(g->proved[fact_ix("connect_time_public_address")], 0);
	c = g->first_bad[fact_ix("connect_time_public_address")];
	assert_string_equal(c->id, "ctpa-08");
	assert_int_equal(c->status, SUITE_CASE_NO_EVIDENCE);
	assert_string_equal(c->evidence, "resolver dns198: 0 queries");
	assert_string_equal(c->verdict, "pass");
	c = g->first_bad[fact_ix("redirect_recheck")];
	assert_string_equal(c->id, "rr-01");
	assert_int_equal(c->status, SUITE_CASE_NOT_PASS);
	assert_string_equal(c->verdict, "inconclusive");
	assert_string_equal(c->evidence, "");
	assert_string_equal(suite_status_name(c->status), "does not pass");
	receipt_view_free(&rv);

	/* A suite this program does not know: named, not graded. */
	assert_int_equal(receipt_view_open(env, strlen(env), &none, &rv, err,
	    sizeof(err)), 0);
	assert_int_equal(rv.suite_known, 0);
	assert_null(rv.grade);
	assert_string_equal(rv.suite_id, "unit");
	receipt_view_free(&rv);
	free(env);

	/* The view says nothing of the signature: a bad one opens. */
	bad = replace_once(PINNED_ENVELOPE, "\"signature\":\"aILB",
	    "\"signature\":\"bILB");
	assert_int_equal(receipt_view_open(bad, strlen(bad), &suites, &rv, err,
	    sizeof(err)), 0);
	receipt_view_free(&rv);
	free(bad);
	/* Malformed: refused with a message, nothing to free. */
	assert_int_equal(receipt_view_open("[]", 2, &suites, &rv, err,
	    sizeof(err)), -1);
	check_err(err);
	env = signed_edit("{\"cases\":[", "{ \"cases\":[", k);
	assert_int_equal(receipt_view_open(env, strlen(env), &suites, &rv, err,
	    sizeof(err)), -1);
	err_has(err, "not in canonical form");
	receipt_view_free(&rv);
	free(env);
	EVP_PKEY_free(k);
}

/* Runs receipt show on the receipt env (a file in dir), with the option
 * opt and its value val when opt is not NULL, its stdout in *out
 * (malloc'd). Returns its exit status. */
static int
show(const char *dir, const char *env, char *opt, char *val, char **out)
{
	char *path = write_tmp_in(dir, "receipt.json", env, strlen(env));
	char *argv[5] = { "show", path, opt, val, NULL };
	char *opath, buf[8192];
	int fd, saved, rc;
	ssize_t n;

	assert_true(asprintf(&opath, "%s/show.out", dir) > 0);
	fflush(stdout);
	fd = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fd, STDOUT_FILENO) == STDOUT_FILENO);
	rc = receiptshow_cmd(opt != NULL ? 4 : 2, argv);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) == STDOUT_FILENO);
	close(saved);
	close(fd);
	fd = open(opath, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
	*out = strdup(buf);
	assert_non_null(*out);
	free(opath);
	free(path);
	return rc;
}

/* Every byte of s is printable ASCII or a newline: what receipt show
 * writes to a person's terminal. */
static void
check_plain_text(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 0x20 && s[i] < 0x7f) || s[i] == '\n'))
			fail_msg("receipt show wrote byte 0x%02x at %zu:\n%s",
			    (unsigned char)s[i], i, s);
}

/* egress-guardctl receipt show: what it prints of a receipt this program
 * has no suite for (the test suite is never built in), and that nothing a
 * signed receipt holds reaches the terminal as a control byte. */
static void
test_receipt_show_prints_plain_text(void **state)
{
	EVP_PKEY *k = rfc_key(), *other = gen_key("ED25519");
	char *d = tmp_dir(), *out, *c, *env;
	json_t *r;
	size_t len;

	(void)state;
	write_key_in(d, "rfc.pub.pem", k, 0);
	assert_int_equal(show(d, PINNED_ENVELOPE, "--attesters", d, &out), 0);
	check_plain_text(out);
	err_has(out, "signer:   " RFC_KEY_ID " (an attester in ");
	err_has(out, "binary:   0.1.0+sha256:" SHA_EMPTY "\n");
	err_has(out, "ran at:   2026-11-29T10:00:00Z\n");
	err_has(out, "suite:    unit version 3, sha256:" SUITE_DIGEST);
	err_has(out, "NOT a suite this program knows");
	err_has(out, "0 of 5 facts proved");
	free(out);
	assert_int_equal(show(d, PINNED_ENVELOPE, NULL, NULL, &out), 0);
	err_has(out, "(not checked: give --attesters DIR)");
	free(out);
	/* Signed by someone else: said so. */
	env = sign_bytes(PINNED_CANON, strlen(PINNED_CANON), other);
	assert_int_equal(show(d, env, "--attesters", d, &out), 0);
	err_has(out, "(NOT among the attesters in ");
	free(out);
	free(env);
	/* Not a receipt: exit 2, nothing shown. */
	assert_int_equal(show(d, "[]", NULL, NULL, &out), 2);
	assert_string_equal(out, "");
	free(out);
	/* A suite id of terminal escapes, signed by a trusted attester. */
	r = pinned();
	c = forge(r, "\x1b]0;security_boundary\x07\x1b[2J", "3", SUITE_DIGEST,
	    &len);
	env = sign_bytes(c, len, k);
	(void)show(d, env, "--attesters", d, &out);
	check_plain_text(out);
	free(out);
	free(env);
	free(c);
	json_decref(r);
	rm_dir(d);
	EVP_PKEY_free(k);
	EVP_PKEY_free(other);
}

static void
test_receipt_time_of_rfc3339(void **state)
{
	static const struct {
		const char	*s;
		long long	 t;
	} tab[] = {
		{ "1970-01-01T00:00:00Z", 0 },
		{ "2026-12-01T00:00:00Z", NOW },
		{ "2026-11-29T10:00:00Z", 1795946400LL },
		{ "2026-11-29T10:00:00.999999999Z", 1795946400LL },
		{ "2000-02-29T12:00:00Z", 951825600LL },
		{ "2026-12-01T00:00:00", -1 },
		{ "2026-12-01 00:00:00Z", -1 },
		{ "2026-02-29T00:00:00Z", -1 },
		{ "2026-12-01T00:00:00+00:00", -1 },
		{ "", -1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (receipt_time(tab[i].s, strlen(tab[i].s)) != tab[i].t)
			fail_msg("receipt_time(%s) is %lld, want %lld", tab[i].s,
			    receipt_time(tab[i].s, strlen(tab[i].s)), tab[i].t);
	assert_int_equal(receipt_time(NULL, 0), -1);
	/* The length counts: a prefix is no time. */
	assert_int_equal(receipt_time("2026-12-01T00:00:00Z", 19), -1);
}

static int
group_setup(void **state)
{
	if (suites_setup(state) == -1)
		return -1;
	attester = gen_key("ED25519");
	trusted = ring(attester, NULL);
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	bundle_keyring_free(trusted);
	EVP_PKEY_free(attester);
	suite_set_free(&suites);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical_bytes_of_pinned_report_are_exact),
		cmocka_unit_test(test_envelope_matches_node_signature_for_rfc8032_key),
		cmocka_unit_test(test_signed_message_is_context_nul_then_receipt),
		cmocka_unit_test(test_sign_then_verify_is_security_boundary),
		cmocka_unit_test(test_deployment_evidence_is_signed_into_receipt),
		cmocka_unit_test(test_report_refuses_malformed_deployment),
		cmocka_unit_test(test_large_receipt_near_the_size_bound_round_trips),
		cmocka_unit_test(test_tampered_fact_is_bad_signature),
		cmocka_unit_test(test_tampered_case_verdict_is_bad_signature),
		cmocka_unit_test(test_tampered_ran_at_is_bad_signature),
		cmocka_unit_test(test_flipped_bit_anywhere_in_receipt_bytes_is_bad_signature),
		cmocka_unit_test(test_flipped_bit_anywhere_in_envelope_never_security_boundary),
		cmocka_unit_test(test_swapped_revision_is_revision_mismatch),
		cmocka_unit_test(test_signer_not_in_attesters_is_untrusted),
		cmocka_unit_test(test_trusted_key_id_with_foreign_signature_is_bad_signature),
		cmocka_unit_test(test_policy_bundle_context_cannot_pass_as_receipt),
		cmocka_unit_test(test_report_with_four_facts_never_security_boundary),
		cmocka_unit_test(test_report_fact_false_stays_false_though_cases_pass),
		cmocka_unit_test(test_report_fact_true_but_case_inconclusive_is_false),
		cmocka_unit_test(test_report_fact_true_but_case_failing_is_false),
		cmocka_unit_test(test_report_fact_true_without_cases_is_false),
		cmocka_unit_test(test_report_refuses_pass_that_contradicts_its_strings),
		cmocka_unit_test(test_report_refuses_unknown_or_bad_keys),
		cmocka_unit_test(test_report_refuses_binary_changed_since_the_run),
		cmocka_unit_test(test_report_accepts_fractional_ran_at),
		cmocka_unit_test(test_signed_receipt_claiming_unproved_fact_never_security_boundary),
		cmocka_unit_test(test_signed_receipt_with_empty_facts_is_unsupported),
		cmocka_unit_test(test_signed_non_canonical_receipt_is_malformed),
		cmocka_unit_test(test_envelope_refusals_are_malformed),
		cmocka_unit_test(test_escaped_envelope_fields_are_malformed),
		cmocka_unit_test(test_envelope_larger_than_max_is_malformed),
		cmocka_unit_test(test_verify_refuses_bad_binary_hash_argument),
		cmocka_unit_test(test_grade_names_order_and_parse),
		cmocka_unit_test(test_file_sha256_known_vectors_and_bounds),
		cmocka_unit_test(test_load_attesters_reads_only_pub_pem_files),
		cmocka_unit_test(test_sign_envelope_refuses_non_ed25519_and_nothing),
		cmocka_unit_test(test_canonical_refuses_bad_hash),
		/* issue 29 */
		cmocka_unit_test(test_hostile_issue29_not_run_controls_never_security_boundary),
		cmocka_unit_test(test_hostile_one_case_per_fact_with_placeholder_evidence),
		cmocka_unit_test(test_hostile_required_case_missing),
		cmocka_unit_test(test_hostile_required_case_inconclusive_or_failing),
		cmocka_unit_test(test_hostile_zero_count_evidence),
		cmocka_unit_test(test_hostile_evidence_of_the_wrong_kind),
		cmocka_unit_test(test_hostile_evidence_junk),
		cmocka_unit_test(test_hostile_words_other_than_the_suites),
		cmocka_unit_test(test_hostile_unknown_suite_digest),
		cmocka_unit_test(test_hostile_suite_id_or_version_mismatching_its_digest),
		cmocka_unit_test(test_hostile_stale_ran_at),
		cmocka_unit_test(test_hostile_future_ran_at),
		cmocka_unit_test(test_hostile_signed_facts_true_but_cases_do_not_prove_them),
		cmocka_unit_test(test_signed_false_or_absent_fact_is_never_graded_true),
		cmocka_unit_test(test_hostile_suite_id_bytes_never_reach_messages),
		cmocka_unit_test(test_suite_version_of_any_size_round_trips),
		cmocka_unit_test(test_suite_parse_accepts_and_digests_bytes_as_shipped),
		cmocka_unit_test(test_suite_parse_refusals),
		cmocka_unit_test(test_suite_parse_refuses_empty_other_and_too_large),
		cmocka_unit_test(test_suite_parse_refuses_unprintable_target),
		cmocka_unit_test(test_suite_evidence_grammar),
		cmocka_unit_test(test_receipt_view_of_good_and_hollow_receipts),
		cmocka_unit_test(test_receipt_show_prints_plain_text),
		cmocka_unit_test(test_receipt_time_of_rfc3339),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
