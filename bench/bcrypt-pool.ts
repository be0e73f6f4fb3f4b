/**
 * @module bench/bcrypt-pool
 * The bcrypt threads of the auth service against piscina, the maintained
 * worker pool, doing the same job: one thread (what `defaultBcryptThreads`
 * gives on two CPUs), 64 checks that may wait, threads that rest 1 s, nice
 * 10. Run pinned to one CPU (`taskset -c 1`), as the gateway's event loop
 * shares its core with the threads:
 *
 *   npm install --no-save piscina@5.3.2
 *   taskset -c 1 node --import tsx bench/bcrypt-pool.ts
 *
 * For each pool, in interleaved rounds: a burst of 32 checks (their time,
 * and how late a 1 ms timer on the event loop ran meanwhile, p99 and max),
 * one check on a rested pool (a thread started for it) and one on a busy
 * one, and the main thread's CPU per check.
 */
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createBcryptPool } from '../src/auth/passwords/bcrypt-pool';

const HASH = '$2y$10$uyxlReknO0ItPaVIpo8SjujKtTKuDZq9JLfzABZagxznzGWCkedZG';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BURST = 32;

interface Pool {
  compare(password: string, hash: string): Promise<boolean>;
  close(): Promise<void>;
}

function ownPool(): Pool {
  // No deadline on the wait: piscina has none, and the burst must finish the same way in both.
  return createBcryptPool({ threads: 1, maxQueued: 64, idleMs: 1000, niceness: 10, maxWaitMs: 600_000 });
}

function piscinaPool(): Pool {
  let Piscina: typeof import('piscina').Piscina;
  try {
    ({ Piscina } = require('piscina') as typeof import('piscina'));
  } catch {
    process.stderr.write('piscina is not installed: npm install --no-save piscina@5.3.2\n');
    process.exit(2);
  }
  const dir = mkdtempSync(join(tmpdir(), 'bcrypt-piscina-'));
  const worker = join(dir, 'worker.js');
  writeFileSync(
    worker,
    `const bcrypt = require(${JSON.stringify(require.resolve('bcryptjs'))});\nmodule.exports = ({ password, hash }) => bcrypt.compareSync(password, hash);\n`,
  );
  const pool = new Piscina({
    filename: worker,
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: 1000,
    maxQueue: 64,
    niceIncrement: 10,
  });
  return {
    compare: (password, hash) => pool.run({ password, hash }) as Promise<boolean>,
    close: () => pool.destroy(),
  };
}

interface Figures {
  burstMs: number;
  lagP99Ms: number;
  lagMaxMs: number;
  coldMs: number;
  warmMs: number;
  mainCpuUsPerCheck: number;
}

async function measure(make: () => Pool): Promise<Figures> {
  const pool = make();
  try {
    const t0 = performance.now();
    await pool.compare('wonderland', HASH);
    const coldMs = performance.now() - t0;
    const t1 = performance.now();
    await pool.compare('wonderland', HASH);
    const warmMs = performance.now() - t1;
    const lag = monitorEventLoopDelay({ resolution: 1 });
    const ticking = setInterval(() => undefined, 1);
    lag.enable();
    const cpu0 = process.cpuUsage();
    const t2 = performance.now();
    await Promise.all(Array.from({ length: BURST }, (_, i) => pool.compare(i % 2 ? 'wonderland' : 'wrong', HASH)));
    const burstMs = performance.now() - t2;
    const cpu = process.cpuUsage(cpu0);
    lag.disable();
    clearInterval(ticking);
    return {
      burstMs,
      lagP99Ms: lag.percentile(99) / 1e6,
      lagMaxMs: lag.max / 1e6,
      coldMs,
      warmMs,
      // Main thread and worker together (process.cpuUsage counts the process): per check.
      mainCpuUsPerCheck: (cpu.user + cpu.system) / BURST,
    };
  } finally {
    await pool.close();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

void (async () => {
  const results: Record<string, Figures[]> = { own: [], piscina: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, make] of round % 2
      ? ([
          ['piscina', piscinaPool],
          ['own', ownPool],
        ] as const)
      : ([
          ['own', ownPool],
          ['piscina', piscinaPool],
        ] as const)) {
      results[name].push(await measure(make));
      // Let the other's thread go before the next one starts.
      await new Promise((resolve) => setTimeout(resolve, 1500));
    }
  }
  const table: Record<string, Record<string, number>> = {};
  for (const [name, runs] of Object.entries(results)) {
    table[name] = {};
    for (const key of Object.keys(runs[0]) as (keyof Figures)[])
      table[name][key] = Number(median(runs.map((r) => r[key])).toFixed(1));
  }
  console.log(
    JSON.stringify(
      { date: new Date().toISOString(), node: process.version, rounds: ROUNDS, burst: BURST, medians: table },
      null,
      2,
    ),
  );
  process.exit(0);
})();
