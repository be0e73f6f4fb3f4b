/**
 * @module test/support/routing-rig
 * A gateway in front of one recording upstream, each Mapping marking the
 * requests it forwards with `X-Route: <its name>`, so that a test reads
 * which Mapping won, and the path, query and Host the upstream got.
 */
import type http from 'node:http';
import { createAuthService } from '../../src/auth';
import { createGateway, type Gateway, type GatewayConfig, type GatewayOptions } from '../../src/gateway';
import { memoryLogger } from './memory-logger';
import { quickHash, usersFolder } from './credentials';
import { close, listen } from './server';
import { configOf } from './records';
import { recordingUpstream, type Received } from './upstreams';
import { registry } from './modules';
import { send, type Answer } from './client';
import { NO_BOUND_MS } from './polling';

/** What one request came to. */
export interface Routed {
  readonly status: number;
  /** The Mapping that forwarded it, when the upstream got it. */
  readonly route?: string;
  /** The path and query the upstream was asked for. */
  readonly url?: string;
  readonly received?: Received;
  readonly answer: Answer;
}

export interface Rig {
  readonly url: string;
  readonly gateway: Gateway;
  /** The upstream's address, as a Mapping's `service`. */
  readonly upstream: string;
  readonly received: Received[];
  call(path: string, options?: { method?: string; headers?: Record<string, string> }): Promise<Routed>;
  close(): Promise<void>;
}

/**
 * A gateway serving `config(upstream)` (the upstream's `host:port`) in
 * front of a recording upstream; its Mappings mark what they forward with
 * `X-Route`, for {@link Rig.call} to read.
 */
export async function configRig(
  config: (upstream: string) => GatewayConfig,
  options: Omit<GatewayOptions, 'config'> = {},
): Promise<Rig> {
  const up = await recordingUpstream();
  const address = `127.0.0.1:${up.port}`;
  let gateway: Gateway | undefined;
  let server: http.Server | undefined;
  try {
    gateway = createGateway({ ...options, config: config(address) });
    ({ server } = await listen(gateway.app.callback()));
  } catch (err) {
    await gateway?.close();
    await close(up.server);
    throw err;
  }
  const built = gateway;
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    gateway: built,
    upstream: address,
    received: up.received,
    async call(path, callOptions = {}) {
      const before = up.received.length;
      const answer = await send(url, path, callOptions);
      const received = up.received.length > before ? up.received[up.received.length - 1] : undefined;
      const route = received?.headers['x-route'];
      return {
        status: answer.status,
        route: typeof route === 'string' ? route : undefined,
        url: received?.url,
        received,
        answer,
      };
    },
    async close() {
      await close(server);
      await built.close();
      await close(up.server);
    },
  };
}

/**
 * A gateway whose Mappings are `records(upstream)`: named records with at
 * least a prefix; each gets the upstream as its service unless it names one,
 * and `X-Route` with its name.
 */
export function routingRig(
  records: (upstream: string) => Record<string, unknown>[],
  options: Omit<GatewayOptions, 'config'> & { extra?: unknown[] } = {},
): Promise<Rig> {
  const { extra, ...gatewayOptions } = options;
  const mappingsOf = (address: string) =>
    records(address).map((r) => ({
      apiVersion: 'gateway/v1',
      kind: 'Mapping',
      service: address,
      add_request_headers: { 'X-Route': String(r.name) },
      ...r,
    }));
  return configRig((address) => configOf(...mappingsOf(address), ...(extra ?? [])), gatewayOptions);
}

/** The credentials {@link guardedRig} accepts: user `ada`, password `lovelace`. */
export const ADA = { user: 'ada', password: 'lovelace' };

/** {@link routingRig} behind the built-in auth service, which knows {@link ADA}. */
export async function guardedRig(records: (upstream: string) => Record<string, unknown>[]): Promise<Rig> {
  const folder = usersFolder();
  const auth = createAuthService({
    maxWaitMs: NO_BOUND_MS,
    usersFile: folder.write('users.htpasswd', `${ADA.user}:${quickHash(ADA.password)}\n`),
    logger: memoryLogger(),
  });
  const rig = await routingRig(records, {
    modules: registry(auth),
    extra: [{ apiVersion: 'gateway/v1', kind: 'AuthService', name: 'authentication', auth_service: 'auth' }],
  });
  return {
    ...rig,
    async close() {
      await rig.close();
      await auth.close();
      folder.remove();
    },
  };
}
