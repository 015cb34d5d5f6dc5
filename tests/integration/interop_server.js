// A stand-in for the guard's control API (docs/design.md "Control API") on a
// Unix socket, built on Node's own HTTP server, so `egress-guardctl push`
// and `status` are tested against an HTTP implementation that is not ours.
//
//   node interop_server.js SOCKET PUB.pem
//
// PUT /v1/policy: verifies the bundle with interop_verify.js against
// PUB.pem; 200 {"epoch","digest","revoked":0} with Content-Length, 400
// malformed, 403 unknown key / bad signature, 409 stale epoch (lower epoch,
// or same epoch with another digest). The exact request body is saved to
// SOCKET.last. GET /v1/status: 200, sent chunked (no Content-Length).
// Anything else: 404. Requests without a Host header, the JSON content type
// or a Content-Length matching the body get 400 "bad_request".
'use strict';
const fs = require('fs');
const http = require('http');
const { verifyBundle, loadPub } = require('./interop_verify.js');

const [sock, pubPath] = process.argv.slice(2);
if (!sock || !pubPath) {
	process.stderr.write('usage: node interop_server.js SOCKET PUB.pem\n');
	process.exit(2);
}
const pubs = [loadPub(pubPath)];
let cur = { epoch: -1, digest: '' };

function answer(res, status, obj, chunked) {
	const body = JSON.stringify(obj) + '\n';
	res.statusCode = status;
	res.setHeader('Content-Type', 'application/json');
	if (chunked) {
		// Two writes and no length: Node sends Transfer-Encoding: chunked.
		res.write(body.slice(0, 5));
		res.end(body.slice(5));
	} else {
		res.setHeader('Content-Length', Buffer.byteLength(body));
		res.end(body);
	}
}

const server = http.createServer((req, res) => {
	const parts = [];
	req.on('data', (d) => parts.push(d));
	req.on('end', () => {
		const body = Buffer.concat(parts);
		if (req.method === 'GET' && req.url === '/v1/status') {
			answer(res, 200, { version: 'interop', epoch: cur.epoch,
			    digest: cur.digest }, true);
			return;
		}
		if (req.method !== 'PUT' || req.url !== '/v1/policy') {
			answer(res, 404, { error: 'not_found', message: req.url });
			return;
		}
		fs.writeFileSync(sock + '.last', body);
		if (!req.headers.host ||
		    req.headers['content-type'] !== 'application/json' ||
		    Number(req.headers['content-length']) !== body.length) {
			answer(res, 400, { error: 'bad_request',
			    message: 'host, content-type or content-length' });
			return;
		}
		let r;
		try {
			r = verifyBundle(body.toString('utf8'), pubs);
		} catch (e) {
			answer(res, e.code === 'malformed' ? 400 : 403,
			    { error: e.code || 'malformed', message: e.message });
			return;
		}
		if (r.epoch < cur.epoch ||
		    (r.epoch === cur.epoch && r.digest !== cur.digest)) {
			answer(res, 409, { error: 'stale_epoch', message:
			    `epoch ${r.epoch} is not after ${cur.epoch}` });
			return;
		}
		cur = { epoch: r.epoch, digest: r.digest };
		answer(res, 200, { epoch: r.epoch, digest: r.digest, revoked: 0 });
	});
});

try {
	fs.unlinkSync(sock);
} catch (e) {
	// absent: fine
}
server.listen(sock);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
