import assert from 'node:assert/strict';
import { longestStall, manyMappings } from '../../support/large-config';
import { copyConfig, type TempConfig } from '../../support/config-folder';
import { startGatehouse, type Running } from '../../support/gatehouse';

const MAPPINGS = 30_000;
/**
 * At most this share of the reload's time may pass in its longest stall: a
 * reload built in one go holds the event loop for all of it, one built in
 * slices for a small part, however fast or busy the machine is.
 */
const MAX_STALL_SHARE = 0.1;

describe('gatehouse config reload of a large config', function () {
  this.timeout(300_000);
  let config: TempConfig;
  let running: Running;

  before(async () => {
    config = copyConfig();
    running = await startGatehouse({ configDir: config.dir });
  });

  after(async () => {
    await running?.stop();
    config?.remove();
  });

  /**
   * The stall is measured against the reload itself, not against a number of
   * milliseconds: on a loaded machine a slice of work, a collection of the
   * heap, the whole reload take longer, and a bound in milliseconds would
   * test the machine. What the slices promise holds at any speed: the event
   * loop is never held for more than a small share of the reload, and
   * requests are answered all along. The figures are printed; on an idle
   * machine the longest stall is a few tens of milliseconds (docs/configuration.md#reloading).
   */
  it(`answers requests on the old config all along while ${MAPPINGS} Mappings load and their route table is built, the event loop held for a small share of the reload at the most`, async () => {
    config.write('many.yaml', manyMappings(MAPPINGS));
    // A reload of the same files is a whole reload all the same: read, checked, built and switched.
    const reload = await longestStall(running.url, async () =>
      assert.deepEqual(await running.gatehouse.reload(), { ok: true }),
    );
    const figures = `reload of ${Math.round(reload.tookMs)} ms, longest stall ${Math.round(reload.stallMs)} ms, ${reload.answers} answers of check_alive`;
    console.log(figures);
    assert.ok(reload.answers >= 1 / MAX_STALL_SHARE, figures);
    assert.ok(reload.stallMs <= reload.tookMs * MAX_STALL_SHARE, figures);
    const routes = running.gatehouse.gateway.snapshot().routes;
    assert.equal(routes.length, MAPPINGS + 5);
    assert.equal(new Set(routes.flatMap((r) => (r.cluster ? [r.cluster] : []))).size, 100);
    assert.equal(routes.filter((r) => r.share !== undefined).length, MAPPINGS / 5);
    assert.equal((await fetch(`${running.url}/p${MAPPINGS - 1}/messages/1`)).status, 200);
    const moved = await fetch(`${running.url}/o4/x`, { redirect: 'manual' });
    assert.deepEqual([moved.status, moved.headers.get('location')], [301, 'https://example.org/o4/x']);
  });
});
