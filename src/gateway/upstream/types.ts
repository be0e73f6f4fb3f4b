/**
 * @module gateway/upstream/types
 * What forwarding a request to a remote upstream is told, shared by the
 * plain forward (./forward) and the upgrade (./upgrade).
 */
import type { GatewayEvents } from '../events';
import type { StreamedBodyGuard } from '../request/body-limit';
import type { RequestTrace } from '../../tracing';

/** How one request is forwarded: its path (base, rewrite and query applied) and limits. */
export interface ForwardOptions {
  readonly path: string;
  /** How long to wait for the response headers once the request body is sent, and then between parts of the answer; 0 for ever. */
  readonly timeoutMs: number;
  /** The counter of a body of unknown length, when there is one. */
  readonly guard: StreamedBodyGuard | null;
  /** The mapping's name, for {@link GatewayEvents.upstreamError}. */
  readonly route?: string;
  readonly events?: GatewayEvents;
  /** The route's `remove_request_headers` (lower case): an `X-Forwarded-*` among them is not written. */
  readonly removedHeaders?: readonly string[];
  /** The route's `host_rewrite`: the Host the upstream is sent instead of its own `host:port`. */
  readonly hostRewrite?: string;
  /** The largest request body a retry sends again; a longer one is streamed, and not retried. Default 1 MiB. */
  readonly retryBufferBytes?: number;
  /** The request's trace, when it is traced: each try is a span of it, and the upstream is sent that span as its parent. */
  readonly trace?: RequestTrace | null;
}
