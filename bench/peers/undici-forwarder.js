/**
 * @module bench/peers/undici-forwarder
 * A bare proxy: node:http in, an undici Pool to UPSTREAM out, the answer
 * streamed back without its hop-by-hop headers. No routing, no log.
 */
'use strict';

const http = require('node:http');
const { Pool } = require('undici');
const { listenAddress } = require('./messages');

// RFC 9110 §7.6.1: meant for one connection, not passed on.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

function withoutHopByHop(headers) {
  const kept = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) kept[name] = value;
  return kept;
}

const upstream = process.env.UPSTREAM;
if (!upstream) throw new Error('UPSTREAM must be the upstream origin, http://host:port');
const pool = new Pool(upstream);

// pool.stream() writes the answer straight into `res`: undici's own way to
// proxy, without the intermediate Readable of pool.request().
const server = http.createServer(async (req, res) => {
  const options = {
    method: req.method,
    path: req.url,
    headers: { ...withoutHopByHop(req.headers), 'x-forwarded-for': req.socket.remoteAddress },
    body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
  };
  try {
    await pool.stream(options, ({ statusCode, headers }) => {
      res.writeHead(statusCode, withoutHopByHop(headers));
      return res;
    });
  } catch {
    if (res.headersSent) res.destroy();
    else res.writeHead(502).end();
  }
});

const { port, host } = listenAddress();
server.listen(port, host);
