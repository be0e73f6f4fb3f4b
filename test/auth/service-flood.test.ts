import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import bcrypt from 'bcryptjs';
import request from 'supertest';
import { createAuthService, type AuthRequest, type AuthService } from '../../src/auth';
import { basic, captureLogger, usersFolder } from './support';

const ask = (authorization: string): AuthRequest => ({ method: 'GET', url: '/v1/hotels', headers: { authorization } });

/** How late a 1 ms timer fired at worst, sampled until `work` settles. */
async function worstTimerLag(work: Promise<unknown>): Promise<number> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  let worst = 0;
  while (!settled) {
    const start = performance.now();
    await sleep(1);
    worst = Math.max(worst, performance.now() - start - 1);
  }
  return worst;
}

/** `count` checks arriving as requests do, each in an event-loop turn of its own. */
async function arriving<T>(count: number, check: (i: number) => Promise<T>): Promise<T[]> {
  const checks: Promise<T>[] = [];
  for (let i = 0; i < count; i++) {
    await new Promise(setImmediate);
    checks.push(check(i));
  }
  return Promise.all(checks);
}

describe('the auth service under a flood of wrong passwords', () => {
  const folder = usersFolder();
  const services: AuthService[] = [];
  const make = (options: Omit<Parameters<typeof createAuthService>[0], 'usersFile'> = {}) => {
    const service = createAuthService({ usersFile: file, logger: captureLogger(), ...options });
    services.push(service);
    return service;
  };
  let file: string;
  /** One bcrypt check of kim's password on this machine, on the main thread. */
  let oneCheckMs: number;

  before(() => {
    // Costs as in real files, so that a check takes long enough to measure: kim's about 60 ms, lee's four times that.
    const kim = bcrypt.hashSync('right', 10);
    // The median of three, so that one check slowed by other work on the machine does not set the bar.
    const times = [0, 1, 2].map(() => {
      const start = performance.now();
      bcrypt.compareSync('wrong', kim);
      return performance.now() - start;
    });
    oneCheckMs = times.sort((a, b) => a - b)[1];
    file = folder.write('flood.htpasswd', `kim:${kim}\nlee:${bcrypt.hashSync('right', 12)}\n`);
  });
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.close()));
  });
  after(() => folder.remove());

  it('keeps the event loop free while many wrong passwords are being checked', async function () {
    this.timeout(30_000);
    // Every check waits its turn here, however slow the machine: the queue's limits are tested below.
    const service = make({ maxWaitMs: 60_000 });
    const checks = arriving(16, (i) => service.authenticate(ask(basic('kim', `wrong-${i}`))));
    const lag = await worstTimerLag(checks);
    assert.deepEqual(
      (await checks).map((d) => d.status),
      Array(16).fill(401),
    );
    // On the event loop, a timer would wait for a whole check; the margin is for a machine busy with other work.
    assert.ok(lag < oneCheckMs * 0.75, `a timer fired ${lag.toFixed(1)} ms late; one check takes ${oneCheckMs.toFixed(1)} ms`);
  });

  it('answers 429 at once, with Retry-After and the challenge, when maxQueued checks are already waiting', async function () {
    this.timeout(10_000);
    // The length of the queue is the subject: the checks it holds may wait their turn however slow the machine.
    const service = make({ threads: 1, maxQueued: 2, maxWaitMs: 60_000 });
    let done = 0;
    const accepted = [0, 1, 2].map((i) => service.authenticate(ask(basic('lee', `wrong-${i}`))).finally(() => done++));

    const refused = await service.authenticate(ask(basic('lee', 'wrong-3')));
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers['www-authenticate'], 'Basic realm="gatehouse"');
    const body = JSON.parse(String(refused.body));
    assert.deepEqual([body.code, body.message], [429, '429: Too Many Requests']);
    assert.equal(body.detail, refused.detail);
    assert.match(refused.detail ?? '', /too many password checks/);
    assert.equal((await service.authenticate(ask(basic('nobody', 'guess')))).status, 429, 'the decoy check waits in the same queue');

    const overHttp = await request(service.app.callback()).get('/v1/hotels').set('Authorization', basic('lee', 'wrong-4'));
    assert.equal(overHttp.status, 429);
    assert.equal(overHttp.headers['retry-after'], '1');
    assert.equal(overHttp.headers['www-authenticate'], 'Basic realm="gatehouse"');
    assert.equal(overHttp.body.code, 429);
    assert.equal(done, 0, 'all refused while the accepted checks were still under way');

    assert.deepEqual(
      (await Promise.all(accepted)).map((d) => d.status),
      [401, 401, 401],
    );
    assert.equal((await service.authenticate(ask(basic('lee', 'right')))).status, 200, 'checked again once there is room');
    assert.equal(service.stats().busy, 3);
    assert.equal(service.stats().verifications, 4);
  });

  it('still lets in a credential it verified before, from the cache, while the queue is full', async function () {
    this.timeout(10_000);
    const service = make({ threads: 1, maxQueued: 0 });
    assert.equal((await service.authenticate(ask(basic('kim', 'right')))).status, 200);
    const wrong = service.authenticate(ask(basic('lee', 'wrong')));
    assert.equal((await service.authenticate(ask(basic('kim', 'wrong')))).status, 429);
    assert.equal((await service.authenticate(ask(basic('kim', 'right')))).status, 200);
    assert.equal((await wrong).status, 401);
  });

  it('stops its bcrypt threads on close: a check under way is given up', async () => {
    const service = make({ threads: 1 });
    const pending = service.authenticate(ask(basic('lee', 'wrong')));
    await service.close();
    await assert.rejects(pending, /closed/);
  });

  it('checks on the calling thread with threads: 0, as before the pool', async () => {
    const service = make({ threads: 0, maxQueued: 0 });
    const decisions = await Promise.all([service.authenticate(ask(basic('kim', 'right'))), service.authenticate(ask(basic('kim', 'wrong')))]);
    assert.deepEqual(
      decisions.map((d) => d.status),
      [200, 401],
    );
  });

  it('refuses a thread count that is not a whole number', () => {
    assert.throws(() => make({ threads: -1 }), RangeError);
  });
});
