/**
 * @module bench/hardening/yaml
 * Hostile YAML of 7 MB (under the 8 MiB file size limit) in each file a
 * config folder reads: how long `gatehouse check` takes to refuse it and
 * the peak resident memory of its process; and the same for a running
 * gateway's reload (SIGHUP), against its idle size.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVER_CPU, startGateway } from './gateway';

const SIZE = 7 * 1024 * 1024;

const fill = (unit: string, head = '', tail = '') =>
  head + unit.repeat(Math.floor((SIZE - head.length - tail.length) / unit.length)) + tail;

function lines(make: (i: number) => string): string {
  const out: string[] = [];
  let length = 0;
  for (let i = 0; length < SIZE - 200; i++) {
    const line = make(i);
    out.push(line);
    length += line.length;
  }
  return out.join('');
}

/** Each hostile shape, as the text of a records file. */
export const SHAPES: Record<string, () => string> = {
  'deep flow lists': () => fill('[', 'a: '),
  'deep flow mappings': () => fill('{a: ', 'a: '),
  'deep block lists': () => fill('- '),
  'deep block mappings': () => lines((i) => `${' '.repeat(i)}k:\n`),
  'alias bomb': () => fill('- *a\n', 'a: &a [x, x, x, x, x, x, x, x, x, x]\nb:\n'),
  'merge keys': () => fill('- <<: *a\n', 'a: &a {x: 1, y: 2}\nb:\n'),
  anchors: () => fill('- &a x\n'),
  'one long value': () => fill('x', 'a: "', '"\n'),
  'many documents': () => fill('---\n'),
  'many keys': () => lines((i) => `k${i}: 1\n`),
  'wide flow mapping': () => `{${lines((i) => `k${i}: 1, `)}}\n`,
  'wide flow list': () => fill('[], ', 'a: [', ']\n'),
  comments: () => fill('#\n'),
};

/** The other files a folder reads, each with a shape that reaches its parser, and a records file beside it. */
export const OTHER_FILES: Record<string, { file: string; text: () => string }> = {
  'deep flow lists in an annotation': {
    file: 'services.yaml',
    text: () =>
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations:\n    gatehouse.io/config: |\n      a: ${'['.repeat(900 * 1024)}\n`,
  },
  'deep flow lists in ratelimit.yaml': { file: 'ratelimit.yaml', text: () => fill('[', 'domain: d\ndescriptors: ') },
  'many keys in ratelimit.yaml': { file: 'ratelimit.yaml', text: SHAPES['many keys'] },
  'alias bomb in bookings.yaml': { file: 'bookings.yaml', text: SHAPES['alias bomb'] },
  'deep flow lists in bookings.yaml': { file: 'bookings.yaml', text: () => fill('[', 'hotels: ') },
  'lines of users.htpasswd': {
    file: 'users.htpasswd',
    text: () => lines((i) => `user${i}:$2y$05$abcdefghijklmnopqrstuuWZ7V1bHbqQ1y0y0y0y0y0y0y0y0y0y0y\n`),
  },
};

const ROUTE = 'apiVersion: gateway/v1\nkind: Mapping\nname: m\nprefix: /\nservice: api\n';

/** What `gatehouse check` did with one folder. */
export interface CheckResult {
  seconds: number;
  peakMb: number;
  /** The first line that names the file, or the end of the output. */
  said: string;
}

/** Runs `gatehouse check <dir>` from `dist`, pinned, with its time and peak memory. */
export function checkFolder(dist: string, dir: string): CheckResult {
  const run = spawnSync(
    '/usr/bin/time',
    // timeout(1) ends the check itself: spawnSync's own would end /usr/bin/time and leave the check running.
    [
      '-f',
      '%e %M',
      'timeout',
      '-s',
      'KILL',
      '180',
      'taskset',
      '-c',
      String(SERVER_CPU),
      process.execPath,
      join(dist, 'cli', 'main.js'),
      'check',
      dir,
    ],
    { encoding: 'utf8' },
  );
  const output = `${run.stdout}${run.stderr}`;
  const [seconds, kb] = (/(\d+\.\d+) (\d+)\s*$/.exec(run.stderr) ?? ['', 'NaN', 'NaN']).slice(1).map(Number);
  const said =
    output.split('\n').find((line) => line.includes(dir) || /\.(yaml|htpasswd):/.test(line)) ?? output.slice(-300);
  return { seconds, peakMb: Math.round(kb / 1024), said: said.replace(`${dir}/`, '').trim().slice(0, 220) };
}

/** Checks a folder holding `text` as `file` (and a route beside it). */
export function checkShape(dist: string, file: string, text: string): CheckResult {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-yaml-'));
  try {
    if (file !== 'services.yaml') writeFileSync(join(dir, 'services.yaml'), ROUTE);
    writeFileSync(join(dir, file), text);
    return checkFolder(dist, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a running gateway's reload did with a hostile file. */
export interface ReloadResult {
  idleMb: number;
  peakMb: number;
  /** From the signal to the refusal in the log. */
  seconds: number;
}

/** Starts a gateway on a valid folder, writes `text` as its records, sends SIGHUP, and waits for the refusal. */
export async function reloadShape(dist: string, text: string): Promise<ReloadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-reload-'));
  const config = join(dir, 'config');
  mkdirSync(config);
  writeFileSync(join(config, 'services.yaml'), ROUTE);
  const gateway = await startGateway(dist, config, join(dir, 'data'));
  try {
    if (gateway.url === undefined) throw new Error(`the gateway did not start:\n${gateway.log()}`);
    await new Promise((r) => setTimeout(r, 2000));
    const idle = gateway.memory().rssMb;
    writeFileSync(join(config, 'services.yaml'), text);
    const started = performance.now();
    gateway.child.kill('SIGHUP');
    await gateway.waitFor(/config reload (refused|failed)/, 600_000);
    const seconds = (performance.now() - started) / 1000;
    return { idleMb: idle, peakMb: gateway.memory().peakMb, seconds: Math.round(seconds * 100) / 100 };
  } finally {
    await gateway.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
