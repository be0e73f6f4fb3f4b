/**
 * @module auth/remote/client
 * `authenticate()` over HTTP: asks an auth service at an address (this
 * project's, run alone, or any other that speaks the same protocol) through a
 * keep-alive connection pool.
 */
import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { FRAMING_HEADERS, isHostPort, redactAddress, undici } from '../../http';
import { AnswerLimitError, readWholeAnswer } from './answer';
import type { AuthDecision, AuthRequest, Authenticator } from '../types';

export interface RemoteAuthClientOptions {
  /** The whole budget of one check: connecting, sending, the answer. Default 5000 ms. */
  timeoutMs?: number;
  /**
   * The most connections kept open to the service. Default 256: more than an
   * auth service holds waiting for bcrypt (64 queued and its threads), so that
   * it answers the rest, a cached credential among them, at once, instead of
   * their waiting here behind a flood of wrong passwords until they time out.
   */
  connections?: number;
  /** A longer answer is treated as a failure of the service. Default 64 KiB. */
  maxBodyBytes?: number;
  /** Adds `l5d-dst-override: <host>:<port>` (the service's own) to every request, for Linkerd. Default false. */
  linkerdHeaders?: boolean;
  /** For an `https://` service: the options of its TLS connections (a client certificate, authorities), as a TLSContext gives them. */
  tls?: ConnectionOptions;
  /** For an `https://` service: the name sent as SNI and checked in its certificate, instead of its own host name. */
  servername?: string;
}

/** An authenticator at a network address. */
export interface RemoteAuthClient extends Authenticator {
  /** `http://host:port`, for messages. */
  readonly origin: string;
  /** Closes the connections. */
  close(): Promise<void>;
}

/** Why a remote check gave no decision. Carries no request data. */
export class RemoteAuthError extends Error {
  readonly reason: 'timeout' | 'unreachable' | 'bad-answer';

  constructor(reason: RemoteAuthError['reason'], message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'RemoteAuthError';
    this.reason = reason;
  }
}

/**
 * Headers that belong to one connection or that the client sets itself.
 * `Host` is not among them: the service is told the host the client asked
 * for, as Envoy's ext_authz does.
 */
const NOT_FORWARDED = new Set([...FRAMING_HEADERS, 'expect']);

/**
 * Reads `host:port`, `[v6]:port` or an `http(s)://` URL (whose path, if any,
 * goes in front of every request path). Throws for anything else.
 */
export function parseAuthAddress(address: string): { origin: string; basePath: string } {
  const schemed = /^[a-z][a-z0-9+.-]*:\/\//i.test(address);
  const shown = redactAddress(address);
  // Without a scheme, a URL parser would take `host:` or `host` for port 80: a
  // port left out by mistake is refused here, as for upstreams.
  const slash = address.indexOf('/');
  if (!schemed && !isHostPort(slash === -1 ? address : address.slice(0, slash))) {
    throw new Error(`'${shown}' is not host:port or a URL (with a port from 1 to 65535)`);
  }
  const withScheme = schemed ? address : `http://${address}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`'${shown}' is not host:port or a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`'${shown}': only http and https are supported`);
  if (url.username || url.password || url.search || url.hash) {
    throw new Error(`'${shown}': an auth service address has no credentials, query or fragment`);
  }
  if (url.port === '0') throw new Error(`'${shown}': port 0 is no port to connect to`);
  return { origin: url.origin, basePath: url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '') };
}

function outgoing(
  headers: IncomingHttpHeaders,
  body: Buffer | undefined,
  extra: string | undefined,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = { 'content-length': body === undefined ? '0' : String(body.length) };
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !NOT_FORWARDED.has(name)) out[name] = value;
  }
  if (extra !== undefined) out['l5d-dst-override'] = extra;
  return out;
}

/**
 * The name TLS is to present and check, the service's own: undici would take
 * it from the `Host` header, which is the client's here. None for an address.
 */
function tlsName(origin: string): string {
  const host = new URL(origin).hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? '' : host;
}

/** `host:port` of an origin, the port said even when it is the scheme's own. */
function hostAndPort(origin: string): string {
  const url = new URL(origin);
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

/**
 * A client for the auth service at `address`. `authenticate` sends the
 * request's method, `url` (behind the address's path), headers (`Host`
 * included) and body, if any, and resolves with whatever status the service
 * answers; it rejects with a {@link RemoteAuthError} when there is no whole
 * answer within `timeoutMs`, its body included.
 */
export function createRemoteAuthClient(address: string, options: RemoteAuthClientOptions = {}): RemoteAuthClient {
  const { origin, basePath } = parseAuthAddress(address);
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxBodyBytes = options.maxBodyBytes ?? 64 * 1024;
  const linkerd = options.linkerdHeaders ? hostAndPort(origin) : undefined;
  const servername = origin.startsWith('https:') ? (options.servername ?? tlsName(origin)) : undefined;
  const pool = new (undici().Pool)(origin, {
    ...(options.tls !== undefined ? { connect: options.tls } : {}),
    connections: options.connections ?? 256,
    connectTimeout: timeoutMs,
    // The reader's own timer bounds the whole answer from before it is sent, so undici's would never fire
    // first: they would only take a timer of every check, which undici's timer list keeps a second after.
    headersTimeout: 0,
    bodyTimeout: 0,
  });

  async function authenticate(request: AuthRequest): Promise<AuthDecision> {
    try {
      const answer = await readWholeAnswer(
        pool,
        {
          method: request.method,
          path: basePath + request.url,
          headers: outgoing(request.headers, request.body, linkerd),
          body: request.body ?? null,
          // Known to undici's requests, missing from its types.
          servername,
        } as Dispatcher.DispatchOptions,
        maxBodyBytes,
        timeoutMs,
      );
      const headers: Record<string, string | string[]> = {};
      for (const name in answer.headers) {
        const value = answer.headers[name];
        if (value !== undefined) headers[name] = value;
      }
      return { status: answer.statusCode, headers, body: answer.body };
    } catch (err) {
      if (err instanceof AnswerLimitError && err.limit === 'size') {
        throw new RemoteAuthError('bad-answer', `the auth service answered with more than ${maxBodyBytes} bytes`);
      }
      const code = (err as { code?: string; name?: string }).code ?? (err as Error).name;
      if (err instanceof AnswerLimitError || code === 'UND_ERR_CONNECT_TIMEOUT') {
        throw new RemoteAuthError(
          'timeout',
          `the auth service at ${origin} did not answer within ${timeoutMs} ms`,
          err,
        );
      }
      throw new RemoteAuthError('unreachable', `the auth service at ${origin} could not be asked (${code})`, err);
    }
  }

  return { origin, authenticate, close: () => pool.close() };
}
