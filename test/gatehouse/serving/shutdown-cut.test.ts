/**
 * @module test/gatehouse/serving/shutdown-cut
 * A request still in flight when the shutdown grace runs out is cut by the
 * server: its access line says so (and 503 when nothing was answered yet),
 * not that its client left.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyConfig, type TempConfig } from '../../support/config-folder';
import { startGatehouse } from '../../support/gatehouse';
import { servicesYaml } from '../../support/websocket';

describe('gatehouse requests cut at the end of the shutdown grace', () => {
  let upstream: http.Server;
  let config: TempConfig;
  let arrived!: () => void;

  before(async () => {
    // An upstream that takes requests and never answers them.
    upstream = http.createServer(() => arrived());
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    config = copyConfig();
    config.write(
      'services.yaml',
      servicesYaml({
        name: 'stuck',
        prefix: '/stuck/',
        service: `127.0.0.1:${(upstream.address() as AddressInfo).port}`,
        bypass_auth: true,
        // Only the stop may end the request: no timeout_ms of 3 s to race it on a loaded machine.
        timeout_ms: 0,
      }),
    );
  });
  after(async () => {
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
    config.remove();
  });

  it('logs them cut_at_shutdown with status 503, not as clients that left', async () => {
    const running = await startGatehouse({ configDir: config.dir, shutdownGraceMs: 200 });
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const asked = new Promise<string>((resolve) => {
      http.get(`${running.url}/stuck/x`, { agent: false }, () => resolve('answered')).on('error', () => resolve('cut'));
    });
    await reached;
    await running.stop();
    assert.equal(await asked, 'cut');
    const [line] = await running.log.waitForLines(1, (l) => l.msg === 'request' && l.path === '/stuck/x');
    assert.equal(line.status, 503);
    assert.equal(line.cut_at_shutdown, true);
    assert.equal('aborted' in line, false);
  });
});
