/**
 * @module ratelimit/grpc/client
 * A remote rate-limit service behind the typed face: envoy v3
 * `ShouldRateLimit` over one shared channel, with a deadline on every call.
 */
import type * as grpc from '@grpc/grpc-js';
import { grpcJs } from '../../platform';
import { isHostPort, redactAddress } from '../../http';
import { requestToProto, responseFromProto, type ProtoRequest, type ProtoResponse } from './messages/codec';
import { ENVOY_V3_SERVICE, methodOf } from './protos';
import { HELD_UP_MAX_MS, withinDeadline } from '../deadline';
import type { DecideOptions } from '../store';
import type { RateLimiter, RateLimitRequest, RateLimitResponse } from '../types';

export interface RateLimitClientOptions {
  /** Deadline of each call in ms. Default 20, as Envoy's. */
  timeoutMs?: number;
  /** TLS checked against the system's certificate authorities, as an `https://` address asks too. Default false. */
  tls?: boolean;
  /** How the channel is secured, as a TLSContext gives it; over `tls` when given. */
  credentials?: grpc.ChannelCredentials;
  /** The name sent as SNI and checked in the service's certificate, instead of its host's (a TLSContext's `sni`). */
  servername?: string;
}

export interface RateLimitClient extends RateLimiter {
  readonly address: string;
  close(): void;
}

/** Bounds of the wait between connection attempts while the service is away, in ms. */
const RECONNECT_BACKOFF_MS = { initial: 100, max: 250 } as const;

/** A call that failed: the service is down, too slow, or refused the request. */
export class RateLimitCallError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
    this.name = 'RateLimitCallError';
  }
}

/** Headers as gRPC metadata (lower-case names; a list becomes one entry per value). */
function metadataOf(headers: Readonly<Record<string, string | string[] | undefined>>): grpc.Metadata {
  const metadata = new (grpcJs().Metadata)();
  for (const name in headers) {
    const value = headers[name];
    if (typeof value === 'string') metadata.set(name, value);
    else if (value !== undefined) for (const one of value) metadata.add(name, one);
  }
  return metadata;
}

/**
 * The gRPC target of a rate-limit service address: `host:port`,
 * `[v6]:port`, or either behind `grpc://` or `http://` (plaintext, as the
 * service listens) or `https://` (TLS). Undefined for anything else: a
 * name, a path, credentials or a port out of range.
 */
function rateLimitTarget(address: string): string | undefined {
  const bare = address.replace(/^(grpc|https?):\/\//i, '').replace(/\/$/, '');
  return isHostPort(bare) ? bare : undefined;
}

/**
 * A client of a remote rate-limit service at `host:port`. Throws for an
 * address it cannot reach as written (see {@link rateLimitTarget}), which
 * would otherwise fail every call.
 */
export function createRateLimitClient(address: string, options: RateLimitClientOptions = {}): RateLimitClient {
  const timeoutMs = options.timeoutMs ?? 20;
  const method = methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit');
  const at = rateLimitTarget(address);
  if (at === undefined) {
    throw new Error(
      `'${redactAddress(address)}' is not the address of a gRPC rate-limit service: host:port, [v6]:port, grpc://host:port (plaintext) or https://host:port (TLS)`,
    );
  }
  const tls = options.tls === true || /^https:\/\//i.test(address);
  const credentials =
    options.credentials ?? (tls ? grpcJs().credentials.createSsl() : grpcJs().credentials.createInsecure());
  const named =
    options.servername === undefined
      ? {}
      : { 'grpc.ssl_target_name_override': options.servername, 'grpc.default_authority': options.servername };
  const client = new (grpcJs().Client)(at, credentials, {
    ...named,
    // Calls fail fast while the service is down; reconnection goes on behind.
    'grpc.enable_retries': 0,
    // grpc-js waits up to two minutes between connection attempts to a service
    // that stays down, so one that comes back would go unasked (every request
    // unlimited, or refused under failure_mode_deny) until the next attempt.
    // Envoy tries again on the next request; here, at least every quarter second.
    'grpc.initial_reconnect_backoff_ms': RECONNECT_BACKOFF_MS.initial,
    'grpc.max_reconnect_backoff_ms': RECONNECT_BACKOFF_MS.max,
  });
  // Connect now, so that the first request does not pay for it within its deadline.
  client.getChannel().getConnectivityState(true);

  /**
   * The call's deadline counts this process's attention (see ../deadline), so
   * that an answer read late, the event loop being busy, is not failed: the
   * service is given the longest the call may wait, and the call is
   * cancelled at the deadline, which tells the service to count nothing.
   */
  function shouldRateLimit(request: RateLimitRequest, options?: DecideOptions): Promise<RateLimitResponse> {
    const budget = options?.timeoutMs ?? timeoutMs;
    let call: grpc.ClientUnaryCall | undefined;
    const metadata = options?.metadata === undefined ? undefined : metadataOf(options.metadata);
    const ask = () =>
      new Promise<RateLimitResponse>((resolve, reject) => {
        call = client.makeUnaryRequest<ProtoRequest, ProtoResponse>(
          method.path,
          method.requestSerialize as (value: ProtoRequest) => Buffer,
          method.responseDeserialize as (value: Buffer) => ProtoResponse,
          requestToProto(request),
          metadata ?? new (grpcJs().Metadata)(),
          { deadline: Date.now() + budget + HELD_UP_MAX_MS },
          (err, value) => {
            if (err) reject(new RateLimitCallError(err.code, err.details || err.message));
            else resolve(responseFromProto(value!));
          },
        );
      });
    const giveUp = () => {
      call?.cancel();
      return new RateLimitCallError(grpcJs().status.DEADLINE_EXCEEDED, `no answer within ${budget} ms`);
    };
    return withinDeadline(budget, ask, giveUp, options?.gone);
  }

  return {
    address,
    shouldRateLimit,
    close: () => client.close(),
  };
}
