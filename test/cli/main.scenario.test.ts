import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { npmScript } from '../support/npm-script';
import { once } from 'node:events';
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import { aliasBomb } from '../support/hostile-yaml';
import { eventually } from '../support/polling';
import {
  acceptsConnections,
  installWithoutProtos,
  killAll,
  REPO_ROOT,
  runCli,
  spawnedCli,
  startCli,
  type CliResult,
} from '../support/process';
import { freshDataDir } from '../support/pglite';

/** What a failing command must never print: a stack trace. */
function assertNoStack(result: CliResult): void {
  assert.doesNotMatch(result.stderr, /^\s+at /m, result.stderr);
  assert.doesNotMatch(result.stdout, /^\s+at /m, result.stdout);
}

describe('gatehouse command', function () {
  // Two minutes: a start opens its bookings database before it listens, and a loaded machine is slow at it.

  after(killAll);

  describe('help and usage', () => {
    // The commands are independent: run them side by side, then look at each.
    const runs = new Map<string, Promise<CliResult>>();
    const result = (args: string) => {
      if (!runs.has(args)) runs.set(args, runCli(args === '' ? [] : args.split(' ')));
      return runs.get(args)!;
    };
    before(async () => {
      await Promise.all(
        [
          '--help',
          '',
          '--version',
          'start --help',
          'check --help',
          'serve --help',
          'frobnicate',
          'start --port eighty',
          'start --port -1',
          'start --verbose',
          'check a b',
        ].map(result),
      );
    });

    it('prints the commands with --help and exits 0', async () => {
      const res = await result('--help');
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /^Usage: gatehouse <command>/);
      for (const command of ['start', 'check', 'serve']) assert.match(res.stdout, new RegExp(`^  ${command} `, 'm'));
      assert.equal(res.stderr, '');
    });

    it('prints the version of the package with --version and exits 0', async () => {
      const res = await result('--version');
      assert.equal(res.code, 0, res.stderr);
      assert.equal(
        res.stdout,
        `${(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version}\n`,
      );
    });

    it('refuses no command at all with exit 2, and the usage on stderr', async () => {
      const res = await result('');
      assert.equal(res.code, 2);
      assert.equal(res.stdout, '');
      assert.equal(res.stderr, `gatehouse: no command given\n\n${(await result('--help')).stdout}`);
    });

    it('prints the options of start, with the environment variables they default to', async () => {
      const res = await result('start --help');
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /^Usage: gatehouse start/);
      for (const text of [
        '--config',
        'GATEHOUSE_CONFIG',
        '--port',
        'PORT',
        '--grpc-port',
        'GRPC_PORT',
        '--redis',
        'REDIS_URL',
        '--no-watch',
        'LOG_LEVEL',
        'Exit status',
      ]) {
        assert.ok(res.stdout.includes(text), `start --help mentions ${text}`);
      }
    });

    it('prints what check validates', async () => {
      const res = await result('check --help');
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /^Usage: gatehouse check \[dir \| --config <dir>\]/);
      assert.match(res.stdout, /route\s+table in match order/);
    });

    it('prints the modules serve can run', async () => {
      const res = await result('serve --help');
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /^Usage: gatehouse serve <module>/);
      assert.match(res.stdout, /api, auth, hotel-booking, car-booking, ratelimit/);
      assert.match(res.stdout, /LOG_LEVEL/);
    });

    it('answers help, the version and a mistake on the command line without loading the gateway and its libraries', async () => {
      // In a process of its own, as the command runs: what each answer had loaded by then.
      const script = `
        const { main } = require(${JSON.stringify(join(REPO_ROOT, 'dist', 'cli', 'main.js'))});
        const loaded = {};
        const write = process.stdout.write.bind(process.stdout);
        process.stdout.write = process.stderr.write = () => true;
        (async () => {
          const mistakes = [['start', '--port', 'x'], ['start', '--file-size-limit', 'lots'], ['start', '--drain-delay-ms', 'soon'], ['serve', 'nope'], ['serve', 'auth', '--max-descriptor-entries', '9'], ['check', 'a', 'b'], ['check', '--file-size-limit', '0']];
          for (const args of [['--help'], ['--version'], ...mistakes]) {
            await main(args);
            loaded[args.join(' ')] = Object.keys(require.cache).filter((f) => /node_modules[\\/](@grpc|koa|undici|ioredis|pino)[\\/]/.test(f)).length;
          }
          write(JSON.stringify(loaded) + '\\n');
        })();`;
      const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      await once(child, 'close');
      assert.deepEqual(JSON.parse(out), {
        '--help': 0,
        '--version': 0,
        'start --port x': 0,
        'start --file-size-limit lots': 0,
        'start --drain-delay-ms soon': 0,
        'serve nope': 0,
        'serve auth --max-descriptor-entries 9': 0,
        'check a b': 0,
        'check --file-size-limit 0': 0,
      });
    });

    it('refuses an unknown command with exit 2 and a pointer to the usage', async () => {
      const res = await result('frobnicate');
      assert.equal(res.code, 2);
      assert.equal(res.stdout, '');
      assert.match(res.stderr, /^gatehouse: unknown command 'frobnicate'\nRun 'gatehouse --help' for usage\.\n$/);
    });

    it('refuses a malformed port, an unknown option and extra arguments with exit 2', async () => {
      const port = await result('start --port eighty');
      assert.equal(port.code, 2);
      assert.equal(
        port.stderr,
        `gatehouse: --port: must be an integer from 0 to 65535 (got "eighty")\nRun 'gatehouse start --help' for usage.\n`,
      );
      // Node's parseArgs would call `--port -1` ambiguous: the value is read, and refused in the words of the option.
      const negative = await result('start --port -1');
      assert.equal(negative.code, 2);
      assert.match(negative.stderr, /^gatehouse: --port: must be an integer from 0 to 65535 \(got "-1"\)\n/);
      const option = await result('start --verbose');
      assert.equal(option.code, 2);
      assert.match(option.stderr, /^gatehouse: start has no option --verbose\n/);
      const extra = await result('check a b');
      assert.equal(extra.code, 2);
      assert.match(extra.stderr, /check takes one folder/);
      for (const res of [port, option, extra]) assertNoStack(res);
    });

    it('refuses an option given an empty value with exit 2, instead of the current folder, every interface or plain HTTP', async () => {
      // `--config "$DIR"` with DIR unset: the empty value would fall back to a default nobody chose.
      const cases: [string[], string][] = [
        [['start', '--config=', '--port', '0'], '--config: must be the name of a folder \\(got ""\\)'],
        [['start', '--host', '', '--port', '0'], '--host: must be a host name or IP address \\(got ""\\)'],
        [['start', '--tls-cert=', '--tls-key=', '--port', '0'], '--tls-cert: must be the name of a file \\(got ""\\)'],
        [['start', '--redis', ' ', '--port', '0'], '--redis: must be a redis:// '],
        [['start', '--redis', '', '--port', '0'], '--redis: must be a redis:// '],
        [['start', '--port='], '--port: must be an integer from 0 to 65535 \\(got ""\\)'],
        [['serve', 'api', '--host=', '--port', '0'], '--host: must be '],
        [['serve', 'hotel-booking', '--config', '', '--port', '0'], '--config: must be '],
        [['check', ''], 'check needs a folder name'],
      ];
      const env = { GRPC_PORT: '0', LOG_LEVEL: 'silent' };
      const results = await Promise.all(cases.map(([args]) => runCli(args, { env })));
      results.forEach((res, i) => {
        const [args, named] = cases[i];
        assert.equal(res.code, 2, `${args.join(' ')}: ${res.stdout}${res.stderr}`);
        assert.match(res.stderr, new RegExp(`^gatehouse: ${named}`), args.join(' '));
        assertNoStack(res);
      });
    });

    it("points a mistake in a command's options to that command's help, where the options are", async () => {
      assert.match((await result('start --port eighty')).stderr, /\nRun 'gatehouse start --help' for usage\.\n$/);
      assert.match((await result('start --verbose')).stderr, /\nRun 'gatehouse start --help' for usage\.\n$/);
      assert.match((await result('check a b')).stderr, /\nRun 'gatehouse check --help' for usage\.\n$/);
    });
  });

  it('stops a module run with npm run gatehouse -- serve when SIGTERM reaches npm alone', async () => {
    // SIGTERM to npm's own pid alone, as a supervisor sends it.
    const { port, output, signalNpm, exited, cleanup } = await npmScript(
      ['run', 'gatehouse', '--', 'serve', 'api', '--port', '0'],
      {},
    );
    try {
      assert.equal(await acceptsConnections(port), true);
      signalNpm('SIGTERM');
      await exited();
      assert.equal(await acceptsConnections(port), false, output());
    } finally {
      cleanup();
    }
  });

  describe('start', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-start-'));
      cpSync(join(REPO_ROOT, 'config'), dir, { recursive: true });
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('runs the demo on the ports it is given, says which config folder it serves and where the bookings go, answers, and stops with exit 0 on SIGTERM', async () => {
      const data = await freshDataDir();
      const server = await startCli(['start', '--config', dir, '--no-watch'], {
        env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'warn', GATEHOUSE_DATA: data },
      });
      assert.equal(server.name, 'gatehouse');
      assert.match(
        server.line,
        /^gatehouse listening on http:\/\/127\.0\.0\.1:\d+ \(gRPC rate limits on 127\.0\.0\.1:\d+; config folder /,
      );
      assert.ok(server.line.endsWith(`; config folder ${dir}; bookings: PGlite in ${data})`), server.line);
      const res = await fetch(`${server.address}/v1/messages/1`);
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { url: string }).url, `${server.address}/v1/messages/1`);
      assert.equal((await fetch(`${server.address}/v1/hotels/`)).status, 401);
      const ended = await server.stop();
      assert.equal(ended.code, 0, ended.stderr);
    });

    it('goes on serving when whoever read its standard output is gone, as `gatehouse start | head -1` leaves it', async () => {
      const free = net.createServer().listen(0, '127.0.0.1');
      await once(free, 'listening');
      const port = (free.address() as net.AddressInfo).port;
      await new Promise((resolve) => free.close(resolve));
      const { child, ended } = await spawnedCli(['start', '--config', dir, '--no-watch'], {
        env: { PORT: String(port), GRPC_PORT: '0', LOG_LEVEL: 'info' },
      });
      try {
        // The reader leaves before the listening line and the log lines are written.
        child.stdout!.destroy();
        while (!(await acceptsConnections(port))) {
          assert.equal(child.exitCode, null, 'the server ended before it listened');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        for (let i = 0; i < 3; i++) assert.equal((await fetch(`http://127.0.0.1:${port}/v1/messages/1`)).status, 200);
        assert.equal(child.exitCode, null, 'still running');
      } finally {
        child.kill('SIGTERM');
      }
      const result = await ended();
      assert.equal(result.code, 0, result.stderr);
      // Said once on standard error, as a line of its own, never as an error with its stack.
      const told = result.stderr.split('\n').filter((line) => /EPIPE/.test(line));
      assert.ok(told.length <= 1, result.stderr);
      for (const line of told) assert.match(line, /^gatehouse: standard output cannot be written \(EPIPE/);
      assert.doesNotMatch(result.stderr, /^\s+at /m);
    });

    it('reloads the config folder on SIGHUP, as a process manager asks with kill -HUP, instead of dying', async () => {
      const server = await startCli(['start', '--config', dir, '--no-watch'], {
        env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'info' },
      });
      try {
        assert.equal((await fetch(`${server.address}/extra/messages/1`)).status, 404);
        writeFileSync(
          join(dir, 'extra.yaml'),
          'apiVersion: gateway/v1\nkind: Mapping\nname: extra\nprefix: /extra/\nrewrite: /v1/\nservice: api\nbypass_auth: true\n',
        );
        server.child.kill('SIGHUP');
        let status = 0;
        while (status !== 200) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          status = (await fetch(`${server.address}/extra/messages/1`).catch(() => ({ status: -1 }))).status;
        }
        assert.equal(status, 200, server.output().stdout);
        // The log is written in chunks: the line may follow the reload by a moment.
        const said = /"signal":"SIGHUP","msg":"reloading the config folder"/;
        while (!said.test(server.output().stdout)) await new Promise((resolve) => setTimeout(resolve, 50));
        assert.match(server.output().stdout, said);
      } finally {
        const ended = await server.stop();
        assert.equal(ended.code, 0, ended.stderr);
      }
    });

    it('lives on when an alias bomb is dropped into the watched folder and SIGHUP applies it: refused by name, the last config serving', async () => {
      const server = await startCli(['start', '--config', dir], {
        env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'info' },
      });
      try {
        writeFileSync(join(dir, 'bomb.yaml'), aliasBomb());
        /** Refusals naming the file, after the line that `after` finds (the start, or SIGHUP's). */
        const refusedAfter = (after: string) => {
          const lines = server.output().stdout.split('\n');
          const from = lines.findIndex((l) => l.includes(after));
          return (
            from !== -1 &&
            lines
              .slice(from)
              .some(
                (l) =>
                  l.includes('config reload refused') &&
                  l.includes('bomb.yaml: YAML: uses aliases more than 100 times'),
              )
          );
        };
        await eventually(
          async () => (refusedAfter('gatehouse listening') ? true : undefined),
          'the watcher to refuse the file',
        );
        server.child.kill('SIGHUP');
        await eventually(
          async () => (refusedAfter('reloading the config folder') ? true : undefined),
          'SIGHUP to refuse the file',
        );
        assert.equal(server.child.exitCode, null, 'the process is still running');
        assert.equal((await fetch(`${server.address}/v1/messages/1`)).status, 200);
      } finally {
        const ended = await server.stop();
        assert.equal(ended.code, 0, ended.stderr);
      }
    });

    it('stops gracefully when SIGTERM reaches npm start alone, instead of running on without npm', async () => {
      const { port, output, signalNpm, exited, cleanup } = await npmScript(['start'], {
        PORT: '0',
        GRPC_PORT: '0',
        GATEHOUSE_CONFIG: dir,
        GATEHOUSE_DATA: await freshDataDir(),
      });
      try {
        assert.equal(await acceptsConnections(port), true);
        signalNpm('SIGTERM');
        await exited();
        // The gateway itself was told, and has stopped listening: nothing is left behind.
        assert.equal(await acceptsConnections(port), false, output());
        assert.match(output(), /"msg":"shutting down"/);
        assert.match(output(), /"msg":"gatehouse stopped"/);
      } finally {
        cleanup();
      }
    });

    it('lives through a SIGHUP and stops with exit 0 on a SIGTERM sent while it starts or opens its database', async () => {
      const data = join(dir, 'starting-data');
      const { child, ended } = await spawnedCli(['start', '--config', dir, '--data', data], {
        env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'info' },
      });
      // Made once its signals are held, before it listens or while the database opens after it listened:
      // which of the two the signals meet depends on the machine (the moments before listening are
      // the business of signals-while-starting.scenario.test.ts).
      await eventually(async () => (existsSync(data) ? true : undefined), 'the data folder to be made');
      child.kill('SIGHUP');
      child.kill('SIGTERM');
      const res = await ended();
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /"signal":"SIGTERM",("reason":"it came while starting",)?"msg":"shutting down"/);
      assert.doesNotMatch(res.stdout, /stopping at once/);
      assert.match(res.stdout, /"msg":"gatehouse stopped"\}\n$/);
      assert.equal(existsSync(join(data, 'gatehouse.pid')), false, 'the data folder is unlocked');
    });

    it('refuses a broken config with exit 1 and every problem, without a stack trace', async () => {
      appendFileSync(join(dir, 'services.yaml'), 'oops: [\n');
      const res = await runCli(['start', '--config', dir], { env: { PORT: '0', GRPC_PORT: '0' } });
      assert.equal(res.code, 1);
      assert.match(res.stderr, /^gatehouse: the config cannot be served:\n/);
      assert.ok(res.stderr.includes(`${join(dir, 'services.yaml')}: YAML:`), res.stderr);
      assertNoStack(res);
    });

    it('refuses a plaintext password in the users file with exit 1, naming the line and the user', async () => {
      appendFileSync(join(dir, 'users.htpasswd'), 'carol:secret\n');
      const res = await runCli(['start', '--config', dir], { env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' } });
      assert.equal(res.code, 1);
      assert.match(res.stderr, /users\.htpasswd: line 4: user 'carol': the password is not hashed/);
      assert.doesNotMatch(res.stderr + res.stdout, /secret/);
      assertNoStack(res);
    });

    it('ends with exit 1 for bad limits even with a Redis URL, instead of reconnecting forever', async () => {
      writeFileSync(
        join(dir, 'ratelimit.yaml'),
        'domain: gateway\ndescriptors:\n  - key: user\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n',
      );
      const res = await runCli(['start', '--config', dir, '--redis', 'redis://127.0.0.1:1'], {
        env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' },
      });
      assert.equal(res.code, 1);
      assert.match(res.stderr, /ratelimit\.yaml: descriptors\[0\]\.rate_limit\.unit: /);
      assertNoStack(res);
    });

    it('ends with exit 1 and says which address is taken, for the HTTP port and for the gRPC port, before it makes a data folder', async () => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = String((taken.address() as net.AddressInfo).port);
      const data = (name: string) => join(dir, name);
      try {
        const [http, grpc, alone] = await Promise.all([
          runCli(['start', '--config', dir, '--data', data('http'), '--port', port, '--grpc-port', '0'], {
            env: { LOG_LEVEL: 'silent' },
          }),
          runCli(['start', '--config', dir, '--data', data('grpc'), '--port', '0', '--grpc-port', port], {
            env: { LOG_LEVEL: 'silent' },
          }),
          runCli(['serve', 'hotel-booking', '--config', dir, '--data', data('alone'), '--port', port], {
            env: { LOG_LEVEL: 'silent' },
          }),
        ]);
        // Bound first: the first start has not made and migrated a database only to find its port taken.
        for (const name of ['http', 'grpc', 'alone']) assert.equal(existsSync(data(name)), false, name);
        assert.equal(alone.code, 1, alone.stderr);
        assert.match(alone.stderr, new RegExp(`^gatehouse: cannot listen for HTTP on 127\\.0\\.0\\.1:${port}: `));
        assert.equal(http.code, 1, http.stderr);
        assert.match(
          http.stderr,
          new RegExp(
            `^gatehouse: cannot listen for HTTP on 127\\.0\\.0\\.1:${port}: the address is already in use`,
            'm',
          ),
        );
        assert.equal(grpc.code, 1, grpc.stderr);
        // One line: grpc-js's own 'E No address added...' goes to the log, not before the message.
        assert.equal(
          grpc.stderr,
          `gatehouse: cannot listen for gRPC on 127.0.0.1:${port}: the address is already in use (another process listens on that port)\n`,
        );
        for (const res of [http, grpc]) assertNoStack(res);
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    });

    it('ends with exit 1 and leaves its data folder free when it fails once its bookings database is open (an install without its protos)', async () => {
      const install = await installWithoutProtos();
      try {
        const data = await freshDataDir();
        // Twice: a database left open by the first would keep the second process running, its start failed.
        for (let run = 0; run < 2; run++) {
          const broken = await runCli(['start', '--config', dir, '--data', data, '--no-watch'], {
            env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' },
            main: install.main,
          });
          assert.equal(broken.code, 1, broken.stderr);
          assert.match(broken.stderr, /^gatehouse: .*ratelimit\.proto/m);
        }
        // The database it opened was closed whole: the package as installed starts on the same folder.
        const server = await startCli(['start', '--config', dir, '--data', data, '--no-watch'], {
          env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' },
        });
        const res = await fetch(`${server.address}/gateway/v0/check_ready`);
        assert.equal(res.status, 200);
        assert.equal((await server.stop()).code, 0);
      } finally {
        install.remove();
      }
    });

    it('ends with exit 1 naming the TLS file at fault, before it makes a bookings database', async () => {
      const data = join(dir, 'tls-data');
      const res = await runCli(
        [
          'start',
          '--config',
          dir,
          '--data',
          data,
          '--tls-cert',
          join(dir, 'users.htpasswd'),
          '--tls-key',
          join(dir, 'nope.pem'),
        ],
        {
          env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' },
        },
      );
      assert.equal(res.code, 1);
      assert.equal(res.stderr, `gatehouse: cannot read the TLS key ${join(dir, 'nope.pem')}: no such file\n`);
      assert.equal(existsSync(data), false, 'no database made for a gateway that cannot start');
    });

    it('takes one TLS file from its flag and the other from the environment, and refuses a flag whose pair is given nowhere', async () => {
      const env = { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' };
      const mixed = await runCli(
        ['start', '--config', dir, '--data', join(dir, 'tls-mixed'), '--tls-cert', join(dir, 'users.htpasswd')],
        {
          env: { ...env, TLS_KEY: join(dir, 'nope.pem') },
        },
      );
      assert.equal(mixed.code, 1);
      assert.equal(mixed.stderr, `gatehouse: cannot read the TLS key ${join(dir, 'nope.pem')}: no such file\n`);
      const alone = await runCli(['start', '--config', dir, '--tls-cert', join(dir, 'users.htpasswd')], { env });
      assert.equal(alone.code, 2);
      assert.match(
        alone.stderr,
        /^gatehouse: --tls-cert: goes with --tls-key \(or TLS_KEY\): a certificate and its key, both or neither\n/,
      );
    });

    it('takes the body limit and trust in a proxy in front from flags, and refuses them malformed there and in the environment', async () => {
      const flagged = await startCli(['start', '--config', dir, '--body-limit', '1k', '--trust-proxy'], {
        env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'info' },
      });
      try {
        const big = await fetch(`${flagged.address}/v1/messages/`, {
          method: 'POST',
          body: 'x'.repeat(2048),
          headers: { 'content-type': 'text/plain' },
        });
        assert.equal(big.status, 413);
        const proxied = await fetch(`${flagged.address}/v1/messages/1`, {
          headers: {
            'x-forwarded-for': '203.0.113.9',
            'x-forwarded-proto': 'https',
            'x-forwarded-host': 'api.example',
          },
        });
        assert.equal(((await proxied.json()) as { url: string }).url, 'https://api.example/v1/messages/1');
      } finally {
        await flagged.stop();
      }
      const lines = flagged
        .output()
        .stdout.split('\n')
        .filter((l) => l.includes('"path":"/v1/messages/1"'));
      assert.match(lines[0], /"remote":"203\.0\.113\.9"/);
      const env = { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' };
      const res = await runCli(['start', '--config', dir], { env: { ...env, TRUST_PROXY: 'maybe' } });
      assert.equal(res.code, 1, res.stderr);
      assert.equal(res.stderr, 'gatehouse: TRUST_PROXY: must be true or false (got "maybe")\n');
      const flag = await runCli(['start', '--config', dir, '--body-limit', 'lots'], { env });
      assert.equal(flag.code, 2);
      assert.match(flag.stderr, /^gatehouse: --body-limit: must be a number of bytes /);
    });

    it('refuses a --cluster-domain that is no DNS domain with exit 2, naming the flag', async () => {
      const res = await runCli(['start', '--config', dir, '--cluster-domain', 'a..b'], {
        env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' },
      });
      assert.equal(res.code, 2);
      assert.match(
        res.stderr,
        /^gatehouse: --cluster-domain: must be a DNS domain such as cluster\.local \(got "a\.\.b"\)\n/,
      );
    });

    it('refuses a REDIS_URL the Redis client would misread, with exit 1 and without quoting its password', async () => {
      const [scheme, port, flag] = await Promise.all([
        runCli(['start', '--config', dir], {
          env: { PORT: '0', GRPC_PORT: '0', REDIS_URL: 'http://:hunter2@127.0.0.1:6379' },
        }),
        runCli(['start', '--config', dir], {
          env: { PORT: '0', GRPC_PORT: '0', REDIS_URL: 'redis://:hunter2@127.0.0.1:63x9' },
        }),
        runCli(['serve', 'ratelimit', '--config', dir, '--port', '0', '--redis', 'https://:hunter2@127.0.0.1'], {
          env: { LOG_LEVEL: 'silent' },
        }),
      ]);
      assert.equal(scheme.code, 1);
      const must = 'must be a redis:// or rediss:// URL, host:port, a port or a socket path';
      assert.equal(scheme.stderr, `gatehouse: REDIS_URL: ${must} (got the scheme http://)\n`);
      assert.equal(port.code, 1);
      assert.equal(
        port.stderr,
        `gatehouse: REDIS_URL: ${must} (got a URL that cannot be read; a password with @, : or / is written percent-encoded)\n`,
      );
      // On the command line, a mistake there: exit 2.
      assert.equal(flag.code, 2);
      assert.match(flag.stderr, new RegExp(`^gatehouse: --redis: ${must} \\(got the scheme https://\\)\n`));
      for (const res of [scheme, port, flag]) assert.doesNotMatch(res.stdout + res.stderr, /hunter2/);
    });

    it('says where the rate-limit counters are when they are in Redis, without the password', async () => {
      // Unreachable: the gateway serves all the same, its rate limits following their failure mode.
      const server = await startCli(
        ['start', '--config', dir, '--no-watch', '--redis', 'redis://:hunter2@127.0.0.1:1'],
        {
          env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'silent' },
        },
      );
      try {
        assert.match(server.line, /; counters: Redis at redis:\/\/127\.0\.0\.1:1; bookings: PGlite in /);
        assert.doesNotMatch(server.line, /hunter2/);
      } finally {
        assert.equal((await server.stop()).code, 0);
      }
    });

    it('refuses a malformed port in the environment with exit 1, naming the variable', async () => {
      const res = await runCli(['start', '--config', dir], { env: { PORT: '80a' } });
      assert.equal(res.code, 1);
      assert.equal(res.stderr, 'gatehouse: PORT: must be an integer from 0 to 65535 (got "80a")\n');
      assertNoStack(res);
    });
  });
});
