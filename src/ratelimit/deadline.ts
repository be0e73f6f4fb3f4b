/**
 * @module ratelimit/deadline
 * The deadline of a rate-limit decision, as this process's attention: the
 * time its event loop was free to read the answer. A gateway busy with a
 * burst does not hold its own busy time against Redis or the rate-limit
 * service (nor does a machine that left it without a core): a timer that
 * fires late never fails an answer that came meanwhile, nor one that its
 * peer, starved alike, was about to send. A peer that really does not
 * answer still fails it within the deadline while the process is free.
 */

/**
 * Longest step of a deadline's timer. A step that fires late shows that the
 * event loop was held up: it credits at most twice its length.
 */
const STEP_MS = 5;

/**
 * However held up the process is, a decision waits at most this beyond its
 * deadline; past it, the peer is told, it must count nothing.
 */
export const HELD_UP_MAX_MS = 1000;

/** Monotonic milliseconds: deadlines must not move with the wall clock. */
export const monotonicNow = (): number => performance.now();

/** A running deadline; `stop()` once answered. */
export interface AttentionDeadline {
  stop(): void;
}

/**
 * Runs a deadline in steps: after each step, once the I/O already received
 * has been read (the poll phase runs before setImmediate), calls `judge`
 * with the attention credited so far. `judge` fails what is due and returns
 * the attention the earliest open wait still needs, or Infinity when none is
 * open (the deadline then stops).
 */
export function attentionDeadline(judge: (credited: number) => number): AttentionDeadline {
  let credited = 0;
  let armedAt = 0;
  let step = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  function arm(need: number): void {
    if (stopped || !(need < Infinity)) return;
    armedAt = monotonicNow();
    step = Math.min(STEP_MS, Math.max(1, need));
    timer = setTimeout(stepped, step);
  }
  function stepped(): void {
    credited += Math.min(monotonicNow() - armedAt, 2 * step);
    setImmediate(judged);
  }
  function judged(): void {
    if (!stopped) arm(judge(credited));
  }

  arm(judge(0));
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Settles like the promise `ask` returns, or rejects with what `giveUp`
 * returns once `budgetMs` of attention have passed without an answer (at
 * most `budgetMs + HELD_UP_MAX_MS` of time), or once `callerGone` says the
 * caller has left. `ask` is given a `gone()` that is true from then on, so
 * that what it asked for can be undone.
 */
export function withinDeadline<T>(
  budgetMs: number,
  ask: (gone: () => boolean) => Promise<T>,
  giveUp: () => Error,
  callerGone?: () => boolean,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const capAt = monotonicNow() + budgetMs + HELD_UP_MAX_MS;
    const deadline = attentionDeadline((credited) => {
      if (settled) return Infinity;
      const left = Math.min(budgetMs - credited, capAt - monotonicNow());
      if (left > 0 && !callerGone?.()) return left;
      settled = true;
      reject(giveUp());
      return Infinity;
    });
    ask(() => settled).then(
      (value) => {
        if (settled) return;
        settled = true;
        deadline.stop();
        resolve(value);
      },
      (err: unknown) => {
        if (settled) return;
        settled = true;
        deadline.stop();
        reject(err);
      },
    );
  });
}
