/**
 * @module telemetry/destination-registry
 * The log destinations this process made, as the rest of it knows them: which
 * gather lines themselves, and which must write what waits at exit.
 */

/** A destination that can write what waits on the spot. */
interface ExitFlushed {
  flushSync(): void;
}

/** Destinations made here: a writer may hand them one line at a time, since they gather lines themselves. */
const gathering = new WeakSet<object>();

/** Marks `destination` as one that gathers the lines it is given into chunks itself. */
export function markGathering(destination: object): void {
  gathering.add(destination);
}

/** Whether `stream` is a log destination made here, which gathers the lines it is given into chunks itself. */
export function gathersLines(stream: unknown): boolean {
  return typeof stream === 'object' && stream !== null && gathering.has(stream);
}

/**
 * The destinations whose lines are written at exit here: pino's own exit
 * hook is only for destinations it made asynchronous. Held weakly: a
 * destination dropped is not kept for the hook.
 */
const writtenAtExit = new Set<WeakRef<ExitFlushed>>();
let exitHooked = false;

/** Has `destination` write what waits when the process exits. */
export function writeAtExit(destination: ExitFlushed): void {
  for (const ref of writtenAtExit) if (ref.deref() === undefined) writtenAtExit.delete(ref);
  writtenAtExit.add(new WeakRef(destination));
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const ref of writtenAtExit) ref.deref()?.flushSync();
  });
}
