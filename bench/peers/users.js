/**
 * @module bench/peers/users
 * HTTP Basic auth over an htpasswd file of bcrypt hashes, as the
 * hand-written peers do it: bcrypt is slow on purpose, so a verified
 * Authorization header is remembered for a minute.
 */
'use strict';

const { readFileSync } = require('node:fs');
const bcrypt = require('bcryptjs');

const CACHE_TTL_MS = 60_000;
const CACHE_MAX_ENTRIES = 10_000;

/** `user:hash` lines of USERS_FILE (comments and blank lines skipped), as a Map. */
function loadUsers(file = process.env.USERS_FILE) {
  if (!file) throw new Error('USERS_FILE must name the htpasswd file');
  const users = new Map();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const entry = line.trim();
    if (!entry || entry.startsWith('#')) continue;
    const colon = entry.indexOf(':');
    users.set(entry.slice(0, colon), entry.slice(colon + 1));
  }
  return users;
}

/**
 * A check of a user's password whose result is cached by the whole
 * Authorization header: the promise itself, so that the requests arriving
 * while it is verified, or when its entry has expired, wait for one bcrypt
 * comparison instead of making one each. Resolves the user name, or
 * undefined; a failure is not kept.
 */
function cachedVerifier(users) {
  const cache = new Map();
  // An unknown user costs a bcrypt comparison too, so that timing does not tell which users exist.
  const decoy = bcrypt.hashSync('decoy', 10);
  return function verify(header, user, password) {
    const hit = cache.get(header);
    if (hit && hit.expires > Date.now()) return hit.user;
    const hash = users.get(user);
    const result = bcrypt.compare(password, hash ?? decoy).then((ok) => (ok && hash !== undefined ? user : undefined));
    if (cache.size >= CACHE_MAX_ENTRIES) cache.clear();
    const entry = { user: result, expires: Date.now() + CACHE_TTL_MS };
    cache.set(header, entry);
    const forget = () => {
      if (cache.get(header) === entry) cache.delete(header);
    };
    result.then((name) => name === undefined && forget(), forget);
    return result;
  };
}

/** `{user, password}` from a Basic Authorization header, or undefined. */
function parseBasic(header) {
  if (typeof header !== 'string' || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Koa middleware asking for Basic credentials checked by `verify(header,
 * user, password)` (a promise of the user name, or undefined): 401 with a
 * challenge without them, else `ctx.state.user` for what follows.
 */
function koaBasicAuth(verify) {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    const credentials = parseBasic(header);
    const user = credentials && (await verify(header, credentials.user, credentials.password));
    if (!user) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Basic realm="gatehouse"');
      ctx.body = { code: 401, message: '401: Unauthorized' };
      return;
    }
    ctx.state.user = user;
    await next();
  };
}

/** Requests a user may make a minute: RATE_LIMIT (default 60, the demo's). */
function perMinuteLimit() {
  const limit = Number(process.env.RATE_LIMIT ?? 60);
  if (!Number.isInteger(limit) || limit <= 0) throw new Error('RATE_LIMIT must be a positive whole number');
  return limit;
}

module.exports = { loadUsers, cachedVerifier, koaBasicAuth, perMinuteLimit };
