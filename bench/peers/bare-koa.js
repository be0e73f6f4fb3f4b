/**
 * @module bench/peers/bare-koa
 * Reference: a bare Koa 3 app with one middleware answering
 * GET /v1/messages/:id, no router, no auth, no rate limit, no log.
 */
'use strict';

const Koa = require('koa');
const { messageOf, listenAddress } = require('./messages');

const ITEM = /^\/v1\/messages\/([^/]+)$/;

const app = new Koa();
app.use((ctx) => {
  const match = ctx.method === 'GET' ? ITEM.exec(ctx.path) : null;
  const message = match && messageOf(match[1], `${ctx.protocol}://${ctx.host}`);
  if (message) ctx.body = message;
});

const { port, host } = listenAddress();
app.listen(port, host);
