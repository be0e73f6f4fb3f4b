/**
 * @module test/support/guarded-gateway
 * The gateway the hostile requests of ./hostile-requests are sent to, over
 * HTTP/1.1 and HTTP/2 alike: the built-in auth service (alice/wonderland)
 * in front of an in-process echo module (`/v1/hotels`, `/v1/cars`, `/open`
 * without auth) and a remote backend (`/remote`), each recording what
 * reached it and as which user.
 */
import { createServer, type Server } from 'node:http';
import { createAuthService, type AuthService } from '../../src/auth';
import { createGateway, type GatehouseModule, type Gateway } from '../../src/gateway';
import { createServiceApp } from '../../src/http';
import { quickHash, usersFolder } from './credentials';
import { memoryLogger } from './memory-logger';
import { NO_BOUND_MS } from './polling';
import { authRecord, mappingRecord } from './records';
import { close, listenLocal } from './server';

/** A request that reached a backend: which one, its path, and the user it was told. */
export interface Reached {
  where: 'in-process' | 'remote';
  path: string;
  user?: string | string[];
}

export interface GuardedGateway {
  readonly gateway: Gateway;
  /** What reached the backends, in order; empty it before each test. */
  readonly reached: Reached[];
  /** Closes the gateway, its backends and its auth service (not a server the test put in front). */
  close(): Promise<void>;
}

export async function createGuardedGateway(): Promise<GuardedGateway> {
  const folder = usersFolder();
  const reached: Reached[] = [];
  const auth: AuthService = createAuthService({
    maxWaitMs: NO_BOUND_MS,
    usersFile: folder.write('users.htpasswd', `alice:${quickHash('wonderland')}\n`),
    logger: memoryLogger(),
  });
  const echoApp = createServiceApp();
  echoApp.use((ctx) => {
    reached.push({ where: 'in-process', path: ctx.path, user: ctx.get('x-travel-user') || undefined });
    ctx.body = { path: ctx.path, user: ctx.get('x-travel-user') || null };
  });
  const echo: GatehouseModule = { name: 'echo', app: echoApp };
  const remoteBackend: Server = createServer((req, res) => {
    reached.push({ where: 'remote', path: req.url!, user: req.headers['x-travel-user'] });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url, user: req.headers['x-travel-user'] ?? null }));
  });
  const remoteAddress = await listenLocal(remoteBackend);
  const gateway = createGateway({
    modules: new Map<string, GatehouseModule>([
      ['auth', auth],
      ['echo', echo],
    ]),
    config: {
      mappings: [
        mappingRecord({ name: 'hotels', prefix: '/v1/hotels', service: 'echo' }),
        mappingRecord({ name: 'cars', prefix: '/v1/cars', service: 'echo' }),
        mappingRecord({ name: 'remote', prefix: '/remote', service: remoteAddress }),
        mappingRecord({ name: 'open', prefix: '/open', service: 'echo', bypass_auth: true }),
      ],
      authService: authRecord({ auth_service: 'auth', allowed_authorization_headers: ['x-travel-user'] }),
      sources: [],
    },
  });
  return {
    gateway,
    reached,
    async close() {
      await gateway.close();
      await close(remoteBackend);
      await auth.close();
      folder.remove();
    },
  };
}
