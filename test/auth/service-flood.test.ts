import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import bcrypt from 'bcryptjs';
import request from 'supertest';
import { createAuthService, type AuthRequest, type AuthService } from '../../src/auth';
import { basic, usersFolder } from '../support/credentials';
import { memoryLogger } from '../support/memory-logger';

const ask = (authorization: string): AuthRequest => ({ method: 'GET', url: '/v1/hotels', headers: { authorization } });

/**
 * How long the event loop was busy, in ms, while `work` ran: the time it
 * spent running JavaScript rather than waiting. Both sides of a comparison
 * are measured alike, so a machine busy with other work slows both.
 */
async function loopBusyMs(work: () => Promise<unknown>): Promise<number> {
  const before = performance.eventLoopUtilization();
  await work();
  return performance.eventLoopUtilization(before).active;
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
    const service = createAuthService({ usersFile: file, logger: memoryLogger(), ...options });
    services.push(service);
    return service;
  };
  let file: string;

  before(() => {
    // Costs as in real files, so that a check takes long enough to measure: kim's about 60 ms, lee's four times that.
    file = folder.write('flood.htpasswd', `kim:${bcrypt.hashSync('right', 10)}\nlee:${bcrypt.hashSync('right', 12)}\n`);
  });
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.close()));
  });
  after(() => folder.remove());

  it('keeps the event loop free while many wrong passwords are being checked', async function () {
    // Every check waits its turn here, however slow the machine: the queue's limits are tested below.
    const threaded = make({ maxWaitMs: 600_000 });
    const inline = make({ threads: 0 });
    const wrong = (service: AuthService, count: number) =>
      arriving(count, (i) => service.authenticate(ask(basic('kim', `wrong-${i}`))));
    // What the loop pays for one check made on it, measured now, beside whatever else the machine runs.
    const perInlineCheck = (await loopBusyMs(() => wrong(inline, 4))) / 4;
    let decisions: { status: number }[] = [];
    const perThreadedCheck =
      (await loopBusyMs(async () => {
        decisions = await wrong(threaded, 16);
      })) / 16;
    assert.deepEqual(
      decisions.map((d) => d.status),
      Array(16).fill(401),
    );
    assert.ok(
      perThreadedCheck < perInlineCheck / 4,
      `the event loop was busy ${perThreadedCheck.toFixed(1)} ms a check on the threads, ${perInlineCheck.toFixed(1)} ms a check made on it`,
    );
  });

  it('answers 429 at once, with Retry-After and the challenge, when maxQueued checks are already waiting', async function () {
    // However long the checks take on this machine: none waits past maxWaitMs here, whose own test is the pool's.
    const service = make({ threads: 1, maxQueued: 2, maxWaitMs: 600_000 });
    let done = 0;
    // One check runs on the thread, two wait.
    const accepted = [0, 1, 2].map((i) => service.authenticate(ask(basic('kim', `wrong-${i}`))).finally(() => done++));

    // Refused without waiting for anything but promises: no answer of the thread can come in between.
    const refused = await service.authenticate(ask(basic('kim', 'wrong-3')));
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers['www-authenticate'], 'Basic realm="gatehouse"');
    const body = JSON.parse(String(refused.body));
    assert.deepEqual([body.code, body.message], [429, '429: Too Many Requests']);
    assert.equal(body.detail, refused.detail);
    assert.match(refused.detail ?? '', /too many password checks/);
    assert.equal(
      (await service.authenticate(ask(basic('nobody', 'guess')))).status,
      429,
      'the decoy check waits in the same queue',
    );
    assert.equal(done, 0, 'all refused while the accepted checks were still under way');

    assert.deepEqual(
      (await Promise.all(accepted)).map((d) => d.status),
      [401, 401, 401],
    );
    assert.equal(
      (await service.authenticate(ask(basic('kim', 'right')))).status,
      200,
      'checked again once there is room',
    );
    assert.equal(service.stats().busy, 2);
    assert.equal(service.stats().verifications, 4);
  });

  it('answers 429 over HTTP too while its thread is busy', async () => {
    // A check at the highest cost the file may hold: it outlasts any request on any machine, and is stopped by close().
    const heavy = bcrypt.hashSync('right', 4).replace(/^\$2b\$04\$/, '$2b$20$');
    const service = createAuthService({
      usersFile: folder.write('heavy.htpasswd', `max:${heavy}\n`),
      logger: memoryLogger(),
      threads: 1,
      maxQueued: 0,
    });
    services.push(service);
    const holding = service.authenticate(ask(basic('max', 'wrong')));
    const overHttp = await request(service.app.callback())
      .get('/v1/hotels')
      .set('Authorization', basic('max', 'wrong-2'));
    assert.equal(overHttp.status, 429);
    assert.equal(overHttp.headers['retry-after'], '1');
    assert.equal(overHttp.headers['www-authenticate'], 'Basic realm="gatehouse"');
    assert.equal(overHttp.body.code, 429);
    await service.close();
    await assert.rejects(holding, /closed/);
  });

  it('still lets in a credential it verified before, from the cache, while the queue is full', async function () {
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
    const decisions = await Promise.all([
      service.authenticate(ask(basic('kim', 'right'))),
      service.authenticate(ask(basic('kim', 'wrong'))),
    ]);
    assert.deepEqual(
      decisions.map((d) => d.status),
      [200, 401],
    );
  });

  it('refuses a thread count that is not a whole number', () => {
    assert.throws(() => make({ threads: -1 }), RangeError);
  });
});
