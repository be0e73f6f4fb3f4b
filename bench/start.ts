/**
 * @module bench/start
 * How long `gatehouse start` takes to its first answered request, from the
 * compiled dist/ (what `npm start` runs) and from the sources through tsx
 * (what `npm run dev` runs): each started in turn, BENCH_STARTS times
 * (default 7), the median and the spread printed. dist/ is built first when
 * it is missing or older than src/, as for `npm run bench`.
 *
 *   node --import tsx bench/start.ts
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ensureBuilt } from './harness/build';

const ROOT = join(__dirname, '..');
const ARGS = ['start', '--port', '0', '--grpc-port', '0', '--no-watch'];
const WAYS: Record<string, string[]> = {
  'dist/ (npm start)': [join(ROOT, 'dist', 'cli', 'main.js'), ...ARGS],
  'src/ through tsx (npm run dev)': ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), ...ARGS],
};

/** Milliseconds from spawning the command to the answer of its first request. */
async function once(args: string[]): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const match = / listening on (\S+)/.exec(out);
        if (match) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`it exited (${code}) before listening:\n${out}`)));
    });
    const res = await fetch(`${url}/v1/messages/1`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`the first request got ${res.status}`);
    return performance.now() - started;
  } finally {
    child.kill('SIGKILL');
  }
}

async function main(): Promise<void> {
  ensureBuilt(ROOT);
  const runs = Math.max(1, Number(process.env.BENCH_STARTS ?? 7));
  const times = new Map<string, number[]>(Object.keys(WAYS).map((way) => [way, []]));
  // In turn, so that both meet the same moments of a busy machine.
  for (let i = 0; i < runs; i++) for (const [way, args] of Object.entries(WAYS)) times.get(way)!.push(await once(args));
  for (const [way, list] of times) {
    const sorted = [...list].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    console.log(
      `${way}: median ${(median / 1000).toFixed(2)} s (${(sorted[0] / 1000).toFixed(2)}..${(sorted[sorted.length - 1] / 1000).toFixed(2)} s over ${runs})`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
