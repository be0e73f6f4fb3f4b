import assert from 'node:assert/strict';
import bcrypt from 'bcryptjs';
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { createAuthService, UsersFileError, type AuthService, type AuthRequest } from '../../src/auth';
import { publishAsKubernetes } from '../support/kubernetes-volume';
import { basic, quickHash, usersFolder } from '../support/credentials';
import { memoryLogger } from '../support/memory-logger';
import { threadNiceness } from '../support/threads';

const FIXTURES = join(__dirname, 'fixtures');
const ask = (authorization?: string): AuthRequest => ({
  method: 'GET',
  url: '/v1/hotels',
  headers: authorization === undefined ? {} : { authorization },
});

describe('the auth service (typed face)', () => {
  const folder = usersFolder();
  const services: AuthService[] = [];
  const make = (options: Parameters<typeof createAuthService>[0]) => {
    // However long a check waits for a thread on a busy machine: the wait's own limit is tested with the flood.
    const service = createAuthService({ logger: memoryLogger(), maxWaitMs: 600_000, ...options });
    services.push(service);
    return service;
  };
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.close()));
  });
  after(() => folder.remove());

  it('runs its bcrypt threads at the niceness it is given', async function () {
    if (process.platform !== 'linux') this.skip();
    const before = threadNiceness();
    const service = make({ usersFile: join(FIXTURES, 'apache.htpasswd'), threads: 1, niceness: 3 });
    assert.equal((await service.authenticate(ask(basic('apache-user', 'open sesame')))).status, 200);
    assert.deepEqual(
      [...threadNiceness()].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice),
      [3],
    );
  });

  describe('answering at once', () => {
    it('gives every refusal the detail of its error body, for a caller to write in another representation', async () => {
      const service = make({ usersFile: join(FIXTURES, 'apache.htpasswd') });
      const refusals = [
        service.authenticateNow!(ask()),
        service.authenticateNow!(ask(`Basic ${'A'.repeat(100_000)}`)),
        await service.authenticate(ask('Bearer abc')),
        await service.authenticate(ask('Basic !!!')),
        await service.authenticate(ask(basic('apache-user', 'open sesamE'))),
        await service.authenticate(ask(basic('nobody', 'open sesame'))),
      ];
      for (const decision of refusals) {
        assert.equal(decision?.status, 401);
        assert.ok(decision.detail, 'a detail is given');
        assert.equal(decision.detail, JSON.parse(String(decision.body)).detail);
      }
      assert.equal(refusals[4]?.detail, 'the user name or password is wrong');
      assert.equal((await service.authenticate(ask(basic('apache-user', 'open sesame')))).detail, undefined);
    });

    it('knows a missing or oversized header and a verified credential without waiting, and nothing else', async () => {
      const service = make({ usersFile: join(FIXTURES, 'apache.htpasswd') });
      const good = ask(basic('apache-user', 'open sesame'));
      assert.equal(service.authenticateNow!(ask())?.status, 401);
      assert.equal(service.authenticateNow!(ask(`Basic ${'A'.repeat(100_000)}`))?.status, 401);
      assert.equal(service.authenticateNow!(good), undefined, 'not verified yet: bcrypt has to run');
      assert.equal((await service.authenticate(good)).status, 200);
      assert.equal(service.authenticateNow!(good)?.headers['x-travel-user'], 'apache-user');
      assert.equal(
        service.authenticateNow!(ask(basic('apache-user', 'open sesamE'))),
        undefined,
        'failures are never cached',
      );
    });
  });

  describe('verifying passwords', () => {
    it('lets in a user whose hash Apache htpasswd -B wrote (password "open sesame")', async () => {
      const service = make({ usersFile: join(FIXTURES, 'apache.htpasswd') });
      const decision = await service.authenticate(ask(basic('apache-user', 'open sesame')));
      assert.equal(decision.status, 200);
      assert.equal(decision.headers['x-travel-user'], 'apache-user');
      assert.deepEqual(JSON.parse(String(decision.body)), { user: 'apache-user' });
    });

    it('refuses the Apache user with a wrong password: 401, the challenge and the error body', async () => {
      const service = make({ usersFile: join(FIXTURES, 'apache.htpasswd') });
      const decision = await service.authenticate(ask(basic('apache-user', 'open sesamE')));
      assert.equal(decision.status, 401);
      assert.equal(decision.headers['www-authenticate'], 'Basic realm="gatehouse"');
      assert.equal(decision.headers['x-travel-user'], undefined);
      const body = JSON.parse(String(decision.body));
      assert.equal(body.code, 401);
      assert.equal(body.message, '401: Unauthorized');
    });

    for (const version of ['2a', '2b', '2y'] as const) {
      it(`verifies a $${version}$ bcrypt hash`, async () => {
        const file = folder.write(`bcrypt-${version}.htpasswd`, `carol:${quickHash('s3cret', version)}\n`);
        const service = make({ usersFile: file });
        assert.equal((await service.authenticate(ask(basic('carol', 's3cret')))).status, 200);
        assert.equal((await service.authenticate(ask(basic('carol', 's3creT')))).status, 401);
      });
    }

    it('verifies apr1-MD5 and SHA-1 users written by htpasswd -m and -s, warning about each at load', async () => {
      const logger = memoryLogger();
      const service = make({ usersFile: join(FIXTURES, 'apache-legacy.htpasswd'), logger });
      for (const [user, password] of [
        ['apr1-user', 'apr1 secret'],
        ['sha-user', 'sha secret'],
        ['utf8-user', 'pässwörd'],
      ]) {
        assert.equal((await service.authenticate(ask(basic(user, password)))).status, 200, user);
        assert.equal((await service.authenticate(ask(basic(user, `${password}!`)))).status, 401, user);
      }
      const warnings = logger.lines.filter((l) => l.level === 'warn');
      assert.equal(warnings.length, 4);
      assert.ok(warnings.some((w) => /sha-user/.test(w.msg) && (w.obj as { line: number }).line === 3));
      assert.ok(warnings.some((w) => /apr1-user/.test(w.msg) && (w.obj as { line: number }).line === 2));
    });

    it('refuses an unknown user after a decoy check, so it is not told apart by being quick', async () => {
      const service = make({ usersFile: join(FIXTURES, 'apache.htpasswd') });
      const decision = await service.authenticate(ask(basic('nobody', 'open sesame')));
      assert.equal(decision.status, 401);
      assert.equal(service.stats().verifications, 1);
    });

    it('lets in users with UTF-8 names written by Apache htpasswd, naming them in X-Travel-User as UTF-8 bytes', async () => {
      const service = make({ usersFile: join(FIXTURES, 'apache-utf8.htpasswd') });
      const decision = await service.authenticate(ask(basic('utf8ü', 'grüße')));
      assert.equal(decision.status, 200);
      // A header value is a string of bytes, one character each, as Node and undici write and read them.
      assert.equal(decision.headers['x-travel-user'], 'utf8\u00c3\u00bc');
      assert.deepEqual(JSON.parse(String(decision.body)), { user: 'utf8ü' });
      assert.equal((await service.authenticate(ask(basic('Łukasz', 'open sesame')))).status, 200);
      assert.equal((await service.authenticate(ask(basic('Lukasz', 'open sesame')))).status, 401);
    });

    it('warns at load when users have different bcrypt costs, as timing then tells some of them from unknown names', () => {
      const logger = memoryLogger();
      const file = folder.write(
        'costs.htpasswd',
        [`a:${quickHash('a')}`, `b:${quickHash('b')}`, 'c:' + bcrypt.hashSync('c', 5)].join('\n'),
      );
      make({ usersFile: file, logger });
      const warning = logger.lines.find((l) => l.level === 'warn');
      assert.match(warning?.msg ?? '', /different bcrypt costs.*other than 4/);
      assert.deepEqual(warning?.obj, { usersFile: file, costs: [4, 5], decoyCost: 4 });

      const even = memoryLogger();
      make({ usersFile: join(FIXTURES, 'apache-utf8.htpasswd'), logger: even });
      assert.equal(even.lines.filter((l) => l.level === 'warn').length, 0);
    });

    it('warns at load of a users file that names no user, and refuses everyone', async () => {
      const logger = memoryLogger();
      const file = folder.write('empty.htpasswd', '# nobody yet\n');
      const service = make({ usersFile: file, logger });
      assert.ok(
        logger.lines.some((l) => l.level === 'warn' && /names no user/.test(l.msg)),
        JSON.stringify(logger.lines),
      );
      assert.equal((await service.authenticate(ask())).status, 401);
    });

    it('uses the configured realm, quoted', async () => {
      const service = make({ usersFile: join(FIXTURES, 'apache.htpasswd'), realm: 'travel "ops"' });
      const decision = await service.authenticate(ask());
      assert.equal(decision.headers['www-authenticate'], 'Basic realm="travel \\"ops\\""');
    });
  });

  describe('loading the users file', () => {
    it('refuses to start on a plaintext password, naming the line', () => {
      const file = folder.write('plain.htpasswd', `alice:${quickHash('w')}\n# bob below\nbob:builder\n`);
      assert.throws(
        () => createAuthService({ usersFile: file, logger: memoryLogger() }),
        (err: unknown) =>
          err instanceof UsersFileError &&
          /line 3: user 'bob'.*plaintext/.test(err.message) &&
          !err.message.includes('builder'),
      );
    });

    it('refuses to start on malformed lines, listing them all', () => {
      const file = folder.write('bad.htpasswd', `garbage\nalice:${quickHash('w')}\n:nothing\n`);
      assert.throws(
        () => createAuthService({ usersFile: file, logger: memoryLogger() }),
        (err: unknown) =>
          err instanceof UsersFileError &&
          err.problems.map((p) => p.line).join() === '1,3' &&
          /line 1: .*; line 3: /.test(err.message),
      );
    });

    it('refuses to start without a users file', () => {
      assert.throws(
        () => createAuthService({ usersFile: join(folder.dir, 'absent.htpasswd'), logger: memoryLogger() }),
        (err: unknown) => err instanceof UsersFileError && /cannot be read \(ENOENT\)/.test(err.message),
      );
    });
  });

  describe('caching verified credentials', () => {
    let file: string;
    before(() => {
      file = folder.write('cache.htpasswd', `dave:${quickHash('pw-one')}\n`);
    });

    it('answers a repeated credential from the cache without checking the password again', async () => {
      const service = make({ usersFile: file });
      assert.equal((await service.authenticate(ask(basic('dave', 'pw-one')))).status, 200);
      const second = await service.authenticate(ask(basic('dave', 'pw-one')));
      assert.equal(second.status, 200);
      assert.equal(second.headers['x-travel-user'], 'dave');
      assert.deepEqual(service.stats(), {
        users: 1,
        verifications: 1,
        busy: 0,
        cacheHits: 1,
        cacheEntries: 1,
        threads: 1,
      });
    });

    it('never caches a failure', async () => {
      const service = make({ usersFile: file });
      await service.authenticate(ask(basic('dave', 'wrong')));
      await service.authenticate(ask(basic('dave', 'wrong')));
      await service.authenticate(ask(basic('nobody', 'wrong')));
      await service.authenticate(ask(basic('nobody', 'wrong')));
      assert.deepEqual(service.stats(), {
        users: 1,
        verifications: 4,
        busy: 0,
        cacheHits: 0,
        cacheEntries: 0,
        threads: 1,
      });
    });

    it('checks credentials in steady use again before they expire, answering from the cache meanwhile', async () => {
      let clock = 0;
      const service = make({ usersFile: file, cacheTtlMs: 60_000, now: () => clock });
      const dave = ask(basic('dave', 'pw-one'));
      assert.equal((await service.authenticate(dave)).status, 200);
      clock = 44_999;
      assert.equal(service.authenticateNow!(dave)?.status, 200);
      clock = 45_000;
      // Due for renewal: every request is still answered at once, one check runs behind them.
      for (let i = 0; i < 5; i++) assert.equal(service.authenticateNow!(dave)?.status, 200);
      while (service.stats().verifications < 2) await new Promise((resolve) => setImmediate(resolve));
      clock = 104_999;
      assert.equal(service.authenticateNow!(dave)?.headers['x-travel-user'], 'dave', 'set anew by the renewal');
      assert.equal(service.stats().verifications, 2, 'one check for all the requests that found it due');
      clock = 105_000;
      assert.equal(service.authenticateNow!(dave), undefined, 'unused past its time, it expires as before');
    });

    it('keeps its bcrypt thread between the renewals of a client in steady use, and stops it when told to rest less', async () => {
      // The renewal comes 45 s after a check with these credentials: the thread must outlive that gap, not a second.
      const kept = make({ usersFile: file, cacheTtlMs: 60_000, threads: 1 });
      const told = make({ usersFile: file, cacheTtlMs: 60_000, threads: 1, idleMs: 1 });
      assert.equal((await kept.authenticate(ask(basic('dave', 'pw-one')))).status, 200);
      assert.equal((await told.authenticate(ask(basic('dave', 'pw-one')))).status, 200);
      while (told.stats().threads > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      // Past the second a thread rested before: still there.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      assert.equal(kept.stats().threads, 1);
    });

    it('lets credentials not used in the last quarter of their time expire without checking them', async () => {
      let clock = 0;
      const service = make({ usersFile: file, cacheTtlMs: 60_000, now: () => clock });
      const dave = ask(basic('dave', 'pw-one'));
      await service.authenticate(dave);
      clock = 44_000;
      assert.equal(service.authenticateNow!(dave)?.status, 200);
      clock = 60_000;
      assert.equal(service.authenticateNow!(dave), undefined);
      assert.equal((await service.authenticate(dave)).status, 200);
      assert.equal(service.stats().verifications, 2);
    });

    it('checks the password every time when the cache is turned off', async () => {
      const service = make({ usersFile: file, cacheTtlMs: 0 });
      await service.authenticate(ask(basic('dave', 'pw-one')));
      await service.authenticate(ask(basic('dave', 'pw-one')));
      assert.equal(service.stats().verifications, 2);
      assert.equal(service.stats().cacheHits, 0);
    });

    it('keeps at most cacheMax credentials', async () => {
      const many = folder.write('many.htpasswd', ['u1', 'u2', 'u3'].map((u) => `${u}:${quickHash(u)}`).join('\n'));
      const service = make({ usersFile: many, cacheMax: 2 });
      for (const u of ['u1', 'u2', 'u3']) await service.authenticate(ask(basic(u, u)));
      assert.equal(service.stats().cacheEntries, 2);
      await service.authenticate(ask(basic('u1', 'u1'))); // the oldest went
      assert.equal(service.stats().verifications, 4);
    });

    it('tells apart the users whose requests share one connection, as behind a proxy', async () => {
      const two = folder.write('shared.htpasswd', `dave:${quickHash('pw-one')}\nfay:${quickHash('pw-two')}\n`);
      const service = make({ usersFile: two });
      const connection = {};
      const on = (authorization: string): AuthRequest => ({ ...ask(authorization), connection });
      const users: unknown[] = [];
      for (const [user, password] of [
        ['dave', 'pw-one'],
        ['fay', 'pw-two'],
        ['dave', 'pw-one'],
        ['fay', 'pw-one'],
        ['fay', 'pw-two'],
      ]) {
        const decision = await service.authenticate(on(basic(user, password)));
        users.push(decision.status === 200 ? decision.headers['x-travel-user'] : decision.status);
      }
      assert.deepEqual(users, ['dave', 'fay', 'dave', 401, 'fay']);
      assert.equal(service.authenticateNow!(on(basic('fay', 'pw-one'))), undefined);
    });

    it('refuses on a kept-alive connection a credential a reload took away', async () => {
      const file = folder.write('kept.htpasswd', `erin:${quickHash('old')}\n`);
      const service = make({ usersFile: file });
      const request: AuthRequest = { ...ask(basic('erin', 'old')), connection: {} };
      assert.equal((await service.authenticate(request)).status, 200);
      assert.equal(service.authenticateNow!(request)?.status, 200);
      writeFileSync(file, `erin:${quickHash('new')}\n`);
      await service.reload();
      assert.equal(service.authenticateNow!(request), undefined);
      assert.equal((await service.authenticate(request)).status, 401);
    });

    it('checks a credential once for identical requests arriving together', async () => {
      const service = make({ usersFile: file });
      const decisions = await Promise.all(
        Array.from({ length: 5 }, () => service.authenticate(ask(basic('dave', 'pw-one')))),
      );
      assert.deepEqual(
        decisions.map((d) => d.status),
        [200, 200, 200, 200, 200],
      );
      assert.equal(service.stats().verifications, 1);
    });
  });

  describe('reloading', () => {
    it('empties the cache and makes a changed password take effect', async () => {
      const file = folder.write('reload.htpasswd', `erin:${quickHash('old')}\n`);
      const service = make({ usersFile: file });
      assert.equal((await service.authenticate(ask(basic('erin', 'old')))).status, 200);
      assert.equal(service.stats().cacheEntries, 1);

      writeFileSync(file, `erin:${quickHash('new')}\n`);
      await service.reload();
      assert.equal(service.stats().cacheEntries, 0);
      assert.equal((await service.authenticate(ask(basic('erin', 'old')))).status, 401);
      assert.equal((await service.authenticate(ask(basic('erin', 'new')))).status, 200);
    });

    it('checks again a credential asked for after a reload, rather than share a check begun before it', async () => {
      // Cost 10: the first check (tens of milliseconds of CPU, on a thread that starts first) is still running when the reload (a file read) is done.
      const file = folder.write('race.htpasswd', `erin:${bcrypt.hashSync('old', 10)}\n`);
      const service = make({ usersFile: file });
      const before = service.authenticate(ask(basic('erin', 'old')));
      writeFileSync(file, `erin:${quickHash('new')}\n`);
      await service.reload();
      const after = await service.authenticate(ask(basic('erin', 'old')));
      assert.equal(after.status, 401);
      assert.equal(after.headers['www-authenticate'], 'Basic realm="gatehouse"');
      await before;
    });

    it('refuses a check that ends after a reload changed or removed its user', async () => {
      // Cost 10, as above: both checks are still running when the reload is done.
      const file = folder.write(
        'race-gone.htpasswd',
        `erin:${bcrypt.hashSync('old', 10)}\nkay:${bcrypt.hashSync('same', 10)}\n`,
      );
      const service = make({ usersFile: file });
      const removed = service.authenticate(ask(basic('erin', 'old')));
      const kept = service.authenticate(ask(basic('kay', 'same')));
      // kay's line is written again as it was: the reload must not refuse her.
      writeFileSync(file, `${readFileSync(file, 'utf8').split('\n')[1]}\n`);
      await service.reload();
      assert.equal((await removed).status, 401);
      assert.equal((await kept).status, 200);
      assert.equal((await service.authenticate(ask(basic('erin', 'old')))).status, 401);
    });

    it('keeps the previous users when the new file is invalid, and says which lines are wrong', async () => {
      const logger = memoryLogger();
      const file = folder.write('keep.htpasswd', `fay:${quickHash('kept')}\n`);
      const service = make({ usersFile: file, logger });
      writeFileSync(file, `fay:${quickHash('changed')}\nmallory:plain-secret\n`);
      await assert.rejects(
        service.reload(),
        (err: unknown) => err instanceof UsersFileError && err.problems[0].line === 2,
      );
      assert.equal((await service.authenticate(ask(basic('fay', 'kept')))).status, 200);
      assert.equal((await service.authenticate(ask(basic('fay', 'changed')))).status, 401);
      const refusal = logger.lines.find((l) => l.level === 'error');
      assert.match(JSON.stringify(refusal?.obj), /"line":2/);
      assert.ok(!logger.text().includes('plain-secret'));
    });

    it('keeps the previous users when the file has gone', async () => {
      const own = usersFolder();
      const file = own.write('gone.htpasswd', `gus:${quickHash('here')}\n`);
      const service = make({ usersFile: file });
      own.remove();
      await assert.rejects(service.reload(), UsersFileError);
      assert.equal((await service.authenticate(ask(basic('gus', 'here')))).status, 200);
    });

    it('reloads by itself when watching and the file is replaced', async () => {
      const logger = memoryLogger();
      const loaded = new Promise<void>((resolve) => {
        const info = logger.info;
        let count = 0;
        logger.info = (obj, msg) => {
          info(obj, msg);
          if (msg === 'users loaded' && ++count === 2) resolve();
        };
      });
      const file = folder.write('watched.htpasswd', `hal:${quickHash('before')}\n`);
      const service = make({ usersFile: file, logger, watch: true });
      writeFileSync(file, `hal:${quickHash('after')}\n`);
      await loaded;
      assert.equal((await service.authenticate(ask(basic('hal', 'after')))).status, 200);
      assert.equal((await service.authenticate(ask(basic('hal', 'before')))).status, 401);
    });

    it('reloads by itself when watching a users file of a Kubernetes Secret volume and the Secret is updated', async () => {
      const logger = memoryLogger();
      let loads = 0;
      let onLoad: (() => void) | undefined;
      const info = logger.info;
      logger.info = (obj, msg) => {
        info(obj, msg);
        if (msg === 'users loaded') {
          loads++;
          onLoad?.();
        }
      };
      const dir = join(folder.dir, 'secret');
      publishAsKubernetes(dir, { 'users.htpasswd': `ida:${quickHash('first')}\n` });
      const service = make({ usersFile: join(dir, 'users.htpasswd'), logger, watch: true });
      for (const password of ['second', 'third']) {
        const loaded = new Promise<void>((resolve) => (onLoad = resolve));
        // The kubelet swaps ..data: the event names ..data, never users.htpasswd.
        publishAsKubernetes(dir, { 'users.htpasswd': `ida:${quickHash(password)}\n` });
        await loaded;
        assert.equal((await service.authenticate(ask(basic('ida', password)))).status, 200);
      }
      assert.equal((await service.authenticate(ask(basic('ida', 'first')))).status, 401);
      assert.equal(loads, 3);
    });
  });

  describe('keeping credentials out of logs', () => {
    it('logs neither passwords nor Authorization headers, whatever fails', async () => {
      const logger = memoryLogger();
      const secret = 'tr0ub4dor&3';
      const file = folder.write('logs.htpasswd', `ivy:${quickHash(secret)}\n`);
      const service = make({ usersFile: file, logger });
      const headers = [
        basic('ivy', `${secret}x`),
        basic('ivy', secret),
        basic('nobody', secret),
        basic(secret, secret),
        `Basic ${Buffer.from([0xff, 0x3a, ...Buffer.from(secret)]).toString('base64')}`,
        `Bearer ${secret}`,
        `Basic ${'QUFB'.repeat(2000)}`,
      ];
      for (const h of headers) await service.authenticate(ask(h));
      writeFileSync(file, `ivy:${secret}\n`);
      await assert.rejects(service.reload());

      const text = logger.text();
      assert.ok(logger.lines.length >= 2, 'something was logged');
      assert.ok(!text.includes(secret), 'the password is not logged');
      for (const h of headers) {
        assert.ok(!text.includes(h.slice(6, 40)), 'no Authorization header is logged');
      }
    });
  });
});
