import assert from 'node:assert/strict';
import { configFromRecords, createGateway, type GatewayConfig } from '../../src/gateway';

function configOf(records: unknown[]): GatewayConfig {
  const result = configFromRecords(records);
  assert.ok(result.ok, JSON.stringify(!result.ok && result.problems));
  return result.config;
}

describe('gateway/snapshot', () => {
  it('shows the names of add_auth_headers but never their values', async () => {
    const gateway = createGateway({
      config: configOf([
        {
          apiVersion: 'gateway/v1',
          kind: 'AuthService',
          name: 'authn',
          auth_service: 'auth.internal:9001',
          add_auth_headers: { 'x-api-key': 'k-123456', 'x-tenant': 'tenant-42' },
        },
      ]),
    });
    try {
      const snapshot = gateway.snapshot();
      const shown = JSON.stringify(snapshot);
      for (const secret of ['k-123456', 'tenant-42']) assert.ok(!shown.includes(secret), `${secret} in ${shown}`);
      assert.deepEqual(snapshot.authService?.add_auth_headers, { 'x-api-key': '[redacted]', 'x-tenant': '[redacted]' });
      assert.equal(snapshot.authService?.auth_service, 'auth.internal:9001');
    } finally {
      await gateway.close();
    }
  });
});
