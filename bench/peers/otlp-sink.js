// An OTLP/HTTP collector that takes every export and keeps nothing: where the
// traced rows of bench/tracing.ts send their spans. PORT, HOST.
'use strict';
const http = require('node:http');

let spans = 0;
const server = http.createServer((req, res) => {
  let bytes = 0;
  req.on('data', (chunk) => (bytes += chunk.length));
  req.on('end', () => {
    spans += bytes > 0 ? 1 : 0;
    res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': '0' });
    res.end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), process.env.HOST || '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
