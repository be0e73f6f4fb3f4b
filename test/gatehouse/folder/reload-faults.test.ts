import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import Koa from 'koa';
import request from 'supertest';
import { fileSystemSource, type ConfigFileSource } from '../../../src/files';
import type { GatehouseModule } from '../../../src/gateway';
import { aliasBomb, padded } from '../../support/hostile-yaml';
import { ALICE } from '../../support/credentials';
import { copyConfig, type TempConfig } from '../../support/config-folder';
import { startGatehouse, type Running } from '../../support/gatehouse';

const EXTRA =
  'apiVersion: gateway/v1\nkind: Mapping\nname: extra\nprefix: /extra/\nservice: api\nrewrite: /v1/\nbypass_auth: true\n';
const WEATHER =
  'apiVersion: gateway/v1\nkind: Mapping\nname: weather\nprefix: /weather/\nservice: weather\nbypass_auth: true\n';

/** A fault of the file source: which call, on which name (a base name, or the folder's own `.`), and how it fails. */
interface Fault {
  op: 'list' | 'read';
  at: string;
  /** Rejects with `value`, throws it at once, or resolves with it in place of text. */
  how: 'reject' | 'throw' | 'resolve';
  value: unknown;
}

/** The file system, failing as `fault` says while it is set. */
function faultySource(dir: string): { source: ConfigFileSource; fault: Fault | undefined } {
  const state: { source: ConfigFileSource; fault: Fault | undefined } = { fault: undefined, source: undefined! };
  const hit = (op: Fault['op'], path: string) => {
    const f = state.fault;
    return f && f.op === op && (f.at === '.' ? path === dir : basename(path) === f.at && dirname(path).startsWith(dir))
      ? f
      : undefined;
  };
  const fail = <T>(f: Fault): Promise<T> => {
    if (f.how === 'throw') throw f.value;
    return f.how === 'reject' ? Promise.reject(f.value) : Promise.resolve(f.value as T);
  };
  state.source = {
    list: (path) => {
      const f = hit('list', path);
      return f ? fail(f) : fileSystemSource.list(path);
    },
    read: (path, limit) => {
      const f = hit('read', path);
      return f ? fail(f) : fileSystemSource.read(path, limit);
    },
  };
  return state;
}

const errno = (code: string) => Object.assign(new Error(`${code}: the disk said no`), { code });

