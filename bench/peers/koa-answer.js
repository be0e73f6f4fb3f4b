/**
 * @module bench/peers/koa-answer
 * The hand-written Koa stack (koa-stack.js) answering as the gateway
 * answers: a request id taken from X-Request-Id when well-formed, else made,
 * handed on with the request and sent back; the credentials cache keyed by
 * SHA-256 of a secret and the Authorization header rather than the header
 * itself, so that it holds no credential; the IETF RateLimit and RateLimit-Policy headers on
 * every answer under the limit; the representation chosen from Accept, with
 * Vary: Accept; and the gateway's access-log fields. What those cost is the
 * difference between this row and koa-stack's.
 */
'use strict';

const Koa = require('koa');
const Router = require('koa-router');
const pino = require('pino');
const { createHash, randomBytes, randomUUID } = require('node:crypto');
const { messageOf, NOT_FOUND, listenAddress } = require('./messages');
const { cachedVerifier, koaBasicAuth, loadUsers, perMinuteLimit } = require('./users');

const WINDOW_MS = 60_000;
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;
const logger = pino();
const verifyByKey = cachedVerifier(loadUsers());
const cacheKeySecret = randomBytes(32).toString('hex');
const limit = perMinuteLimit();

/** The verification cached under a keyed hash of the header, never the header. */
function verify(header, user, password) {
  return verifyByKey(
    createHash('sha256')
      .update(cacheKeySecret + header)
      .digest('base64'),
    user,
    password,
  );
}

function accessLog() {
  return async (ctx, next) => {
    const start = performance.now();
    const sent = ctx.get('x-request-id');
    const id = REQUEST_ID.test(sent) ? sent : randomUUID();
    ctx.req.headers['x-request-id'] = id;
    try {
      await next();
    } finally {
      ctx.set('X-Request-Id', id);
      const duration = Math.round((performance.now() - start) * 100) / 100;
      logger.info(
        {
          req_id: id,
          method: ctx.method,
          path: ctx.path,
          route: ctx.state.route,
          status: ctx.status,
          duration_ms: duration,
          remote: ctx.ip,
          user: ctx.state.user,
        },
        'request',
      );
    }
  };
}

/** A fixed window per user, told in RateLimit and RateLimit-Policy. */
function perUserLimit() {
  const windows = new Map();
  return async (ctx, next) => {
    const now = Date.now();
    let window = windows.get(ctx.state.user);
    if (!window || now >= window.resetAt) {
      window = { count: 0, resetAt: now + WINDOW_MS };
      windows.set(ctx.state.user, window);
    }
    const reset = Math.max(1, Math.ceil((window.resetAt - now) / 1000));
    ctx.set('RateLimit-Policy', `"per-user";q=${limit};w=60`);
    if (++window.count > limit) {
      ctx.status = 429;
      ctx.set('RateLimit', `"per-user";r=0;t=${reset}`);
      ctx.set('Retry-After', String(reset));
      ctx.body = { code: 429, message: '429: Too Many Requests' };
      return;
    }
    ctx.set('RateLimit', `"per-user";r=${limit - window.count};t=${reset}`);
    await next();
  };
}

const router = new Router();
router.get('/v1/messages/:id', (ctx) => {
  ctx.state.route = 'api-v1';
  ctx.vary('Accept');
  if (!ctx.accepts('json')) {
    ctx.status = 406;
    ctx.body = { code: 406, message: '406: Not Acceptable' };
    return;
  }
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
