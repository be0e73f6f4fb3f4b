/**
 * The largest rate-limit calls the gRPC port takes (1000 descriptors, each
 * of as many entries as fit in its 64 KiB message bound) share the event
 * loop with the gateway's HTTP in one process: each is read and decided on
 * its own, so that an HTTP request sent while a stream of them is under way
 * is answered between them, not once they are all done. What one of them
 * may hold the loop is bounded by what a call may carry
 * (test/ratelimit/grpc/bounds.test.ts), and measured in bench/results.
 */
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { createGatehouse, type Gatehouse } from '../../src/gatehouse';
import { ENVOY_V3_SERVICE, MAX_DESCRIPTORS } from '../../src/ratelimit';
import { methodOf } from '../../src/ratelimit/grpc/protos';
import { createLogger } from '../../src/telemetry';
import { copyConfig, type TempConfig } from '../support/config-folder';

const LIMITS = 'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 1000000}\n';

/** How many of the largest calls are sent at once. */
const CALLS = 40;

const method = methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit');

/** The largest request the port takes: the most descriptors, each counted by the limit above, as wide as fits. */
function largestRequest(): Buffer {
  const encoded = (entries: number) =>
    method.requestSerialize({
      domain: 'd',
      descriptors: Array.from({ length: MAX_DESCRIPTORS }, (_, i) => ({
        entries: Array.from({ length: entries }, (_, j) =>
          j === 0 ? { key: 'k', value: `v${i}` } : { key: 'e', value: `${j}` },
        ),
      })),
    });
  let entries = 1;
  while (encoded(entries + 1).length <= 64 * 1024) entries++;
  return encoded(entries);
}

describe('the largest rate-limit calls and HTTP in one gatehouse', () => {
  let config: TempConfig;
  let gatehouse: Gatehouse;
  let url: string;
  let client: grpc.Client;

  before(async () => {
    config = copyConfig();
    config.write('ratelimit.yaml', LIMITS);
    gatehouse = await createGatehouse({
      configDir: config.dir,
      host: '127.0.0.1',
      port: 0,
      grpcPort: 0,
      watch: false,
      drainDelayMs: 0,
      bookingStore: 'memory',
      logger: createLogger({ level: 'silent' }),
    });
    const listening = await gatehouse.start();
    url = listening.url;
    client = new grpc.Client(`127.0.0.1:${listening.grpcPort}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await gatehouse.stop();
    config.remove();
  });

  /** Makes a ShouldRateLimit call of bytes already encoded; resolves its overall code. */
  function call(bytes: Buffer): Promise<string> {
    return new Promise((resolve, reject) => {
      client.makeUnaryRequest(
        method.path,
        (b: Buffer) => b,
        method.responseDeserialize,
        bytes,
        // Longer than the test: however slow the machine, every call is answered, never cut off.
        { deadline: Date.now() + 600_000 },
        (err, res) => (err ? reject(err) : resolve((res as { overall_code: string }).overall_code)),
      );
    });
  }

  it('answers an HTTP request between the largest calls, each decided on its own, rather than after them all', async () => {
    const bytes = largestRequest();
    assert.ok(bytes.length <= 64 * 1024, `${bytes.length} bytes`);
    let answered = 0;
    const calls = Array.from({ length: CALLS }, () =>
      call(bytes).then((code) => {
        answered++;
        return code;
      }),
    );
    // The stream is under way once one is answered.
    await Promise.race(calls);
    const alive = await fetch(`${url}/gateway/v0/check_alive`);
    const answeredBefore = answered;
    assert.equal(alive.status, 200);
    assert.deepEqual(await Promise.all(calls), Array<string>(CALLS).fill('OK'));
    assert.ok(answeredBefore < CALLS, `check_alive was answered once all ${CALLS} calls were`);
  });
});
