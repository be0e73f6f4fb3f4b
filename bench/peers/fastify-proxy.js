/**
 * @module bench/peers/fastify-proxy
 * A proxy on fastify: @fastify/http-proxy forwarding /v1 to UPSTREAM. No
 * logger, fastify's default.
 */
'use strict';

const Fastify = require('fastify');
const { listenAddress } = require('./messages');

async function main() {
  const upstream = process.env.UPSTREAM;
  if (!upstream) throw new Error('UPSTREAM must be the upstream origin, http://host:port');
  const app = Fastify();
  await app.register(require('@fastify/http-proxy'), { upstream, prefix: '/v1', rewritePrefix: '/v1' });
  await app.listen(listenAddress());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