describe('gatehouse config reload under faults', function () {
  let config: TempConfig;
  let running: Running;
  let faults: ReturnType<typeof faultySource>;
  /** The weather module of the embedding app, and what it does on the next reload or routing. */
  const weather = { failReload: undefined as (() => Promise<void>) | undefined, appGone: false };
  const weatherApp = new Koa().use((ctx) => {
    ctx.body = { sky: 'clear' };
  });
  const weatherModule: GatehouseModule = {
    name: 'weather',
    get app() {
      if (weather.appGone) throw new Error('the weather app is gone');
      return weatherApp;
    },
    reload: () => weather.failReload?.() ?? Promise.resolve(),
  };

  beforeEach(async () => {
    config = copyConfig();
    config.write('weather.yaml', WEATHER);
    mkdirSync(join(config.dir, 'ratelimit'));
    faults = faultySource(config.dir);
    weather.failReload = undefined;
    weather.appGone = false;
    running = await startGatehouse({ configDir: config.dir, modules: [weatherModule], configSource: faults.source });
  });

  afterEach(async () => {
    await running?.stop();
    config?.remove();
  });

  const status = async (path: string, auth?: string) =>
    (
      await request(running.url)
        .get(path)
        .set(auth ? { Authorization: auth } : {})
    ).status;
  const diagErrors = async (): Promise<string[]> =>
    (await request(running.url).get('/gateway/v0/diag/?json=true').set('Authorization', ALICE).expect(200)).body.config
      .errors;
  const failures = async () => {
    const text = (await request(running.url).get('/gateway/v0/metrics').expect(200)).text;
    return Number(/^gatehouse_config_reloads_total\{result="failure"\} (\d+)/m.exec(text)?.[1] ?? 0);
  };

  /**
   * Reloads with `EXTRA` added and the fault in place: the reload is refused
   * naming what `expected` matches, in its outcome, the log, diag and the
   * metric; the last good config keeps serving, the new Mapping is not
   * applied. Put right, the next reload applies it.
   */
  async function refusedThenRecovered(
    breakIt: () => void,
    expected: RegExp,
    putRight: () => void = () => (faults.fault = undefined),
  ): Promise<void> {
    const before = await failures();
    config.write('extra.yaml', EXTRA);
    breakIt();
    const outcome = await running.gatehouse.reload();
    assert.equal(outcome.ok, false);
    const problems = outcome.ok ? [] : outcome.problems;
    assert.ok(
      problems.some((p) => expected.test(p)),
      problems.join('\n'),
    );
    const logged = running.log.lines
      .filter((l) => l.msg === 'config reload refused; the previous config keeps serving')
      .at(-1);
    assert.deepEqual(logged?.problems, problems);
    assert.deepEqual(await diagErrors(), problems);
    assert.equal(await failures(), before + 1);
    assert.equal(await status('/v1/messages/1'), 200);
    assert.equal(await status('/v1/hotels', ALICE), 200);
    assert.equal(await status('/weather/'), 200);
    assert.equal(await status('/extra/messages/1'), 404, 'nothing of the refused folder is applied');

    putRight();
    assert.deepEqual(await running.gatehouse.reload(), { ok: true });
    assert.equal(await status('/extra/messages/1'), 200);
    assert.deepEqual(await diagErrors(), []);
  }

  const sourceFaults: [string, Fault, RegExp][] = [
    [
      'listing the config folder',
      { op: 'list', at: '.', how: 'reject', value: errno('EIO') },
      /: cannot read the config folder: EIO: the disk said no$/,
    ],
    [
      'listing ratelimit/',
      { op: 'list', at: 'ratelimit', how: 'throw', value: errno('EIO') },
      /ratelimit: cannot be read \(EIO\)$/,
    ],
    [
      'reading a records file, rejecting with undefined',
      { op: 'read', at: 'services.yaml', how: 'reject', value: undefined },
      /services\.yaml: cannot be read \(undefined\)$/,
    ],
    // What a source gives goes on to be parsed: a value that is no text faults the parse, which refuses that file.
    [
      'parsing a records file that is no text',
      { op: 'read', at: 'services.yaml', how: 'resolve', value: 42 },
      /services\.yaml: cannot be read as records: source is not a string$/,
    ],
    [
      'reading the limits, throwing at once',
      { op: 'read', at: 'ratelimit.yaml', how: 'throw', value: new Error('the disk is gone') },
      /ratelimit\.yaml: cannot be read \(the disk is gone\)$/,
    ],
    [
      'reading the users file',
      { op: 'read', at: 'users.htpasswd', how: 'reject', value: errno('EACCES') },
      /users\.htpasswd: cannot be read \(EACCES\)$/,
    ],
    [
      'reading the booking data, rejecting with a string',
      { op: 'read', at: 'bookings.yaml', how: 'reject', value: 'no such luck' },
      /bookings\.yaml: cannot be read \(no such luck\)$/,
    ],
  ];
  for (const [step, fault, expected] of sourceFaults) {
    it(`refuses a reload whose step of ${step} fails, naming it`, () =>
      refusedThenRecovered(() => (faults.fault = fault), expected));
  }

  it('refuses a records file that uses more than 100 aliases (an alias bomb), parsed on the event loop', async () => {
    await refusedThenRecovered(
      () => config.write('bomb.yaml', aliasBomb()),
      /bomb\.yaml: YAML: uses aliases more than 100 times: refused/,
      () => config.unlink('bomb.yaml'),
    );
  });

  it('refuses an alias bomb large enough to be parsed on a worker thread, naming the file', async () => {
    await refusedThenRecovered(
      () => config.write('bomb.yaml', padded(aliasBomb(), 64 * 1024)),
      /bomb\.yaml: YAML: uses aliases more than 100 times: refused/,
      () => config.unlink('bomb.yaml'),
    );
  });

  it('refuses booking data that uses more than 100 aliases', async () => {
    const bookings = config.read('bookings.yaml');
    await refusedThenRecovered(
      () => config.write('bookings.yaml', `${bookings}\n${aliasBomb('extra_key')}`),
      /bookings\.yaml: uses aliases more than 100 times: refused/,
      () => config.write('bookings.yaml', bookings),
    );
  });

  it('refuses limits whose aliases expand without bound', async () => {
    const limits = config.read('ratelimit.yaml');
    const laughs = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 6 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(', ')}]`,
      ),
    ];
    await refusedThenRecovered(
      () => config.write('ratelimit/laughs.yaml', `${laughs.join('\n')}\ndomain: laughs\n`),
      /ratelimit\/laughs\.yaml: the aliases expand the document by more than 100000 values/,
      () => config.unlink('ratelimit/laughs.yaml'),
    );
    assert.equal(config.read('ratelimit.yaml'), limits);
  });

  it('refuses a reload whose route table cannot be built, naming the records files, and keeps the routes built before', async () => {
    await refusedThenRecovered(
      () => (weather.appGone = true),
      /services\.yaml.*weather\.yaml: the routes cannot be built: the weather app is gone$/,
      () => (weather.appGone = false),
    );
  });

  for (const [how, fail] of [
    [
      'throws at once',
      () => {
        throw new Error('the forecast is unreadable');
      },
    ],
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the case under test: a module that rejects with nothing
    ['rejects with undefined', () => Promise.reject(undefined)],
  ] as const) {
    it(`refuses a reload when a module of the embedding app ${how} as it reloads, and switches no records`, async () => {
      await refusedThenRecovered(
        () => (weather.failReload = fail as () => Promise<void>),
        how === 'throws at once' ? /^module weather: the forecast is unreadable$/ : /^module weather: undefined$/,
        () => (weather.failReload = undefined),
      );
    });
  }

  it('calls off a reload under way when it stops: the reload is refused and switches nothing', async () => {
    let release!: (text: string) => void;
    const text = config.read('services.yaml');
    // The reload waits on its read of services.yaml until the stop has called it off.
    faults.fault = {
      op: 'read',
      at: 'services.yaml',
      how: 'resolve',
      value: new Promise<string>((resolve) => (release = resolve)),
    };
    config.write('extra.yaml', EXTRA);
    const outcome = running.gatehouse.reload();
    const stopped = running.stop();
    await running.log.waitForLines(1, (l) => l.msg === 'stopping: the reload under way is called off');
    release(text);
    assert.deepEqual(await outcome, { ok: false, problems: [`${config.dir}: not reloaded: the gateway is stopping`] });
    await stopped;
    assert.equal(
      running.gatehouse.gateway.snapshot().routes.some((r) => r.name === 'extra'),
      false,
    );
  });

  it('refuses a file larger than fileSizeLimit, naming it and the limit', async () => {
    await running.stop();
    running = await startGatehouse({ configDir: config.dir, modules: [weatherModule], fileSizeLimit: 16 * 1024 });
    await refusedThenRecovered(
      () => config.write('big.yaml', padded(EXTRA.replace(/extra/g, 'big'), 20 * 1024)),
      /big\.yaml: is larger than the file size limit of 16 KiB \(20\.\d+ KiB\): refused; raise fileSizeLimit/,
      () => config.unlink('big.yaml'),
    );
  });

  it('serves on when a file of the folder is a FIFO: refused by name, without waiting for a writer', async () => {
    const { execFileSync } = await import('node:child_process');
    await refusedThenRecovered(
      () => execFileSync('mkfifo', [join(config.dir, 'pipe.yaml')]),
      /pipe\.yaml: is not a regular file \(a FIFO, a device or a socket\): refused$/,
      () => config.unlink('pipe.yaml'),
    );
  });

  it('refuses to start from a folder with an alias bomb, naming the file', async () => {
    writeFileSync(join(config.dir, 'bomb.yaml'), aliasBomb());
    await assert.rejects(startGatehouse({ configDir: config.dir, modules: [weatherModule] }), (err: Error) => {
      assert.equal(err.name, 'ConfigError');
      assert.match(err.message, /bomb\.yaml: YAML: uses aliases more than 100 times/);
      return true;
    });
  });
});
