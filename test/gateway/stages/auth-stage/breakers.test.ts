/**
 * An AuthService's circuit_breakers, against a real gRPC ext_authz service
 * and a real HTTP auth service that hold their answers: a check past the
 * breakers is never made, and the request gets status_on_error (or goes
 * on with failure_mode_allow), as Envoy's open breakers fail the call.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { createAuthStage } from '../../../../src/gateway/stages/auth-stage';
import { startExtAuthzServer, type ExtAuthzServer } from '../../../support/ext-authz-server';
import { close, listen } from '../../../support/server';
import { configOf, mapping } from '../../../support/records';
import { configRig, type Rig } from '../../../support/routing-rig';
import { FORMS, loaded, written } from '../../../support/emissary';
import { memoryLogger } from '../../../support/memory-logger';

/** Resolves once `ready()` holds, looking again after each turn of the event loop. */
async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise(setImmediate);
}

function rigFor(service: string, fields: Record<string, unknown>): Promise<Rig> {
  return configRig(
    (up) =>
      configOf(mapping('/orders/', up, { add_request_headers: { 'X-Route': 'orders' } }), {
        apiVersion: 'gateway/v1',
        kind: 'AuthService',
        name: 'auth',
        auth_service: service,
        ...fields,
      }),
    { stages: { auth: (record, modules) => createAuthStage(record, modules, { logger: memoryLogger() }) } },
  );
}

describe('an AuthService with circuit_breakers', () => {
  it('refuses with status_on_error, asking nothing, a gRPC check past max_requests', async () => {
    const authz: ExtAuthzServer = await startExtAuthzServer();
    const rig = await rigFor(authz.address, {
      proto: 'grpc',
      circuit_breakers: [{ max_requests: 1 }],
      status_on_error: { code: 503 },
    });
    try {
      authz.answer = () => 'never';
      const held = rig.call('/orders/1');
      await until(() => authz.received.length === 1);
      const past = await rig.call('/orders/2');
      assert.deepEqual([past.status, past.received, authz.received.length], [503, undefined, 1]);
      // The held check fails when the service goes; its request gets status_on_error too.
      await authz.close();
      assert.equal((await held).status, 503);
    } finally {
      await rig.close();
      await authz.close();
    }
  });

  it('lets a check past the breakers through with failure_mode_allow, and counts an HTTP check until it is answered', async () => {
    const waiting: http.ServerResponse[] = [];
    const auth = await listen((_req, res) => waiting.push(res));
    const rig = await rigFor(auth.url.slice('http://'.length), {
      circuit_breakers: [{ max_connections: 1, max_pending_requests: 0 }],
      failure_mode_allow: true,
    });
    try {
      const held = rig.call('/orders/1');
      await until(() => waiting.length === 1);
      const past = await rig.call('/orders/2');
      assert.deepEqual([past.status, past.route, waiting.length], [200, 'orders', 1]);
      waiting[0].writeHead(200).end();
      assert.equal((await held).route, 'orders');
      // Answered, the check no longer counts: the next one is asked.
      const next = rig.call('/orders/3');
      await until(() => waiting.length === 2);
      waiting[1].writeHead(200).end();
      assert.equal((await next).route, 'orders');
    } finally {
      await rig.close();
      await close(auth.server);
    }
  });

  for (const form of FORMS) {
    it(`is read from Emissary's AuthService, written as ${form === 'resource' ? 'a resource' : 'an annotation'}`, () => {
      const result = loaded(
        written(form, {
          kind: 'AuthService',
          name: 'walrus',
          spec: { auth_service: 'walrus.example:8500', proto: 'grpc', circuit_breakers: [{ max_requests: 4096 }] },
        }),
      );
      assert.deepEqual(result.config.authService?.circuit_breakers, [{ priority: 'default', max_requests: 4096 }]);
    });
  }
});
