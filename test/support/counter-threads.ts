/**
 * @module test/support/counter-threads
 * Threads deciding on shared rate-limit counters at the same moment: each
 * worker makes its own store from one handle, waits at a gate until every
 * thread is ready, then decides its requests as fast as it can.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createSharedStore, type SharedCounters, type WindowCheck } from '../../src/ratelimit';

/** What one thread decides: the same request, `times` times. */
export interface ThreadPlan {
  checks: WindowCheck[];
  times: number;
}

/** The module a worker loads its store from, as TypeScript through tsx. */
export const SHARED_MODULE = join(__dirname, '../../src/ratelimit/shared/index.ts');

const WORKER_SOURCE = `
  const { parentPort, workerData } = require('node:worker_threads');
  require('tsx/cjs');
  const { createSharedStore } = require(workerData.module);
  const store = createSharedStore(workerData.counters);
  const gate = new Int32Array(workerData.gate);
  if (Atomics.add(gate, 0, 1) + 1 === workerData.threads) Atomics.notify(gate, 0);
  parentPort.postMessage('at the gate');
  for (let seen = Atomics.load(gate, 0); seen < workerData.threads; seen = Atomics.load(gate, 0)) {
    Atomics.wait(gate, 0, seen);
  }
  let admitted = 0;
  for (let i = 0; i < workerData.plan.times; i++) if (store.decide(workerData.plan.checks).admitted) admitted++;
  parentPort.postMessage({ admitted });
`;

/** The worker's count of admitted requests, once it has sent it; `atGate` once it is at the gate. */
function answersOf(worker: Worker): { atGate: Promise<void>; admitted: Promise<number> } {
  let reached!: () => void;
  let failed!: (err: Error) => void;
  let answered!: (admitted: number) => void;
  const atGate = new Promise<void>((resolve, reject) => {
    reached = resolve;
    failed = reject;
  });
  const admitted = new Promise<number>((resolve, reject) => {
    answered = resolve;
    const fail = failed;
    failed = (err) => {
      fail(err);
      reject(err);
    };
  });
  // Awaited only when this thread takes part; a failure then shows through `admitted`.
  atGate.catch(() => {});
  worker.on('message', (message: 'at the gate' | { admitted: number }) => {
    if (message === 'at the gate') reached();
    else answered(message.admitted);
  });
  worker.once('error', failed);
  worker.once('exit', (code) => failed(new Error(`a counting thread ended without answering (exit ${code})`)));
  return { atGate, admitted };
}

/**
 * Runs each plan on a worker of its own, and `here` (if given) on this
 * thread at the same time; the requests each thread saw admitted, in the
 * order of the plans, this thread's last.
 */
export async function decideOnThreads(
  counters: SharedCounters,
  plans: readonly ThreadPlan[],
  here?: ThreadPlan,
): Promise<number[]> {
  const threads = plans.length + (here ? 1 : 0);
  const gate = new SharedArrayBuffer(4);
  const workers = plans.map(
    (plan) =>
      new Worker(WORKER_SOURCE, { eval: true, workerData: { module: SHARED_MODULE, counters, gate, threads, plan } }),
  );
  try {
    const answers = workers.map(answersOf);
    const admitted: number[] = [];
    if (here) {
      // This thread opens the gate last, once every worker waits at it: blocking before would stall their start.
      await Promise.all(answers.map((answer) => answer.atGate));
      const store = createSharedStore(counters);
      const words = new Int32Array(gate);
      Atomics.add(words, 0, 1);
      Atomics.notify(words, 0);
      let count = 0;
      for (let i = 0; i < here.times; i++) if (store.decide(here.checks).admitted) count++;
      admitted.push(count);
    }
    return [...(await Promise.all(answers.map((answer) => answer.admitted))), ...admitted];
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}
