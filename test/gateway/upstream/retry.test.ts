import assert from 'node:assert/strict';
import { backoffMs, type RetryPolicy } from '../../../src/gateway/upstream/retry';
import { freePort } from '../../support/ports';
import { mapping } from '../../support/records';
import { send } from '../../support/client';
import { testGateway, type TestGateway } from '../../support/reporting-gateway';
import { testUpstream, type TestUpstream } from '../../support/upstreams';

describe('retry_policy', () => {
  let up: TestUpstream;
  let overloaded: TestUpstream;
  let dead: number;
  let rig: TestGateway;

  const retrying = (
    prefix: string,
    name: string,
    policy: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) => mapping(prefix, `http://${up.address}`, { name, retry_policy: policy, ...extra });

  before(async () => {
    up = await testUpstream();
    overloaded = await testUpstream('127.0.0.1', { 'x-envoy-overloaded': 'true' });
    dead = await freePort();
    rig = await testGateway(
      [
        retrying('/5xx/', 'r5xx', { retry_on: '5xx', num_retries: 2 }),
        retrying('/default/', 'default', { retry_on: '5xx' }),
        retrying('/gateway-error/', 'gateway-error', { retry_on: 'gateway-error' }),
        retrying('/4xx/', 'r4xx', { retry_on: 'retriable-4xx' }),
        retrying('/codes/', 'codes', { retry_on: 'retriable-status-codes', retriable_status_codes: [429] }),
        retrying('/reset/', 'reset', { retry_on: 'reset' }),
        retrying('/connect-only/', 'connect-only', { retry_on: 'connect-failure' }),
        retrying('/per-try/', 'per-try', { retry_on: '5xx', per_try_timeout: '100ms' }),
        // Long enough that a try answered at once is never late on a busy machine.
        retrying('/per-try-then-answer/', 'per-try-then-answer', { retry_on: '5xx', per_try_timeout: '1s' }),
        retrying('/overall/', 'overall', { retry_on: '5xx', num_retries: 3 }, { timeout_ms: 200 }),
        mapping('/connect/', `http://${up.address}`, {
          name: 'connect',
          retry_policy: { retry_on: 'connect-failure' },
          endpoints: [`127.0.0.1:${dead}`, up.address],
        }),
        mapping('/4xx-only-connect/', `http://${up.address}`, {
          name: 'no-connect',
          retry_policy: { retry_on: 'retriable-4xx' },
          endpoints: [`127.0.0.1:${dead}`, up.address],
        }),
        mapping('/overloaded/', `http://${overloaded.address}`, {
          name: 'overloaded',
          retry_policy: { retry_on: '5xx' },
        }),
        retrying('/small-buffer/', 'small-buffer', { retry_on: '5xx' }),
      ],
      { retryBufferBytes: 64 },
    );
  });

  beforeEach(() => {
    up.got.length = 0;
    up.replies = [];
    rig.reported.retries.length = 0;
  });

  after(async () => {
    up.release();
    await rig.close();
    await Promise.all([up.close(), overloaded.close()]);
  });

  it('tries a 5xx again and answers with the try that worked, counting the retry', async () => {
    up.replies = [503, 200];
    const res = await send(rig.base, '/5xx/a');
    assert.equal(res.status, 200);
    assert.equal(up.got.length, 2);
    assert.deepEqual(rig.reported.retries, ['r5xx']);
  });

  it('stops after num_retries and passes the last answer on as the upstream gave it', async () => {
    up.replies = [500, 502, 504, 200];
    const res = await send(rig.base, '/5xx/b');
    assert.equal(res.status, 504);
    assert.equal(res.text, '504 from 127.0.0.1');
    assert.equal(up.got.length, 3);
  });

  it("tries once more by default (Envoy's num_retries 1)", async () => {
    up.replies = [500, 500, 200];
    assert.equal((await send(rig.base, '/default/')).status, 500);
    assert.equal(up.got.length, 2);
  });

  it('tries 502, 503 and 504 again under gateway-error, not a 500', async () => {
    up.replies = [500];
    assert.equal((await send(rig.base, '/gateway-error/')).status, 500);
    up.replies = [503, 200];
    assert.equal((await send(rig.base, '/gateway-error/')).status, 200);
    assert.equal(up.got.length, 3);
  });

  it('tries a 409 again under retriable-4xx, and no other 4xx or 5xx', async () => {
    up.replies = [409, 200];
    assert.equal((await send(rig.base, '/4xx/')).status, 200);
    up.replies = [429];
    assert.equal((await send(rig.base, '/4xx/')).status, 429);
    up.replies = [503];
    assert.equal((await send(rig.base, '/4xx/')).status, 503);
    assert.equal(up.got.length, 4);
  });

  it('tries the statuses of retriable_status_codes again', async () => {
    up.replies = [429, 200];
    assert.equal((await send(rig.base, '/codes/')).status, 200);
    assert.equal(up.got.length, 2);
  });

  it('tries again a connection the upstream closed without answering, under reset but not connect-failure', async () => {
    up.replies = ['hangup', 200];
    assert.equal((await send(rig.base, '/reset/')).status, 200);
    up.replies = ['hangup', 200];
    const res = await send(rig.base, '/connect-only/');
    assert.equal(res.status, 502);
    assert.deepEqual(res.json(), {
      code: 502,
      message: '502: Bad Gateway',
      detail: 'the upstream service failed to answer',
    });
    assert.equal(up.got.length, 3);
  });

  it('tries a failed connection again on the next endpoint under connect-failure, and not under retriable-4xx', async () => {
    // Round robin starts with the first endpoint: the dead one.
    assert.equal((await send(rig.base, '/connect/')).status, 200);
    assert.equal(up.got.length, 1);
    const res = await send(rig.base, '/4xx-only-connect/');
    assert.equal(res.status, 503);
    assert.equal(res.json().detail, 'the upstream service is unavailable');
  });

  it('gives up a try after per_try_timeout and tries again', async () => {
    up.replies = ['hold', 200];
    const res = await send(rig.base, '/per-try-then-answer/');
    assert.equal(res.status, 200, res.text);
    assert.equal(up.got.length, 2);
    up.release();
  });

  it('answers 504 past per_try_timeout when no try is left', async () => {
    up.replies = ['hold', 'hold'];
    const res = await send(rig.base, '/per-try/');
    assert.equal(res.status, 504);
    assert.equal(res.json().detail, 'the upstream service did not answer within per_try_timeout (100 ms)');
    up.release();
  });

  it('never tries again once timeout_ms, which bounds every try together, has passed', async () => {
    up.replies = ['hold'];
    const res = await send(rig.base, '/overall/');
    assert.equal(res.status, 504);
    assert.equal(res.json().detail, 'the upstream service did not answer within 200 ms');
    assert.equal(up.got.length, 1);
    up.release();
  });

  it('does not try again an answer that says x-envoy-overloaded', async () => {
    overloaded.replies = [503, 200];
    assert.equal((await send(rig.base, '/overloaded/')).status, 503);
    assert.equal(overloaded.got.length, 1);
  });

  it('sends a body again, whole, on the next try, sized or chunked', async () => {
    up.replies = [503, 200, 503, 200];
    const sized = await send(rig.base, '/5xx/post', {
      method: 'POST',
      body: '{"n":1}',
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(sized.status, 200);
    const chunked = await send(rig.base, '/5xx/put', { method: 'PUT', body: ['ab', 'cd'] });
    assert.equal(chunked.status, 200);
    assert.deepEqual(
      up.got.map((g) => [g.method, g.body]),
      [
        ['POST', '{"n":1}'],
        ['POST', '{"n":1}'],
        ['PUT', 'abcd'],
        ['PUT', 'abcd'],
      ],
    );
    assert.equal(up.got[1].headers['content-length'], '7');
  });

  it('streams a body past the retry buffer, and does not try its request again', async () => {
    up.replies = [503, 200];
    const big = 'x'.repeat(100);
    const sized = await send(rig.base, '/small-buffer/', { method: 'POST', body: big });
    assert.equal(sized.status, 503);
    up.replies = [503, 200];
    const chunked = await send(rig.base, '/small-buffer/', { method: 'POST', body: ['y'.repeat(50), 'z'.repeat(50)] });
    assert.equal(chunked.status, 503);
    assert.deepEqual(
      up.got.map((g) => g.body),
      [big, 'y'.repeat(50) + 'z'.repeat(50)],
    );
    assert.deepEqual(rig.reported.retries, []);
  });

  it("waits between tries as Envoy's fully jittered back-off does: [0, (2^n - 1) × 25 ms), at most 250 ms", () => {
    const policy: RetryPolicy = {
      on: 1,
      numRetries: 5,
      perTryTimeoutMs: 0,
      baseIntervalMs: 25,
      maxIntervalMs: 250,
      statuses: new Set(),
    };
    const highest = (n: number) => backoffMs(policy, n, () => 0.999999);
    assert.deepEqual([1, 2, 3, 4, 5].map(highest), [24, 74, 174, 249, 249]);
    assert.equal(
      backoffMs(policy, 3, () => 0),
      0,
    );
  });
});
