/**
 * A hostile YAML file as large as the file size limit lets through (7 MB),
 * dropped into a config folder: `gatehouse check` refuses it, and so does a
 * running gateway's reload, the old config serving, each naming the file
 * and the reason; and neither process grows by more than 200 MiB, where
 * the tree of 7 MB of `[` took gigabytes before anything refused it. The peak is the process's own (`maxRSS`, its threads
 * included), read by a module loaded before the command.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/polling';
import { padded } from '../support/hostile-yaml';
import { REPO_ROOT, runCli, startCli, type CliServer } from '../support/process';

/** As large as a hostile file gets under the 8 MiB file size limit. */
const LARGE = 7 * 1024 * 1024;

/**
 * How much a hostile file may grow the process, in KiB: 200 MiB, where a
 * document read up to its token bound took more than 250 MiB before its
 * rest was counted ahead of the tree.
 */
const MOST_GROWTH_KIB = 200 * 1024;

const MAPPING = 'apiVersion: gateway/v1\nkind: Mapping\nname: m\nprefix: /m/\nservice: api\n';

/** The shapes whose trees grew without bound, each with the refusal it now meets. */
const SHAPES = [
  {
    shape: 'deep flow lists',
    text: () => `a: ${'['.repeat(LARGE)}`,
    refusal:
      /nested too deeply to be read \(more than 64 mappings or lists inside each other\) at line 1, column \d+: refused/,
  },
  {
    // The most memory a shape within the other bounds takes: a document read up to its token bound.
    shape: 'a wide flow list',
    text: () => `a: [${'[], '.repeat(LARGE / 4)}]\n`,
    refusal:
      /a document holds more than 1048576 tokens: split it into documents or files at line 1, column \d+: refused/,
  },
];

/** Node's option that loads the module telling the peak: on SIGUSR2, and as the process exits. */
function peakTeller(dir: string): string[] {
  const file = join(dir, 'peak.cjs');
  writeFileSync(
    file,
    "const { writeSync } = require('node:fs');\n" +
      'const say = () => writeSync(2, `peak-rss-kib ${process.resourceUsage().maxRSS}\\n`);\n' +
      "process.on('SIGUSR2', say);\nprocess.on('exit', say);\n",
  );
  return ['--require', file];
}

/** Every peak a process has told on standard error, in KiB, in order. */
function peaks(stderr: string): number[] {
  return [...stderr.matchAll(/^peak-rss-kib (\d+)$/gm)].map((m) => Number(m[1]));
}

describe('hostile YAML files as large as the file size limit lets through', function () {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-hostile-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** `gatehouse check` of a folder holding `text` as its records, and its peak in KiB. */
  async function check(name: string, text: string): Promise<{ code: number | null; output: string; peak: number }> {
    const folder = join(dir, name);
    cpSync(join(REPO_ROOT, 'config'), folder, { recursive: true });
    writeFileSync(join(folder, 'extra.yaml'), text);
    const result = await runCli(['check', folder], { nodeArgs: peakTeller(dir) });
    return { code: result.code, output: `${result.stdout}${result.stderr}`, peak: peaks(result.stderr).at(-1)! };
  }

  it('gatehouse check refuses each, naming the file and the reason, growing by 200 MiB at most', async () => {
    // Past 32 KiB, as the hostile ones, so that both are checked on the thread that checks large folders.
    const valid = await check('valid', padded(MAPPING, 64 * 1024));
    assert.equal(valid.code, 0, valid.output);
    for (const { shape, text, refusal } of SHAPES) {
      const hostile = await check(shape.replace(/ /g, '-'), text());
      assert.equal(hostile.code, 1, `${shape}: ${hostile.output}`);
      assert.match(hostile.output, new RegExp(`extra\\.yaml: YAML: ${refusal.source}`), shape);
      assert.ok(
        hostile.peak - valid.peak <= MOST_GROWTH_KIB,
        `${shape}: a peak of ${hostile.peak >> 10} MiB, where a valid folder's is ${valid.peak >> 10} MiB`,
      );
    }
  });

  it("a running gateway's reload refuses it, naming the file and the reason, the old config serving, growing by 200 MiB at most", async () => {
    const config = join(dir, 'config');
    cpSync(join(REPO_ROOT, 'config'), config, { recursive: true });
    const server: CliServer = await startCli(['start', '--config', config, '--no-watch'], {
      env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'info' },
      nodeArgs: peakTeller(dir),
    });
    try {
      const peakNow = async (what: string) => {
        const told = peaks(server.output().stderr).length;
        server.child.kill('SIGUSR2');
        return eventually(async () => peaks(server.output().stderr)[told], what);
      };
      const idle = await peakNow('the peak before the reload');
      writeFileSync(join(config, 'extra.yaml'), SHAPES[0].text());
      server.child.kill('SIGHUP');
      await eventually(
        async () =>
          server
            .output()
            .stdout.split('\n')
            .some((l) => l.includes('config reload refused') && /extra\.yaml: YAML: nested too deeply/.test(l))
            ? true
            : undefined,
        'the reload to be refused',
      );
      const peak = await peakNow('the peak after the reload');
      assert.ok(peak - idle <= MOST_GROWTH_KIB, `a peak of ${peak >> 10} MiB, ${idle >> 10} MiB before the reload`);
      assert.equal((await fetch(`${server.address}/v1/messages/1`)).status, 200);
    } finally {
      const ended = await server.stop();
      assert.equal(ended.code, 0, ended.stderr);
    }
  });
});
