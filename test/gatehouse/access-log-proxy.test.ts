/**
 * Behind a proxy trusted with `trustProxy`, the access log names the client
 * that proxy saw, as the rate limit's remote_address does: the address it
 * wrote last in X-Forwarded-For, not the first, which the client wrote.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { createLogger } from '../../src/telemetry';
import { captureLog } from '../support/log-capture';
import { DEMO_CONFIG } from '../support/config-folder';
import { startGatehouse } from '../support/gatehouse';

describe('gatehouse access log behind a trusted proxy', function () {
  it('logs the address the proxy wrote last in X-Forwarded-For as the remote', async () => {
    const log = captureLog();
    const running = await startGatehouse({
      configDir: DEMO_CONFIG,
      trustProxy: true,
      logger: createLogger({ destination: log, level: 'info' }),
    });
    try {
      await request(running.url)
        .get('/nowhere')
        .set('X-Forwarded-For', '198.51.100.66, 203.0.113.9')
        .set('X-Request-Id', 'proxied-1')
        .expect(404);
      const [line] = await log.waitForLines(1, (l) => l.msg === 'request' && l.req_id === 'proxied-1');
      assert.equal(line.remote, '203.0.113.9');
    } finally {
      await running.stop();
    }
  });
});
