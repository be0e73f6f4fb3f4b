/**
 * @module test/support/remote-auth-rig
 * A gateway on a real port in front of a recording auth service and a
 * recording backend, both on real ports: what the tests of an AuthService that
 * asks over HTTP share. Routes: `/remote` to the backend, `/echo` to an
 * in-process echo module.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createGateway, type Gateway } from '../../src/gateway';
import { createAuthStage } from '../../src/gateway/stages/auth-stage';
import { memoryLogger } from './memory-logger';
import { close, listen } from './server';
import { configOf, mapping } from './records';
import { echoModule, registry } from './modules';
import { recordingUpstream, type Received } from './upstreams';
import { NO_BOUND_MS } from './polling';

/** How a recording server answers what it received. */
export type Respond = (req: IncomingMessage, res: ServerResponse, received: Received) => void;

type Recording = Awaited<ReturnType<typeof recordingUpstream>>;

export interface RemoteAuthRig {
  /** The auth service: what it received, where it listens. */
  readonly auth: Recording;
  readonly backend: Recording;
  /** The gateway's URL, once started. */
  readonly base: string;
  /** How the auth service answers; before each test, a 200 naming alice. */
  answer: Respond;
  /** Starts a gateway whose AuthService record has these fields besides its name and address. */
  start(fields?: Record<string, unknown>): Promise<void>;
}

const allowAlice: Respond = (_req, res) => res.writeHead(200, { 'x-travel-user': 'alice' }).end();

/**
 * Registers the mocha hooks of a rig in the `describe` it is called in: the
 * servers live for the whole block, a gateway for one test.
 */
export function useRemoteAuthRig(backendAnswer: Respond): RemoteAuthRig {
  let auth: Recording | undefined;
  let backend: Recording | undefined;
  let gateway: Gateway | undefined;
  let server: Server | undefined;
  let base = '';
  const rig: RemoteAuthRig = {
    get auth() {
      return auth!;
    },
    get backend() {
      return backend!;
    },
    get base() {
      return base;
    },
    answer: allowAlice,
    async start(fields = {}) {
      gateway = createGateway({
        modules: registry(echoModule('echo')),
        stages: { auth: (record, modules) => createAuthStage(record, modules, { logger: memoryLogger() }) },
        config: configOf(mapping('/remote', backend!.url), mapping('/echo', 'echo'), {
          apiVersion: 'gateway/v1',
          kind: 'AuthService',
          name: 'authentication',
          auth_service: `127.0.0.1:${auth!.port}`,
          // The service's word is what is tested, however long a loaded machine makes it; a test of the bound sets one.
          timeout_ms: NO_BOUND_MS,
          ...fields,
        }),
      });
      const up = await listen(gateway.app.callback());
      server = up.server;
      base = up.url;
    },
  };

  before(async () => {
    auth = await recordingUpstream((req, res, received) => rig.answer(req, res, received));
    backend = await recordingUpstream(backendAnswer);
  });
  beforeEach(() => {
    auth!.received.length = 0;
    backend!.received.length = 0;
    rig.answer = allowAlice;
  });
  afterEach(async () => {
    await close(server);
    await gateway?.close();
    server = undefined;
    gateway = undefined;
  });
  after(async () => {
    await close(auth!.server);
    await close(backend!.server);
  });
  return rig;
}
