/**
 * @module bench/shared-counters
 * CPU time of one rate-limit decision in the memory store and in the store
 * over shared counters: on one thread, then on two threads at once (each
 * with a memory store of its own, against both on one set of shared
 * counters). Keys are built for each decision as the service builds them,
 * and the cost of building them alone is given, to subtract. The stores are
 * the compiled ones of dist/ (built when older than src/), as a gateway
 * runs them.
 *
 *   node --import tsx bench/shared-counters.ts
 *
 * SHARED_BENCH_DECISIONS (per thread and round, default 1 000 000) and
 * SHARED_BENCH_ROUNDS (default 5) tune the runs; figures are medians.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { MemoryStore } from '../src/ratelimit';
import { ensureBuilt } from './harness/build';

const ROOT = join(__dirname, '..');
/** The compiled stores, as a gateway runs them. */
const RATELIMIT = join(ROOT, 'dist/ratelimit/index.js');
type Ratelimit = typeof import('../src/ratelimit');

const DECISIONS = Number(process.env.SHARED_BENCH_DECISIONS ?? 1_000_000);
const ROUNDS = Number(process.env.SHARED_BENCH_ROUNDS ?? 5);

/** What a thread decides: `users` distinct users, `descriptors` per request (the second one per route). */
interface Case {
  name: string;
  users: number;
  descriptors: 1 | 2;
}

const CASES: Case[] = [
  { name: 'one descriptor, 10 000 users', users: 10_000, descriptors: 1 },
  { name: 'two descriptors, 10 000 users', users: 10_000, descriptors: 2 },
  { name: 'one descriptor, one user (one counter)', users: 1, descriptors: 1 },
];

/** Decides `decisions` requests of `c` on `store` (none: builds the keys only); a checksum, so nothing is skipped. */
function run(store: MemoryStore | undefined, c: Case, decisions: number): number {
  let sum = 0;
  const window = 1_700_000_000;
  for (let i = 0; i < decisions; i++) {
    const user = i % c.users;
    const key = `api_user_${user}_${window}`;
    const checks = [{ key, hits: 1, limit: 1e12, ttlMs: 3_600_000, enforce: true }];
    if (c.descriptors === 2)
      checks.push({ key: `api_route_${user % 16}_${window}`, hits: 1, limit: 1e12, ttlMs: 3_600_000, enforce: true });
    if (store) sum += store.decide(checks).before[0];
    else sum += key.length + checks.length;
  }
  return sum;
}

/** CPU ns of the whole process per decision, `decide` running `decisions` of them. */
function cpuNsPer(decisions: number, decide: () => void): number {
  const start = process.cpuUsage();
  decide();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / decisions;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const WORKER_SOURCE = `
  const { parentPort, workerData } = require('node:worker_threads');
  require('tsx/cjs');
  const { run } = require(workerData.bench);
  const { createMemoryStore, createSharedStore } = require(workerData.ratelimit);
  const store = workerData.counters ? createSharedStore(workerData.counters) : createMemoryStore();
  parentPort.on('message', ({ c, decisions, gate }) => {
    const words = new Int32Array(gate);
    Atomics.add(words, 0, 1);
    while (Atomics.load(words, 1) === 0) Atomics.wait(words, 1, 0);
    run(store, c, decisions);
    parentPort.postMessage('done');
  });
`;

/** CPU ns of the process per decision with `threads` workers deciding at once, shared counters or a memory store each. */
async function onThreads(ratelimit: Ratelimit, c: Case, threads: number, shared: boolean): Promise<number> {
  const counters = shared ? ratelimit.createSharedCounters() : undefined;
  const workerData = { bench: __filename, ratelimit: RATELIMIT, counters };
  const workers = Array.from({ length: threads }, () => new Worker(WORKER_SOURCE, { eval: true, workerData }));
  try {
    const samples: number[] = [];
    for (let round = 0; round <= ROUNDS; round++) {
      const gate = new Int32Array(new SharedArrayBuffer(8));
      const done = workers.map((w) => new Promise((resolve) => w.once('message', resolve)));
      for (const w of workers) w.postMessage({ c, decisions: DECISIONS, gate: gate.buffer });
      while (Atomics.load(gate, 0) < threads) await new Promise((resolve) => setImmediate(resolve));
      const start = process.cpuUsage();
      Atomics.store(gate, 1, 1);
      Atomics.notify(gate, 1);
      await Promise.all(done);
      const used = process.cpuUsage(start);
      // The first round warms the workers up.
      if (round > 0) samples.push(((used.user + used.system) * 1000) / (threads * DECISIONS));
    }
    return median(samples);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

async function main(): Promise<void> {
  ensureBuilt(ROOT);
  const ratelimit = require(RATELIMIT) as Ratelimit;
  const makers: (() => MemoryStore | undefined)[] = [
    () => undefined,
    () => ratelimit.createMemoryStore(),
    () => ratelimit.createSharedStore(ratelimit.createSharedCounters()),
  ];
  console.log(`${DECISIONS} decisions a round, median of ${ROUNDS} rounds, CPU ns per decision\n`);
  console.log('| case | keys alone | memory store | shared store | shared − memory |');
  console.log('|---|---|---|---|---|');
  for (const c of CASES) {
    // Round by round, each store in turn: a change in the machine's load falls on all of them.
    const samples = makers.map((): number[] => []);
    for (let round = 0; round <= ROUNDS; round++) {
      for (const [i, make] of makers.entries()) {
        const store = make();
        const ns = cpuNsPer(DECISIONS, () => run(store, c, DECISIONS));
        // The first round warms up.
        if (round > 0) samples[i].push(ns);
      }
    }
    const [keys, memory, shared] = samples.map((ns) => Math.round(median(ns)));
    console.log(`| ${c.name} | ${keys} | ${memory} | ${shared} | ${shared - memory} |`);
  }
  console.log('\n2 threads at once (process CPU ns per decision)\n');
  console.log('| case | a memory store each | shared counters |');
  console.log('|---|---|---|');
  for (const c of CASES) {
    const memory = Math.round(await onThreads(ratelimit, c, 2, false));
    const shared = Math.round(await onThreads(ratelimit, c, 2, true));
    console.log(`| ${c.name} | ${memory} | ${shared} |`);
  }
}

export { run };

if (require.main === module) void main();
