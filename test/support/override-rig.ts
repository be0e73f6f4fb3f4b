/**
 * @module test/support/override-rig
 * The gateway the tests of method overrides run against: the auth service
 * in front of a recording backend, `/m/` open to a POST without auth and
 * guarded for every other method, and the Mappings a test adds.
 */
import type { Server } from 'node:http';
import { createAuthService, type AuthService } from '../../src/auth';
import { createGateway, type GatehouseModule, type Gateway } from '../../src/gateway';
import { memoryLogger } from './memory-logger';
import { quickHash, usersFolder } from './credentials';
import { close, listen } from './server';
import { configOf, mapping } from './records';
import { recordingUpstream } from './upstreams';
import { NO_BOUND_MS } from './polling';

/** The error body of a request whose override would route it elsewhere. */
export const REFUSED = {
  code: 400,
  message: '400: Bad Request',
  detail: 'the method override of the request would route it elsewhere than its method',
};

/** What a test reads once the suite's `before` has run. */
export interface OverrideRig {
  backend: Awaited<ReturnType<typeof recordingUpstream>>;
  /** The gateway's URL and port. */
  base: string;
  port: number;
}

/**
 * Starts the rig in the calling suite's `before` and stops it in its
 * `after`; `more` gives the Mappings it adds, to the backend's URL.
 */
export function overrideRig(more: (backendUrl: string) => Record<string, unknown>[] = () => []): OverrideRig {
  const folder = usersFolder();
  const rig = { base: '', port: 0 } as OverrideRig;
  let auth: AuthService;
  let gateway: Gateway;
  let server: Server;
  before(async () => {
    auth = createAuthService({
      maxWaitMs: NO_BOUND_MS,
      usersFile: folder.write('users.htpasswd', `alice:${quickHash('wonderland')}\n`),
      logger: memoryLogger(),
    });
    rig.backend = await recordingUpstream();
    const url = rig.backend.url;
    gateway = createGateway({
      modules: new Map<string, GatehouseModule>([['auth', auth]]),
      config: configOf(
        { apiVersion: 'gateway/v1', kind: 'AuthService', name: 'authentication', auth_service: 'auth' },
        mapping('/m/', url, { name: 'open-post', rewrite: '', method: 'POST', bypass_auth: true }),
        mapping('/m/', url, { name: 'guarded', rewrite: '' }),
        ...more(url),
      ),
    });
    ({ server, port: rig.port, url: rig.base } = await listen(gateway.app.callback()));
  });
  after(async () => {
    await close(server);
    await gateway.close();
    await close(rig.backend.server);
    await auth.close();
    folder.remove();
  });
  return rig;
}
