import assert from 'node:assert/strict';
import { createGatehouse } from '../../src/gatehouse';
import { DEMO_CONFIG } from './support/running';

describe('gatehouse options from code', () => {
  const refused: [string, Record<string, unknown>, RegExp][] = [
    ['a negative body limit', { bodyLimit: -5 }, /^bodyLimit must be a number of bytes \(0 or more\), got -5$/],
    ['a fractional body limit', { bodyLimit: 1.5 }, /^bodyLimit must be a number of bytes \(0 or more\), got 1\.5$/],
    ['a port over 65535', { port: 70000 }, /^port must be a port number \(0-65535\), got 70000$/],
    ['a gRPC port that is NaN', { grpcPort: NaN }, /^grpcPort must be a port number or false \(0-65535\), got NaN$/],
    ['a negative shutdown grace', { shutdownGraceMs: -1 }, /^shutdownGraceMs must be a number of milliseconds \(0 or more\), got -1$/],
    ['an infinite reload debounce', { reloadDebounceMs: Infinity }, /^reloadDebounceMs must be a number of milliseconds \(0 or more\), got Infinity$/],
    ['a fractional keep-alive timeout', { keepAliveTimeoutMs: 0.5 }, /^keepAliveTimeoutMs must be a number of milliseconds \(0 or more\), got 0\.5$/],
    ['a database timeout of 0', { databaseTimeoutMs: 0 }, /^databaseTimeoutMs must be a number of milliseconds \(1 or more\), got 0$/],
    ['a booking store it does not know', { bookingStore: 'redis' as 'memory' }, /^bookingStore must be 'database' or 'memory', got redis$/],
  ];
  for (const [what, option, message] of refused) {
    it(`refuses ${what}, naming the option`, async () => {
      await assert.rejects(createGatehouse({ configDir: DEMO_CONFIG, grpcPort: false, watch: false, ...option }), (err: Error) => {
        assert.equal(err.name, 'RangeError');
        assert.match(err.message, message);
        return true;
      });
    });
  }

  it('keeps idle keep-alive connections 65 s, or as long as keepAliveTimeoutMs says, and tells clients so', async () => {
    for (const [option, header] of [[{}, 'timeout=65'], [{ keepAliveTimeoutMs: 620_000 }, 'timeout=620']] as const) {
      const gatehouse = await createGatehouse({ configDir: DEMO_CONFIG, port: 0, grpcPort: false, watch: false, bookingStore: 'memory', ...option });
      const { url } = await gatehouse.start();
      try {
        const res = await fetch(`${url}/gateway/v0/check_alive`);
        assert.equal(res.headers.get('keep-alive'), header);
        await res.text();
      } finally {
        await gatehouse.stop();
      }
    }
  });

  it('takes 0 for the ports, the body limit and the times', async () => {
    const gatehouse = await createGatehouse({ configDir: DEMO_CONFIG, port: 0, grpcPort: false, bodyLimit: 0, shutdownGraceMs: 0, reloadDebounceMs: 0, watch: false, bookingStore: 'memory' });
    const { port } = await gatehouse.start();
    assert.ok(port > 0);
    await gatehouse.stop();
  });
});
