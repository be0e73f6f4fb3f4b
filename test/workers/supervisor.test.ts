/**
 * @module test/workers/supervisor
 * What the main thread of a gateway's workers does when one dies: another
 * takes its place on the same ports, and when they keep dying the gateway
 * stops with the reason rather than spin. Real threads on real ports.
 */
import assert from 'node:assert/strict';
import { resolveOptions } from '../../src/gatehouse';
import { supportsReusePort } from '../../src/ports';
import { createLogger } from '../../src/telemetry';
import { CRASH_LIMIT, startWorkers, type Workers } from '../../src/workers';
import { send } from '../support/client';
import { DEMO_CONFIG } from '../support/config-folder';
import { captureLog, type LogCapture } from '../support/log-capture';

describe('the workers of a gateway', function () {
  let log: LogCapture;
  let workers: Workers | undefined;
  before(function () {
    if (!supportsReusePort()) this.skip();
  });
  afterEach(async () => {
    await workers?.stop();
    workers = undefined;
  });

  async function start(youngGenerationMb?: number): Promise<Workers> {
    log = captureLog();
    const {
      logger: _logger,
      configSource: _source,
      signal: _signal,
      modules: _modules,
      ports: _ports,
      ...options
    } = resolveOptions({
      configDir: DEMO_CONFIG,
      port: 0,
      grpcPort: false,
      watch: false,
      drainDelayMs: 0,
      logLevel: 'silent',
      bookingStore: 'memory',
    });
    workers = await startWorkers({ options, count: 2, logger: createLogger({ destination: log }), youngGenerationMb });
    return workers;
  }

  /** Resolves once a worker has taken the place of one that ended, `n` times. */
  const replaced = (n: number) => log.waitForLines(n, (l) => l.msg === 'a worker took the place of one that ended');

  it('puts another worker in the place of one that dies, on the same port', async () => {
    const running = await start();
    const base = running.listening.url;
    const [dying] = running.threads();
    await dying.terminate();
    await replaced(1);
    assert.equal(running.threads().length, 2);
    assert.ok(!running.threads().includes(dying));
    const ended = log.lines.find((l) => l.msg === 'a worker ended: another takes its place');
    assert.ok(ended, log.raw.join('\n'));
    assert.equal(ended.worker, 1);
    for (let i = 0; i < 8; i++) assert.equal((await send(base, '/v1/messages/1')).status, 200);
  });

  it("sizes each worker's young generation as asked, and that of a worker in the place of one that died", async () => {
    const running = await start(6);
    const young = () => running.threads().map((t) => t.resourceLimits?.maxYoungGenerationSizeMb);
    assert.deepEqual(young(), [6, 6]);
    await running.threads()[0].terminate();
    await replaced(1);
    assert.deepEqual(young(), [6, 6]);
    assert.equal((await send(running.listening.url, '/v1/messages/1')).status, 200);
  });

  it('stops the gateway, saying why, when its workers keep dying', async () => {
    const running = await start();
    const port = running.listening.port;
    for (let death = 1; death < CRASH_LIMIT; death++) {
      await running.threads()[0].terminate();
      await replaced(death);
    }
    await running.threads()[0].terminate();
    const why = await running.ended;
    assert.match(why.message, new RegExp(`^workers keep ending: ${CRASH_LIMIT} ended within a minute`));
    assert.ok(log.lines.some((l) => l.level === 50 && l.msg === why.message));
    assert.deepEqual(running.threads(), []);
    await assert.rejects(send(`http://127.0.0.1:${port}`, '/v1/messages/1'), /ECONNREFUSED/);
  });
});
