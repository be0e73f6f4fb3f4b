/**
 * @module test/support/reloads
 * Waiting for a watched Gatehouse to reload, and a loop of requests that runs
 * while it does, counting every answer that is not the expected one.
 */
import { inspect } from 'node:util';
import type { LogCapture } from './log-capture';

const APPLIED = 'config reloaded';
const APPLIED_EMPTY = 'config reloaded with no routes: every request is answered 404';
const REFUSED = 'config reload refused; the previous config keeps serving';

/** A reload as the log tells it. */
export interface ReloadLine {
  applied: boolean;
  problems: string[];
  /** Its place in the log: wait for the next one from here. */
  index: number;
}

/** Resolves with the first reload logged at or after line `from` (0-based). */
export async function nextReload(log: LogCapture, from: number): Promise<ReloadLine> {
  for (let i = from; ; i++) {
    const lines = await log.waitFor(i + 1);
    const msg = lines[i].msg;
    if (msg === APPLIED || msg === APPLIED_EMPTY || msg === REFUSED) {
      return { applied: msg !== REFUSED, problems: (lines[i].problems as string[] | undefined) ?? [], index: i + 1 };
    }
  }
}

/**
 * Makes a change and resolves once a reload after it shows what `settled`
 * looks for. Reloads of earlier changes may still come in first: they are
 * passed over. It waits as long as the reload takes: a loaded machine makes
 * a reload take longer than any bound chosen here, and the test's own
 * timeout ends a wait for what never comes (`timeoutMs` is for a test about
 * how long a reload takes, which should say so).
 */
export async function changeAndAwait(
  log: LogCapture,
  change: () => void,
  settled: (reload: ReloadLine) => boolean | Promise<boolean>,
  timeoutMs = Infinity,
): Promise<ReloadLine> {
  let from = log.lines.length;
  change();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    if (timeoutMs === Infinity) return;
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `no reload with the expected outcome within ${timeoutMs} ms; the log:\n${log.raw.slice(-8).join('\n')}`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    for (;;) {
      const reload = await Promise.race([nextReload(log, from), expired]);
      if (await settled(reload)) return reload;
      from = reload.index;
    }
  } finally {
    clearTimeout(timer);
  }
}

/** One request of a loop and the status it must get. */
export interface LoopRequest {
  path: string;
  headers?: Record<string, string>;
  status?: number;
}

/** A loop of requests under way. */
export interface RequestLoop {
  /** Stops it and resolves with how many requests it made and every unexpected answer. */
  stop(): Promise<{ count: number; failures: string[] }>;
}

/**
 * Sends `requests` round and round to `base`, `concurrency` at a time, until
 * stopped. Any other status than the expected one (200 by default) or any
 * network error is a failure.
 */
export function requestLoop(base: string, requests: readonly LoopRequest[], concurrency = 2): RequestLoop {
  let running = true;
  let count = 0;
  const failures: string[] = [];
  async function worker(offset: number): Promise<void> {
    for (let i = offset; running; i++) {
      const r = requests[i % requests.length];
      count++;
      try {
        const res = await fetch(base + r.path, { headers: r.headers });
        await res.arrayBuffer();
        if (res.status !== (r.status ?? 200)) failures.push(`${r.path}: ${res.status}`);
      } catch (err) {
        const cause = (err as { cause?: unknown }).cause;
        failures.push(`${r.path}: ${(err as Error).message} ${cause === undefined ? '' : inspect(cause)}`);
      }
    }
  }
  const workers = Array.from({ length: concurrency }, (_, i) => worker(i));
  return {
    async stop() {
      running = false;
      await Promise.all(workers);
      return { count, failures };
    },
  };
}
