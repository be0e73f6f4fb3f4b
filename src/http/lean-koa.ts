/**
 * @module http/lean-koa
 * A Koa app whose accessors cost less on every request and answer exactly
 * as Koa's own: the query parsed in linear time, `ctx.path = ...` written
 * without node:url (koa-mount sets it twice a request), the client's address
 * read without the list of forwarded ones it does not trust, one header set
 * without the arrays Koa 3 builds for a list of them, the Content-Type of
 * a type name (`json`) looked up once rather than for every body, and the
 * response written without the on-finished listener Koa attaches to each
 * (./respond).
 */
import type Koa from 'koa';
import { koaAccessor } from '../platform';
import { linearQuery } from './request/query';
import { setPlainPath } from './request/request-path';
import { respondWithoutFinishedListener } from './respond';

/** Content-Types kept per type name at most: names come from code, not from requests. */
const MAX_TYPES = 256;

/**
 * Gives `app`'s requests and responses the accessors above, and returns it.
 * Every app whose context a request runs on needs them: modules routed in
 * process and mounted apps run on the context of the app in front.
 */
export function leanKoa(app: Koa): Koa {
  linearQuery(app);
  respondWithoutFinishedListener(app);

  const koaPath = koaAccessor(app.request, 'path');
  Object.defineProperty(app.request, 'path', {
    get: koaPath.get,
    set(this: Koa.Request, path: string) {
      if (!setPlainPath(this.req, path)) koaPath.set!.call(this, path);
    },
    configurable: true,
    enumerable: koaPath.enumerable ?? false,
  });

  // Koa's works out the list of forwarded addresses even when it trusts no proxy, and then reads the socket's.
  const ownIp = Symbol('ip');
  type WithIp = Koa.Request & { [ownIp]?: string };
  Object.defineProperty(app.request, 'ip', {
    get(this: WithIp): string {
      let ip = this[ownIp];
      if (!ip) this[ownIp] = ip = (this.app.proxy ? this.ips[0] : undefined) || this.socket.remoteAddress || '';
      return ip;
    },
    set(this: WithIp, ip: string) {
      this[ownIp] = ip;
    },
    configurable: true,
    enumerable: koaAccessor(app.request, 'ip').enumerable ?? false,
  });

  const response = app.response as Koa.Response & { set(field: unknown, value?: unknown): void };
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called on the response below, as Koa calls it
  const koaSet = response.set;
  response.set = function set(this: Koa.Response, field: unknown, value?: unknown): void {
    // A list (Set-Cookie, or a single-valued header Koa unwraps) and an object of headers are Koa's.
    if (typeof field !== 'string' || (typeof value !== 'string' && typeof value !== 'number')) {
      koaSet.call(this, field, value);
      return;
    }
    if (this.headerSent || !field) return;
    this.res.setHeader(field, value);
  };

  const koaType = koaAccessor(app.response, 'type');
  // What Koa's setter makes of a type name: the Content-Type it set, or false when it removed it.
  const types = new Map<string, string | false>();
  Object.defineProperty(app.response, 'type', {
    get: koaType.get,
    set(this: Koa.Response, type: unknown) {
      const known = typeof type === 'string' ? types.get(type) : undefined;
      if (known === undefined) {
        koaType.set!.call(this, type);
        if (typeof type === 'string' && !this.headerSent && types.size < MAX_TYPES) {
          const written = this.res.getHeader('content-type');
          if (written === undefined || typeof written === 'string') types.set(type, written ?? false);
        }
      } else if (known === false) this.remove('Content-Type');
      else this.set('Content-Type', known);
    },
    configurable: true,
    enumerable: koaType.enumerable ?? false,
  });
  return app;
}
