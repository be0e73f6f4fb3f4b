/**
 * @module cli/listening-line
 * The line `gatehouse start` prints once it serves: where, which folder,
 * and where the counters and the bookings go.
 */
import type { BookingsState, Listening, ResolvedOptions } from '../gatehouse';
import { describeStorage } from '../gatehouse/storage-words';
import { describeRedisUrl } from '../gatehouse/options';
import { hostPort } from '../http/request/urls';

/** Where the bookings go, in words, as the start line says it. */
export function bookingsInWords(options: ResolvedOptions, state: BookingsState): string {
  return state === 'none' && options.bookingStore !== 'memory'
    ? 'none (no Mapping routes to a booking service)'
    : describeStorage(options);
}

/**
 * `gatehouse listening on <url> (...)`. Which folder is served matters as
 * much as where: GATEHOUSE_CONFIG or a relative --config may not be the
 * folder the user has just edited. So does where the counters and the
 * bookings go: a data folder beside another config is another database.
 */
export function listeningLine(options: ResolvedOptions, listening: Listening, bookings: string, workers = 1): string {
  const grpc =
    listening.grpcPort === undefined ? '' : `gRPC rate limits on ${hostPort(options.grpcHost, listening.grpcPort)}; `;
  const secure = listening.httpsPort === undefined ? '' : `HTTPS on ${hostPort(options.host, listening.httpsPort)}; `;
  const counters =
    options.redisUrl === undefined
      ? workers > 1
        ? 'counters: shared memory; '
        : ''
      : `counters: Redis at ${describeRedisUrl(options.redisUrl)}; `;
  const additional = (listening.additionalPorts ?? [])
    .map((port) => `HTTP also on ${hostPort(options.host, port)}; `)
    .join('');
  const threads = workers > 1 ? `${workers} workers; ` : '';
  return `gatehouse listening on ${listening.url} (${threads}${additional}${secure}${grpc}config folder ${options.configDir}; ${counters}bookings: ${bookings})\n`;
}
