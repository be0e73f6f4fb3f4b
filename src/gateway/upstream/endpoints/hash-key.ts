/**
 * @module gateway/upstream/endpoints/hash-key
 * What `ring_hash` and `maglev` hash a request on: a header's value, a
 * cookie's, or the client's address. A request without that cookie gets one
 * when the policy gives it a `ttl`, as Envoy generates it, so that its next
 * requests keep to the endpoint this one went to.
 */
import type { Context } from 'koa';
import { randomBytes } from 'node:crypto';
import { clientAddress } from '../../request/headers/forwarded';
import { hashKey } from './balancer';
import type { HashOn } from './cluster';

/** A request's hash key, and the cookie to set when one was made for it. */
export interface RequestKey {
  readonly key: number | undefined;
  readonly setCookie?: string;
}

const NONE: RequestKey = { key: undefined };

/** The value of cookie `name` in a `Cookie` header, if any. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The hash key of a request under `on`; no key (the request is balanced in turn) when it has none to hash. */
export function requestKey(ctx: Context, on: HashOn): RequestKey {
  const headers = ctx.req.headers;
  if ('header' in on) {
    const value = headers[on.header];
    if (value === undefined) return NONE;
    return { key: hashKey(Array.isArray(value) ? value[0] : value) };
  }
  if ('sourceIp' in on) return { key: hashKey(clientAddress(ctx)) };
  const found = cookieValue(headers.cookie, on.cookie.name);
  if (found !== undefined) return { key: hashKey(found) };
  if (on.cookie.ttlMs === undefined) return NONE;
  const made = randomBytes(8).toString('hex');
  const path = on.cookie.path === undefined ? '' : `; Path=${on.cookie.path}`;
  return {
    key: hashKey(made),
    setCookie: `${on.cookie.name}=${made}; Max-Age=${Math.floor(on.cookie.ttlMs / 1000)}${path}; HttpOnly`,
  };
}
