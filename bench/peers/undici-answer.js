/**
 * @module bench/peers/undici-answer
 * The bare proxy (undici-forwarder.js) answering as the gateway answers: a
 * request id taken from X-Request-Id when well-formed, else made, handed on
 * to the upstream and sent back; X-Forwarded-For, -Proto, -Host and
 * Forwarded for the upstream, which is asked under its own Host; the
 * headers a Connection header nominates dropped with the hop-by-hop ones,
 * both ways; and a pino access line with the gateway's fields. What those
 * cost is the difference between this row and undici's.
 */
'use strict';

const http = require('node:http');
const { randomUUID } = require('node:crypto');
const { Pool } = require('undici');
const pino = require('pino');
const { listenAddress } = require('./messages');

const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;
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

/** The headers without the hop-by-hop ones and those their Connection header names. */
function withoutHopByHop(headers) {
  const nominated = typeof headers.connection === 'string' ? headers.connection.toLowerCase().split(/\s*,\s*/) : [];
  const kept = {};
  for (const [name, value] of Object.entries(headers))
    if (!HOP_BY_HOP.has(name) && !nominated.includes(name)) kept[name] = value;
  return kept;
}

const upstream = process.env.UPSTREAM;
if (!upstream) throw new Error('UPSTREAM must be the upstream origin, http://host:port');
const upstreamHost = new URL(upstream).host;
const pool = new Pool(upstream);
const logger = pino();

const server = http.createServer(async (req, res) => {
  const start = performance.now();
  const sent = req.headers['x-request-id'];
  const id = typeof sent === 'string' && REQUEST_ID.test(sent) ? sent : randomUUID();
  const remote = req.socket.remoteAddress;
  const host = req.headers.host ?? '';
  const headers = withoutHopByHop(req.headers);
  headers.host = upstreamHost;
  headers['x-request-id'] = id;
  headers['x-forwarded-for'] = remote;
  headers['x-forwarded-proto'] = 'http';
  headers['x-forwarded-host'] = host;
  headers.forwarded = `for=${remote};host="${host}";proto=http`;
  const options = {
    method: req.method,
    path: req.url,
    headers,
    body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
  };
  try {
    await pool.stream(options, ({ statusCode, headers: answered }) => {
      const back = withoutHopByHop(answered);
      back['x-request-id'] = id;
      res.writeHead(statusCode, back);
      return res;
    });
  } catch {
    if (res.headersSent) res.destroy();
    else res.writeHead(502, { 'x-request-id': id }).end();
  }
  const duration = Math.round((performance.now() - start) * 100) / 100;
  logger.info(
    {
      req_id: id,
      method: req.method,
      path: req.url,
      route: 'api-v1',
      status: res.statusCode,
      duration_ms: duration,
      remote,
    },
    'request',
  );
});

const { port, host } = listenAddress();
server.listen(port, host);
