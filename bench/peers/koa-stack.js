/**
 * @module bench/peers/koa-stack
 * The same job as the gateway, hand-written on Koa: a pino access-log line
 * per request, HTTP Basic auth over the htpasswd file (bcrypt results
 * cached), an in-memory counter per user and minute, koa-router for the
 * resource. The access log goes to standard output, as pino's default.
 */
'use strict';

const Koa = require('koa');
const Router = require('koa-router');
const pino = require('pino');
const { messageOf, NOT_FOUND, listenAddress } = require('./messages');
const { cachedVerifier, koaBasicAuth, loadUsers, perMinuteLimit } = require('./users');

const WINDOW_MS = 60_000;
const logger = pino();
const verify = cachedVerifier(loadUsers());
const limit = perMinuteLimit();

function accessLog() {
  return async (ctx, next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      const ms = Math.round((performance.now() - start) * 1000) / 1000;
      logger.info({ method: ctx.method, path: ctx.path, status: ctx.status, user: ctx.state.user, ms }, 'request');
    }
  };
}

/** A fixed window per user: `limit` requests a minute. */
function perUserLimit() {
  const windows = new Map();
  return async (ctx, next) => {
    const now = Date.now();
    let window = windows.get(ctx.state.user);
    if (!window || now >= window.resetAt) {
      window = { count: 0, resetAt: now + WINDOW_MS };
      windows.set(ctx.state.user, window);
    }
    if (++window.count > limit) {
      ctx.status = 429;
      ctx.set('Retry-After', String(Math.ceil((window.resetAt - now) / 1000)));
      ctx.body = { code: 429, message: '429: Too Many Requests' };
      return;
    }
    await next();
  };
}

const router = new Router();
router.get('/v1/messages/:id', (ctx) => {
  const message = messageOf(ctx.params.id, `${ctx.protocol}://${ctx.host}`);
  if (!message) {
    ctx.status = 404;
    ctx.body = NOT_FOUND;
    return;
  }
  ctx.body = message;
});

const app = new Koa();
app.use(accessLog());
app.use(koaBasicAuth(verify));
app.use(perUserLimit());
app.use(router.routes());
app.use(router.allowedMethods());

const { port, host } = listenAddress();
app.listen(port, host);
