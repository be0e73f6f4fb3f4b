/**
 * @module gateway/upstream/upstream-request
 * The request as an upstream gets it, the same on every try of an exchange
 * (./forward): its headers, the key the balancer hashes, the name TLS
 * presents, and its body (nothing, the client's stream, or the body read
 * whole to be sent again on a retry).
 */
import type { Context } from 'koa';
import type { IncomingMessage } from 'node:http';
import type { Dispatcher } from 'undici';
import { upstreamRequestHeaders } from './headers';
import type { RouteUpstream } from './endpoints/clusters';
import { requestKey, type RequestKey } from './endpoints/hash-key';
import type { ForwardOptions } from './types';
import { servernameOf } from './service';

const NONE: readonly string[] = [];
const NO_KEY: RequestKey = { key: undefined };

/** What every try of one exchange sends; the exchange itself extends it with the tries. */
export abstract class UpstreamRequest {
  protected readonly req: IncomingMessage;
  /** What each try sends: nothing, the client's stream (one try only), or the body read whole. */
  protected body: Buffer | IncomingMessage | null;
  /** Whether the request body has been received whole: the timers count from then. */
  protected bodyDone: boolean;
  protected readonly headers: Record<string, string | string[]>;
  protected readonly hash: RequestKey;
  /** The name TLS presents (see servernameOf). */
  private readonly servername: string | undefined;

  constructor(
    readonly ctx: Context,
    readonly upstream: RouteUpstream,
    readonly options: ForwardOptions,
    hasBody: boolean,
  ) {
    const req = (this.req = ctx.req);
    this.body = hasBody ? req : null;
    this.bodyDone = !hasBody || req.readableEnded;
    this.headers = upstreamRequestHeaders(
      ctx,
      upstream.address.host,
      options.removedHeaders ?? NONE,
      options.hostRewrite,
    );
    const on = upstream.cluster.settings.hashOn;
    this.hash = on === null ? NO_KEY : requestKey(ctx, on);
    this.servername = servernameOf(upstream.address, upstream.cluster.settings.tls?.servername, options.hostRewrite);
  }

  /** The cookie the balancer's hash policy asks the client to keep, if any. */
  get setCookie(): string | undefined {
    return this.hash.setCookie;
  }

  /** undici's options for one try. */
  protected dispatchOptions(): Dispatcher.DispatchOptions {
    return {
      method: this.req.method as Dispatcher.HttpMethod,
      path: this.options.path,
      headers: this.headers,
      body: this.body,
      // The timers of the exchange stand for undici's headers timeout, which would run from the start of the upload,
      // and the call watches the body's gaps (see ./call).
      headersTimeout: 0,
      bodyTimeout: 0,
      // Known to undici's requests, missing from its types.
      servername: this.servername,
    } as Dispatcher.DispatchOptions;
  }
}

/** Whether a request to forward has a body to send. */
export function hasRequestBody(req: IncomingMessage, options: ForwardOptions): boolean {
  return (
    options.guard !== null || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0')
  );
}
