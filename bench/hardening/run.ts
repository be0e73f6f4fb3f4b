/**
 * @module bench/hardening/run
 * The worst cases of the bounds docs/security.md states, measured against
 * a built Gatehouse: this checkout's dist/ (built first when older than
 * src/), or another tree's with `--dist <dir>`, so that a change is
 * measured before and after on the same machine. The gateway runs on CPU 0
 * (taskset); run this on CPU 1. Prints one JSON object.
 *
 *   taskset -c 1 node --import tsx bench/hardening/run.ts [regex|regex:<scenario>] [yaml] [reload] [handshake] [grpc] [stop] [--dist <dir>]
 *
 * - regex: eight connections of requests whose patterns read long paths
 *   and headers (./regex), check_alive asked every 10 ms meanwhile;
 * - yaml: `gatehouse check` of 7 MB hostile files of every shape, in every
 *   file a folder reads (./yaml): seconds and peak resident MiB;
 * - reload: the same files reloaded by a running gateway (SIGHUP);
 * - handshake: a WebSocket handshake sent a header a second: when the 408 comes;
 * - grpc: the largest rate-limit call, back to back, check_alive meanwhile;
 * - stop: SIGTERM under HTTP/1.1 and HTTP/2 load: what failed, and whether the gateway had taken it.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from '../harness/build';
import { largeGrpcCalls, slowHandshake } from './connections';
import { runRegexScenario, SCENARIOS } from './regex';
import { stopUnderLoad } from './stop';
import { checkShape, OTHER_FILES, reloadShape, SHAPES } from './yaml';

const PARTS = ['regex', 'yaml', 'reload', 'handshake', 'grpc', 'stop'] as const;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--dist');
  const dist = at === -1 ? join(__dirname, '..', '..', 'dist') : args.splice(at, 2)[1];
  if (at === -1) ensureBuilt(join(__dirname, '..', '..'));
  // `regex:<scenario>` runs that scenario alone.
  const only = args.find((arg) => arg.startsWith('regex:'))?.slice('regex:'.length);
  if (only !== undefined) args.push('regex');
  const parts = args.length === 0 ? PARTS : PARTS.filter((part) => args.includes(part));
  const results: Record<string, unknown> = { dist, loadAverage: loadavg().map((n) => Math.round(n * 10) / 10) };
  const say = (line: string) => process.stderr.write(`${line}\n`);
  // A part that fails is told as such; the others are still printed.
  const measure = async (name: string, part: () => Promise<unknown>) => {
    try {
      results[name] = await part();
    } catch (err) {
      results[name] = { failed: err instanceof Error ? err.message : String(err) };
    }
  };
  if (parts.includes('regex')) {
    const regex: Record<string, unknown> = {};
    for (const name of Object.keys(SCENARIOS).filter((name) => only === undefined || name === only)) {
      say(`regex: ${name}`);
      regex[name] = await runRegexScenario(dist, name);
    }
    results.regex = regex;
  }
  if (parts.includes('yaml')) {
    const yaml: Record<string, unknown> = {};
    for (const [name, make] of Object.entries(SHAPES)) {
      say(`yaml: ${name}`);
      yaml[`${name} in services.yaml`] = checkShape(dist, 'services.yaml', make());
    }
    for (const [name, { file, text }] of Object.entries(OTHER_FILES)) {
      say(`yaml: ${name}`);
      yaml[name] = checkShape(dist, file, text());
    }
    results.check = yaml;
  }
  if (parts.includes('reload')) {
    const reload: Record<string, unknown> = {};
    for (const name of ['deep flow lists', 'alias bomb', 'many keys']) {
      say(`reload: ${name}`);
      try {
        reload[name] = await reloadShape(dist, SHAPES[name]());
      } catch (err) {
        reload[name] = { failed: err instanceof Error ? err.message.slice(0, 300) : String(err) };
      }
    }
    results.reload = reload;
  }
  if (parts.includes('handshake')) {
    say('handshake');
    await measure('handshake', () => slowHandshake(dist));
  }
  if (parts.includes('grpc')) {
    say('grpc');
    await measure('grpc', () => largeGrpcCalls(dist));
  }
  if (parts.includes('stop')) {
    say('stop');
    await measure('stop', () => stopUnderLoad(dist));
  }
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(2);
});
