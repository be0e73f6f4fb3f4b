/**
 * @module gateway/upstream/endpoints/connector
 * How a cluster's pools connect: undici's connector, under a timer of its own
 * for `connect_timeout_ms`, TLS handshake included. undici's own connect
 * timeout ticks by the second, so that a `connect_timeout_ms` of 250 would
 * wait a whole second before a retry on `connect-failure` could try another
 * endpoint.
 */
import type { Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import type { buildConnector } from 'undici';
import { undici } from '../../../http';

/**
 * The connector of a cluster: `timeoutMs` to connect (TLS handshake
 * included), TCP keep-alive probes after `keepAliveIdleS` idle, if given,
 * and `tls`, a TLSContext's options, for an upstream called over TLS.
 */
export function timedConnector(
  timeoutMs: number,
  keepAliveIdleS?: number,
  tls?: ConnectionOptions,
): buildConnector.connector {
  const { buildConnector: build, errors } = undici();
  const connect = build({
    ...tls,
    timeout: 0,
    ...(keepAliveIdleS !== undefined ? { keepAlive: true, keepAliveInitialDelay: keepAliveIdleS * 1000 } : {}),
  }) as unknown as (options: buildConnector.Options, callback: buildConnector.Callback) => Socket;
  return (options, callback) => {
    let settled = false;
    const socket = connect(options, (...args) => {
      if (settled) {
        args[1]?.destroy();
        return;
      }
      settled = true;
      clearTimeout(timer);
      callback(...args);
    });
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      socket.destroy();
      callback(
        new errors.ConnectTimeoutError(`not connected to ${options.hostname}:${options.port} within ${timeoutMs} ms`),
        null,
      );
    }, timeoutMs);
  };
}
