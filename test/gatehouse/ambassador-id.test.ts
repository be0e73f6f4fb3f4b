/**
 * A Gatehouse with an `ambassador_id` (the ambassadorId option, or
 * AMBASSADOR_ID) serves the records of the config folder that name it, at
 * start and at every reload, and the others are left to other gateways.
 */
import assert from 'node:assert/strict';
import { createGatehouse, resolveOptions, type Gatehouse } from '../../src/gatehouse';
import { createLogger } from '../../src/telemetry';
import { close } from '../support/server';
import { recordingUpstream } from '../support/upstreams';
import { copyConfig, type TempConfig } from '../support/config-folder';

const blueMapping = (upstream: string, prefix: string) => `apiVersion: getambassador.io/v3alpha1
kind: Mapping
metadata: {name: blue-${prefix.replace(/\//g, '')}}
spec: {prefix: ${prefix}, service: '${upstream}', ambassador_id: [blue]}
`;

describe('gatehouse ambassadorId', () => {
  let config: TempConfig;
  let gatehouse: Gatehouse;
  let up: Awaited<ReturnType<typeof recordingUpstream>>;
  let url: string;

  before(async () => {
    up = await recordingUpstream();
    config = copyConfig();
    config.write('emissary.yaml', blueMapping(`127.0.0.1:${up.port}`, '/blue/'));
    gatehouse = await createGatehouse({
      configDir: config.dir,
      ambassadorId: 'blue',
      port: 0,
      grpcPort: false,
      watch: false,
      drainDelayMs: 0,
      bookingStore: 'memory',
      logger: createLogger({ level: 'silent' }),
    });
    ({ url } = await gatehouse.start());
  });
  after(async () => {
    await gatehouse?.stop();
    await close(up?.server);
    config?.remove();
  });

  it("serves the records naming its id, and not the demo's, which name none", async () => {
    assert.equal((await fetch(`${url}/blue/x`)).status, 200);
    assert.equal(up.received.at(-1)?.url, '/x');
    assert.equal((await fetch(`${url}/v1/messages/1`)).status, 404);
  });

  it('reads the records of its id again on a reload', async () => {
    config.write('emissary.yaml', blueMapping(`127.0.0.1:${up.port}`, '/navy/'));
    assert.deepEqual(await gatehouse.reload(), { ok: true });
    assert.equal((await fetch(`${url}/navy/y`)).status, 200);
    assert.equal((await fetch(`${url}/blue/x`)).status, 404);
  });

  it('takes its id from AMBASSADOR_ID, default when unset or empty, and refuses an empty one from code', () => {
    assert.equal(resolveOptions({}, { AMBASSADOR_ID: 'green' }).ambassadorId, 'green');
    assert.equal(resolveOptions({}, { AMBASSADOR_ID: '' }).ambassadorId, 'default');
    assert.equal(resolveOptions({ ambassadorId: 'blue' }, { AMBASSADOR_ID: 'green' }).ambassadorId, 'blue');
    assert.throws(
      () => resolveOptions({ ambassadorId: ' ' }, {}),
      /^RangeError: ambassadorId: must be a name \(got " "\)$/,
    );
  });
});
