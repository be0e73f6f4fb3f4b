/**
 * @module gateway/stages/ratelimit-service-client
 * Who a RateLimitService record's stage asks: the built-in module it names
 * (within the record's deadline), or a gRPC client of the address it names;
 * anything else is refused when the stage is built.
 */
import type { ChannelCredentials } from '@grpc/grpc-js';
import { redactAddress } from '../../http';
import {
  createRateLimitClient,
  withinDeadline,
  type DecideOptions,
  type RateLimiter,
  type RateLimitResponse,
} from '../../ratelimit';
import type { UpstreamTls } from '../../tls';
import type { HeaderCarrier } from '../../tracing';
import type { RateLimitServiceRecord } from '../config/schema';
import type { ModuleRegistry } from '../module';
import { grpcChannelTls } from './grpc-tls';

/** Asks the service about one request; `metadata` carries the trace to a remote one. */
export type AskRateLimit = (
  req: Parameters<RateLimiter['shouldRateLimit']>[0],
  metadata?: HeaderCarrier,
) => RateLimitResponse | Promise<RateLimitResponse>;

/** How a remote service is reached. */
export interface RateLimitChannelOptions {
  /** TLS to a remote service, as the TLSContext its `tls` names says. */
  upstreamTls?: UpstreamTls;
  /** How the channel to a remote service is secured, over `upstreamTls`; default: as the record's `tls` says. */
  credentials?: ChannelCredentials;
}

/** Who is asked: the built-in module, or the gRPC client of a remote service. */
export interface RateLimitServiceClient {
  readonly local: RateLimiter | undefined;
  readonly remote: ReturnType<typeof createRateLimitClient> | undefined;
  readonly ask: AskRateLimit;
}

/**
 * The client `record.service` names. Throws when it names neither a
 * registered module with `shouldRateLimit` nor an address.
 */
export function rateLimitServiceClient(
  record: RateLimitServiceRecord,
  modules: ModuleRegistry,
  options: RateLimitChannelOptions,
): RateLimitServiceClient {
  const module = modules.get(record.service);
  const local: RateLimiter | undefined =
    typeof module?.shouldRateLimit === 'function' ? (module as RateLimiter) : undefined;
  // A misspelt module name would otherwise become a gRPC address that never
  // answers, and every request would pass unlimited: refused when built.
  if (!local && !record.service.includes(':') && !record.service.includes('/')) {
    throw new Error(
      `service '${redactAddress(record.service)}' is neither a built-in module that rate-limits nor an address (host:port or URL)`,
    );
  }
  let remote: ReturnType<typeof createRateLimitClient> | undefined;
  try {
    const channel = grpcChannelTls(options.upstreamTls);
    remote = local
      ? undefined
      : createRateLimitClient(record.service, {
          timeoutMs: record.timeout_ms,
          tls: record.tls === true || (typeof record.tls === 'string' && record.tls !== ''),
          credentials: options.credentials ?? channel?.credentials,
          servername: channel?.servername,
        });
  } catch (err) {
    // An address the client cannot reach as written: the client says why, this names the field.
    throw new Error(`service ${(err as Error).message}`);
  }
  // A limiter with `decide` (the built-in service) keeps the deadline itself,
  // from when the decision reaches its store: a deadline armed here would
  // also count the time the request waited in this process's event loop,
  // and fail open, uncounted, a decision Redis was about to answer. Over the
  // memory store, it answers within the call.
  const asked: DecideOptions = { timeoutMs: record.timeout_ms };
  const noAnswer = () => new Error(`no answer within ${record.timeout_ms} ms`);
  const decide = local?.decide?.bind(local);
  const ask: AskRateLimit = !local
    ? (req, metadata) => remote!.shouldRateLimit(req, metadata === undefined ? undefined : { metadata })
    : decide
      ? (req) => decide(req, asked)
      : (req) =>
          withinDeadline(
            record.timeout_ms,
            (gone) => local.shouldRateLimit(req, { timeoutMs: record.timeout_ms, gone }),
            noAnswer,
          );
  return { local, remote, ask };
}
