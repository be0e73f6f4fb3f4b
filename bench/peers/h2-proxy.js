/**
 * @module bench/peers/h2-proxy
 * The floor of the gRPC upstream rows: a bare gRPC proxy on node:http2, as
 * little as passes a call on (one HTTP/2 connection to the upstream, each
 * stream's headers, messages and trailers relayed, a client's reset
 * passed on), and nothing a gateway does besides. What a call costs it is
 * what any proxy on Node's HTTP/2 pays before its own work. The upstream is
 * UPSTREAM (`host:port`); it listens on PORT (0: any free port) and says
 * where in its first line. Started with its standard input a pipe, it ends
 * when the pipe closes.
 */
'use strict';

const http2 = require('node:http2');

const { NGHTTP2_CANCEL } = http2.constants;
const upstream = http2.connect(`http://${process.env.UPSTREAM}`);
upstream.on('error', (err) => {
  process.stderr.write(`h2-proxy: the upstream failed: ${err.message}\n`);
  process.exit(1);
});

const server = http2.createServer();
server.on('stream', (stream, headers) => {
  const up = upstream.request(
    {
      ':method': 'POST',
      ':path': headers[':path'],
      ':scheme': 'http',
      ':authority': process.env.UPSTREAM,
      'content-type': headers['content-type'],
      te: 'trailers',
    },
    { endStream: false },
  );
  let trailers = {};
  stream.on('error', () => {});
  up.on('error', () => {});
  stream.on('data', (chunk) => {
    if (!up.destroyed) up.write(chunk);
  });
  stream.on('end', () => up.end());
  stream.on('close', () => {
    if (!up.closed) up.close(NGHTTP2_CANCEL);
  });
  stream.on('wantTrailers', () => stream.sendTrailers(trailers));
  up.on('response', (answer) => {
    if (stream.destroyed) return;
    const out = { ':status': answer[':status'] };
    for (const name in answer) if (name.charCodeAt(0) !== 58) out[name] = answer[name];
    stream.respond(out, { waitForTrailers: true });
  });
  up.on('data', (chunk) => {
    if (!stream.destroyed) stream.write(chunk);
  });
  up.on('trailers', (sent) => {
    trailers = sent;
  });
  up.on('end', () => {
    if (!stream.destroyed) stream.end();
  });
});
server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  process.stdout.write(`h2-proxy listening on 127.0.0.1:${server.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0)).resume();
process.once('SIGTERM', () => process.exit(0));
