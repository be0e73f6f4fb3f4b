/**
 * @module gatehouse/serving/drain
 * The first step of a graceful stop, before the ports close: every server
 * keeps serving while it says it is going (readiness 503, gRPC health
 * NOT_SERVING, `Connection: close` on every answer), for as long as a load
 * balancer takes to hear of it and send its requests elsewhere. Closing at
 * once instead loses the requests it sends meanwhile: refused connections,
 * and requests written on connections the gateway is closing.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** A server that can drain: an HTTP(S) listener, the gRPC server. */
export interface Drainable {
  drain(): void;
}

/** What a drain logs. */
export interface DrainLog {
  info(obj: object, msg: string): void;
}

/**
 * Drains `servers` (absent ones skipped) for `ms`, saying so as it begins
 * and ends; resolves when the ports may close, and the caller closes them
 * at once.
 */
export async function drainFor(
  servers: readonly (Drainable | undefined)[],
  ms: number,
  logger: DrainLog,
): Promise<void> {
  for (const server of servers) server?.drain();
  if (ms <= 0) return;
  logger.info(
    { drainDelayMs: ms },
    'draining: not ready, and every answer closes its connection, until the ports close',
  );
  await sleep(ms);
  logger.info(
    { drainDelayMs: ms },
    'drained: closing the ports; what was sent is answered, what is in flight finishes',
  );
}
