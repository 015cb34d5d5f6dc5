// review_upstream.js - Node's own http server as the second upstream of
// issue 30's review (tests/integration/review_test.sh).
//
//   node review_upstream.js IP PORT LOGFILE READYFILE
//
// Kept alive; routes by Host like a virtual-host server; reads every body
// (Node frames a GET's body by its Content-Length too). Logs one JSON line
// per request it PARSED: {"conn", "method", "path", "host", "headers"},
// and {"conn", "event": "close", "t"} (seconds since the epoch) when a
// connection ends. Answers 200 "vhost=HOST path=PATH method=M".
'use strict';
const http = require('http');
const fs = require('fs');

const [ip, port, logfile, ready] = process.argv.slice(2);
const log = fs.openSync(logfile, 'a');
const write = (o) => fs.writeSync(log, JSON.stringify(o) + '\n');
let conns = 0;

const srv = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (d) => chunks.push(d));
  req.on('end', () => {
    const host = req.headers.host || '';
    write({ conn: req.socket.connNo, method: req.method, path: req.url, host,
      headers: Object.entries(req.headers) });
    const body = `vhost=${host} path=${req.url} method=${req.method}`;
    res.writeHead(200, { 'Content-Length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
});
srv.keepAliveTimeout = 60000;
srv.on('connection', (s) => {
  s.connNo = conns++;
  s.on('close', () => write({ conn: s.connNo, event: 'close', t: Date.now() / 1000 }));
});
srv.listen(Number(port), ip, () => {
  fs.writeFileSync(ready + '.tmp', 'ready\n');
  fs.renameSync(ready + '.tmp', ready);
});
process.on('SIGTERM', () => process.exit(0));
