/**
 * @module gateway/upstream
 * What a record's `service` names: a built-in module, or the network address
 * of a remote upstream (`host:port`, `http://host:port[/base]`,
 * `https://host[:port][/base]`).
 */
import { isHostPort } from '../http';

/** A remote upstream's address, parsed once. */
export interface UpstreamAddress {
  /** `http://host:port`: the key of its connection pool. */
  readonly origin: string;
  /** The `Host` header the upstream is sent: host and port as written. */
  readonly host: string;
  /** A path every forwarded path is put under, without trailing slash; `''` for none. */
  readonly basePath: string;
  readonly secure: boolean;
}

/** How long a route with `timeout_ms: 0` waits for a connection to its upstream: Emissary's default `connect_timeout_ms`. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 3000;

const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/**
 * Parses an upstream address. Returns `undefined` for anything else (a bare
 * name, another scheme, a URL with credentials, query or fragment).
 */
export function parseUpstreamAddress(service: string): UpstreamAddress | undefined {
  if (isHostPort(service)) return { origin: `http://${service}`, host: service, basePath: '', secure: false };
  if (!URL_SCHEME.test(service)) return undefined;
  let url: URL;
  try {
    url = new URL(service);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || url.search || url.hash || !url.hostname) return undefined;
  if (/[?#]/.test(service)) return undefined;
  const basePath = url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
  return { origin: url.origin, host: url.host, basePath, secure: url.protocol === 'https:' };
}
