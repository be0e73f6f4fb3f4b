import assert from 'node:assert/strict';
import { createGatehouse, type Gatehouse } from '../../src/gatehouse';
import { createLogger } from '../../src/telemetry';
import { acceptsConnections } from '../support/process';
import { DEMO_CONFIG } from '../support/config-folder';

/** No drain delay at stop: no load balancer sends it anything. */
function quiet(): Promise<Gatehouse> {
  return createGatehouse({
    configDir: DEMO_CONFIG,
    host: '127.0.0.1',
    port: 0,
    grpcPort: 0,
    watch: false,
    drainDelayMs: 0,
    bookingStore: 'memory',
    logger: createLogger({ level: 'silent' }),
  });
}

describe('a Gatehouse started and stopped by an embedding app', function () {
  let gatehouse: Gatehouse | undefined;
  afterEach(async () => {
    await gatehouse?.stop();
    gatehouse = undefined;
  });

  it('refuses a second start() while the first is under way, and leaves nothing listening after stop()', async () => {
    gatehouse = await quiet();
    const [first, second] = await Promise.allSettled([gatehouse.start(), gatehouse.start()]);
    assert.equal(first.status, 'fulfilled');
    assert.equal(second.status, 'rejected');
    assert.match(String(second.reason), /already started/);
    const { port, grpcPort } = (first as PromiseFulfilledResult<{ port: number; grpcPort?: number }>).value;
    assert.equal(await acceptsConnections(port), true);
    await gatehouse.stop();
    assert.equal(await acceptsConnections(port), false, 'the HTTP port is closed');
    assert.equal(await acceptsConnections(grpcPort!), false, 'the gRPC port is closed');
  });

  it('closes what a start() under way opens when stop() is called before it is done', async () => {
    gatehouse = await quiet();
    const starting = gatehouse.start();
    await gatehouse.stop();
    const { port } = await starting;
    assert.equal(await acceptsConnections(port), false);
  });

  it('says that a stopped Gatehouse cannot start again, and that another can be created', async () => {
    gatehouse = await quiet();
    await gatehouse.start();
    await gatehouse.stop();
    await assert.rejects(gatehouse.start(), /this Gatehouse is stopped: create another with createGatehouse\(\)/);
    const again = await quiet();
    const { url } = await again.start();
    assert.equal((await fetch(`${url}/gateway/v0/check_alive`)).status, 200);
    await again.stop();
  });

  it('can be started again after a start that failed', async () => {
    gatehouse = await quiet();
    const first = await gatehouse.start();
    const other = await createGatehouse({
      configDir: DEMO_CONFIG,
      host: '127.0.0.1',
      port: first.port,
      grpcPort: false,
      watch: false,
      drainDelayMs: 0,
      bookingStore: 'memory',
      logger: createLogger({ level: 'silent' }),
    });
    await assert.rejects(other.start(), /already in use/);
    await gatehouse.stop();
    const { port } = await other.start();
    assert.equal(port, first.port);
    await other.stop();
  });
});
