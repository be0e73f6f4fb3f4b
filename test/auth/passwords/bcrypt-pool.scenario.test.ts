import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { BcryptPoolBusyError, createBcryptPool, type BcryptPool } from '../../../src/auth';
import { assertBuilt, REPO_ROOT } from '../../support/process';
import { threadNiceness } from '../../support/threads';
import { NO_BOUND_MS } from '../../support/polling';

const APACHE_HASH = readFileSync(join(__dirname, '..', 'fixtures', 'apache.htpasswd'), 'utf8').match(
  /^apache-user:(\S+)$/m,
)![1];

/** A thread that dies on the password 'die', and otherwise says it matches. */
const FRAGILE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (job) => {
  if (job.password === 'die') process.exit(3);
  parentPort.postMessage({ ok: true });
});
`;

/** A thread that takes 300 ms over each check, and says it matches. */
const SLOW = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', () => setTimeout(() => parentPort.postMessage({ ok: true }), 300));
`;

/** A thread that never answers, as one busy with a hash of a cost that takes minutes. */
const STUCK = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', () => undefined);
`;

describe('the bcrypt thread pool', () => {
  const pools: BcryptPool[] = [];
  /**
   * A pool whose checks wait for a thread, and whose threads rest, as long as
   * the test lets them unless it sets maxWaitMs or idleMs: a loaded machine
   * can start a thread or finish a check past their defaults (1 s), and a
   * check refused busy, or a thread stopped, is not what most tests check.
   */
  const make = (options: Parameters<typeof createBcryptPool>[0] = {}, script?: string) => {
    const pool = createBcryptPool({ maxWaitMs: NO_BOUND_MS, idleMs: NO_BOUND_MS, ...options }, script);
    pools.push(pool);
    return pool;
  };
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()));
  });

  it('runs its threads at a lower priority than the event loop, on Linux', async function () {
    if (process.platform !== 'linux') this.skip();
    const before = threadNiceness();
    const pool = make({ threads: 1 });
    assert.equal(await pool.compare('open sesame', APACHE_HASH), true);
    const started = [...threadNiceness()].filter(([tid]) => !before.has(tid));
    assert.deepEqual(
      started.map(([, nice]) => nice),
      [10],
      'one thread started, at nice 10',
    );
    assert.equal(threadNiceness().get(String(process.pid)), 0, 'the event loop keeps its priority');
  });

  it("leaves its threads at the event loop's priority with a niceness of 0, and refuses one past 19", async () => {
    const before = threadNiceness();
    const pool = make({ threads: 1, niceness: 0 });
    await pool.compare('open sesame', APACHE_HASH);
    assert.deepEqual(
      [...threadNiceness()].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice),
      [0],
    );
    assert.throws(() => createBcryptPool({ niceness: 20 }), /niceness must be from 0 to 19/);
  });

  it('checks the hash Apache htpasswd -B wrote ($2y$), right and wrong', async () => {
    const pool = make({ threads: 1 });
    assert.equal(await pool.compare('open sesame', APACHE_HASH), true);
    assert.equal(await pool.compare('open sesamE', APACHE_HASH), false);
  });

  for (const version of ['2a', '2b'] as const) {
    it(`checks $${version}$ hashes, right and wrong`, async () => {
      const hash = bcrypt.hashSync('s3cret', 4).replace(/^\$2b\$/, `$${version}$`);
      const pool = make({ threads: 2 });
      assert.deepEqual(await Promise.all([pool.compare('s3cret', hash), pool.compare('s3creT', hash)]), [true, false]);
    });
  }

  it('starts no thread before the first check, and no more than it is allowed', async () => {
    const hash = bcrypt.hashSync('x', 4);
    const pool = make({ threads: 2 });
    assert.equal(pool.threads, 0);
    const checks = Array.from({ length: 5 }, () => pool.compare('x', hash));
    assert.equal(pool.threads, 2);
    assert.equal(pool.queued, 3);
    assert.deepEqual(await Promise.all(checks), [true, true, true, true, true]);
    assert.equal(pool.threads, 2);
    assert.equal(pool.queued, 0);
  });

  it('stops a thread that rested idleMs with no check, and starts one again for the next check', async () => {
    const hash = bcrypt.hashSync('x', 4);
    const pool = make({ threads: 1, idleMs: 20 });
    assert.equal(await pool.compare('x', hash), true);
    assert.equal(pool.threads, 1);
    // Its exit is an event to wait for, not a time: the loop ends once the thread has gone.
    while (pool.threads > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(await pool.compare('x', hash), true);
    assert.equal(await pool.compare('y', hash), false);
    assert.equal(pool.threads, 1);
  });

  it('keeps a thread that is given checks more often than idleMs, and every thread with idleMs: 0', async () => {
    const hash = bcrypt.hashSync('x', 4);
    const busy = make({ threads: 1, idleMs: 60_000 });
    const kept = make({ threads: 1, idleMs: 0 });
    for (const pool of [busy, kept]) {
      assert.equal(await pool.compare('x', hash), true);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(pool.threads, 1);
      assert.equal(await pool.compare('x', hash), true);
      assert.equal(pool.threads, 1);
    }
  });

  it('refuses a check at once when maxQueued are already waiting', async () => {
    const hash = bcrypt.hashSync('x', 8);
    // However long the checks take on this machine: none waits past maxWaitMs here.
    const pool = make({ threads: 1, maxQueued: 2, maxWaitMs: 600_000 });
    const accepted = [pool.compare('x', hash), pool.compare('y', hash), pool.compare('z', hash)];
    await assert.rejects(pool.compare('w', hash), BcryptPoolBusyError);
    assert.deepEqual(await Promise.all(accepted), [true, false, false]);
    assert.equal(await pool.compare('x', hash), true, 'room again once the queue has drained');
  });

  it('refuses a check that waited longer than maxWaitMs for a thread, instead of running it late', async () => {
    const pool = make({ threads: 1, maxWaitMs: 100 }, SLOW);
    const running = pool.compare('a', 'h');
    const waiting = pool.compare('b', 'h');
    await assert.rejects(
      waiting,
      (err: Error) => err instanceof BcryptPoolBusyError && /waited more than 100 ms/.test(err.message),
    );
    assert.equal(await running, true);
    assert.equal(pool.queued, 0);
    assert.equal(await pool.compare('c', 'h'), true, 'a check that finds a free thread runs');
  });

  it('refuses a waiting check once it has waited maxWaitMs, while the thread ahead of it is still busy', async () => {
    const pool = make({ threads: 1, maxWaitMs: 100 }, STUCK);
    const running = pool.compare('a', 'h');
    running.catch(() => undefined);
    const waiting = [pool.compare('b', 'h'), pool.compare('c', 'h')];
    for (const check of waiting) {
      await assert.rejects(
        check,
        (err: Error) => err instanceof BcryptPoolBusyError && /waited more than 100 ms/.test(err.message),
      );
    }
    assert.equal(pool.queued, 0);
    await pool.close();
    await assert.rejects(running, /closed|stopped/);
  });

  it('rejects the check of a thread that dies, and goes on with another thread', async () => {
    const pool = make({ threads: 1 }, FRAGILE);
    const before = pool.compare('first', 'h');
    const dying = pool.compare('die', 'h');
    const after = pool.compare('after', 'h');
    assert.equal(await before, true);
    await assert.rejects(dying, /bcrypt thread stopped \(exit code 3\)/);
    assert.equal(await after, true);
    assert.equal(pool.threads, 1);
  });

  it('stops its threads on close, rejecting the checks under way and any after', async () => {
    const hash = bcrypt.hashSync('x', 10);
    const pool = make({ threads: 1 });
    const running = assert.rejects(pool.compare('x', hash), /closed/);
    const waiting = assert.rejects(pool.compare('x', hash), /closed/);
    assert.equal(pool.threads, 1);
    await pool.close();
    assert.equal(pool.threads, 0);
    await Promise.all([running, waiting]);
    await assert.rejects(pool.compare('x', hash), /closed/);
  });

  it('never keeps a process alive: one that forgets to close it still ends', async function () {
    assertBuilt();
    // The compiled module, as an application runs it: no TypeScript loader to start.
    const script = `
      const { createBcryptPool } = require(${JSON.stringify(join(REPO_ROOT, 'dist', 'auth', 'passwords', 'bcrypt-pool.js'))});
      const pool = createBcryptPool({ threads: 2 });
      pool.compare('x', ${JSON.stringify(bcrypt.hashSync('x', 4))}).then((ok) => console.log('matched', ok));
    `;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      // One kept alive holds the test past its timeout.
      const [code] = await once(child, 'close');
      assert.equal(code, 0);
      assert.equal(output.trim(), 'matched true', 'the running check kept it alive until its answer');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('checks on the calling thread with threads: 0', async () => {
    const hash = bcrypt.hashSync('x', 4);
    const pool = make({ threads: 0 });
    assert.equal(await pool.compare('x', hash), true);
    assert.equal(pool.threads, 0);
  });

  it('refuses a thread count, queue bound or idle time that is not a whole number', () => {
    assert.throws(() => createBcryptPool({ threads: -1 }), RangeError);
    assert.throws(() => createBcryptPool({ threads: 1.5 }), RangeError);
    assert.throws(() => createBcryptPool({ maxQueued: Number.NaN }), RangeError);
    assert.throws(() => createBcryptPool({ idleMs: -1 }), RangeError);
  });
});
