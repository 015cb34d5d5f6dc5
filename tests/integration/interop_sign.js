// An independent bundle signer (Node.js built-in crypto only) for the
// interop test: docs/design.md "Signed bundle" implemented from the text, not
// from our C code.
//
//   node interop_sign.js KEY.pem POLICY [--flip-each-byte]
//
// KEY.pem is a PKCS#8 PEM Ed25519 private key (egress-guardctl keygen).
// POLICY holds the canonical policy bytes (egress-guardctl compile output;
// one trailing newline is not part of them). Prints the bundle JSON and a
// newline. With --flip-each-byte, prints one bundle per policy byte, each
// signed over the true bytes but carrying byte i with bit (i % 8) flipped:
// every line must be refused.
'use strict';
const crypto = require('crypto');
const fs = require('fs');

function die(msg) {
	process.stderr.write('interop_sign: ' + msg + '\n');
	process.exit(2);
}

const args = process.argv.slice(2);
const flipEach = args.includes('--flip-each-byte');
const [keyPath, policyPath] = args.filter((a) => !a.startsWith('--'));
if (!keyPath || !policyPath)
	die('usage: node interop_sign.js KEY.pem POLICY [--flip-each-byte]');

const priv = crypto.createPrivateKey(fs.readFileSync(keyPath));
if (priv.asymmetricKeyType !== 'ed25519')
	die(`${keyPath}: not an Ed25519 key (${priv.asymmetricKeyType})`);

let policy = fs.readFileSync(policyPath);
if (policy.length > 0 && policy[policy.length - 1] === 0x0a)
	policy = policy.subarray(0, policy.length - 1);

// The raw public key two ways: the last 32 bytes of the SPKI DER, and the
// JWK "x". They must agree before either is trusted.
const pub = crypto.createPublicKey(priv);
const spki = pub.export({ type: 'spki', format: 'der' });
const rawSpki = spki.subarray(spki.length - 32);
const rawJwk = Buffer.from(pub.export({ format: 'jwk' }).x, 'base64url');
if (rawJwk.length !== 32 || !rawSpki.equals(rawJwk))
	die('SPKI and JWK disagree on the raw public key');
const keyId = crypto.createHash('sha256').update(rawJwk).digest('hex');

const msg = Buffer.concat([
	Buffer.from('egress-guard.policy.v1', 'ascii'),
	Buffer.from([0]),
	policy,
]);
const sig = crypto.sign(null, msg, priv);
if (sig.length !== 64)
	die('signature is not 64 bytes');

function bundle(policyBytes) {
	// Key order as in docs/design.md; JSON.stringify is compact.
	return JSON.stringify({
		schema: 'egress-guard.bundle.v1',
		key_id: keyId,
		policy: policyBytes.toString('base64'),
		signature: sig.toString('base64'),
	});
}

if (!flipEach) {
	process.stdout.write(bundle(policy) + '\n');
} else {
	for (let i = 0; i < policy.length; i++) {
		const bad = Buffer.from(policy);
		bad[i] ^= 1 << (i % 8);
		process.stdout.write(bundle(bad) + '\n');
	}
}
