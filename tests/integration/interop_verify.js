// An independent bundle verifier (Node.js built-in crypto only) for the
// interop test.
//
//   node interop_verify.js PUB.pem BUNDLE
//
// PUB.pem is an SPKI PEM Ed25519 public key (egress-guardctl keygen's
// KEY.pub.pem). Prints {"key_id":…,"epoch":…,"digest":"sha256:…"} like
// `egress-guardctl verify` and exits 0 when the bundle verifies; exits 1
// with the reason on stderr otherwise. Also a module: verifyBundle() is
// used by interop_server.js.
'use strict';
const crypto = require('crypto');
const fs = require('fs');

const CONTEXT = 'egress-guard.policy.v1';
const SCHEMA = 'egress-guard.bundle.v1';

function keyIdOf(pub) {
	const raw = Buffer.from(pub.export({ format: 'jwk' }).x, 'base64url');
	return crypto.createHash('sha256').update(raw).digest('hex');
}

// Standard base64 with padding, in its one canonical spelling.
function strictBase64(s, what) {
	if (typeof s !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(s) ||
	    s.length % 4 !== 0)
		throw new Error(`${what}: not base64`);
	const b = Buffer.from(s, 'base64');
	if (b.toString('base64') !== s)
		throw new Error(`${what}: not canonical base64`);
	return b;
}

// Returns {keyId, epoch, digest, policy} or throws with the reason;
// err.code is 'malformed', 'unknown_key' or 'bad_signature'.
function verifyBundle(text, pubs) {
	const fail = (code, msg) => {
		const e = new Error(msg);
		e.code = code;
		throw e;
	};
	let b;
	try {
		b = JSON.parse(text);
	} catch (e) {
		fail('malformed', 'not JSON');
	}
	const keys = b && typeof b === 'object' && !Array.isArray(b) ?
	    Object.keys(b).sort().join(',') : '';
	if (keys !== 'key_id,policy,schema,signature')
		fail('malformed', `keys are "${keys}"`);
	if (b.schema !== SCHEMA)
		fail('malformed', 'wrong schema');
	if (typeof b.key_id !== 'string' || !/^[0-9a-f]{64}$/.test(b.key_id))
		fail('malformed', 'bad key_id');
	let policy, sig;
	try {
		policy = strictBase64(b.policy, 'policy');
		sig = strictBase64(b.signature, 'signature');
	} catch (e) {
		fail('malformed', e.message);
	}
	const pub = pubs.find((p) => keyIdOf(p) === b.key_id);
	if (!pub)
		fail('unknown_key', `key ${b.key_id} is not trusted`);
	const msg = Buffer.concat([Buffer.from(CONTEXT, 'ascii'),
	    Buffer.from([0]), policy]);
	if (sig.length !== 64 || !crypto.verify(null, msg, pub, sig))
		fail('bad_signature', 'signature does not verify');
	let p;
	try {
		p = JSON.parse(policy.toString('utf8'));
	} catch (e) {
		fail('malformed', 'signed policy is not JSON');
	}
	if (!p || p.schema !== CONTEXT || !Number.isSafeInteger(p.epoch))
		fail('malformed', 'signed policy has no schema or epoch');
	return {
		keyId: b.key_id,
		epoch: p.epoch,
		digest: 'sha256:' +
		    crypto.createHash('sha256').update(policy).digest('hex'),
		policy,
	};
}

function loadPub(path) {
	const pub = crypto.createPublicKey(fs.readFileSync(path));
	if (pub.asymmetricKeyType !== 'ed25519')
		throw new Error(`${path}: not an Ed25519 key`);
	return pub;
}

module.exports = { verifyBundle, loadPub, keyIdOf };

if (require.main === module) {
	const [pubPath, bundlePath] = process.argv.slice(2);
	if (!pubPath || !bundlePath) {
		process.stderr.write('usage: node interop_verify.js PUB.pem BUNDLE\n');
		process.exit(2);
	}
	try {
		const r = verifyBundle(fs.readFileSync(bundlePath, 'utf8'),
		    [loadPub(pubPath)]);
		process.stdout.write(JSON.stringify({ key_id: r.keyId,
		    epoch: r.epoch, digest: r.digest }) + '\n');
	} catch (e) {
		process.stderr.write(`interop_verify: ${bundlePath}: ` +
		    `${e.code || 'error'}: ${e.message}\n`);
		process.exit(1);
	}
}
