/**
 * @module workers/supervisor
 * The main thread of a gateway served by several workers. It starts them
 * (the first reads the config folder, the others are handed what it read),
 * holds what they share (the counters, the one PGlite), sums their metrics,
 * reloads them all alike (a reload the first refuses reaches no other),
 * replaces one that dies after a back-off, stops the gateway when they keep
 * dying, and stops them all, each draining as one process does.
 */
import type { MessagePort, Worker } from 'node:worker_threads';
import type { SourceRecording } from '../files';
import { errorText } from '../files/source';
import type { BookingsState, Listening, ReloadOutcome } from '../gatehouse';
import { watchFolder, type FolderWatcher } from '../gatehouse/folder/watch';
import { createSharedCounters, releaseAbandonedLock, type SharedCounters } from '../ratelimit/shared';
import type { Logger } from '../telemetry';
import { sharedDatabase } from './database';
import { collectAll, summedMetrics } from './gather';
import type { FromWorker, ToWorker, WorkerOptions } from './messages';
import { restartPolicy } from './restarts';
import { spawnWorker } from './spawn';

/** How long past its drain and grace a worker may take to end before it is ended, in ms. */
const STOP_MARGIN_MS = 5000;

export interface WorkersOptions {
  /** The options of every worker's Gatehouse. */
  readonly options: WorkerOptions;
  /** How many workers: 2 or more. */
  readonly count: number;
  /** The main thread's logger. */
  readonly logger: Logger;
  /** The young generation of each worker's V8 heap, in MiB; Node's default when absent. */
  readonly youngGenerationMb?: number;
}

/** A gateway's workers, serving. */
export interface Workers {
  /** Where they listen (the ports the first was given). */
  readonly listening: Listening;
  readonly bookings: BookingsState;
  /** Resolves once every worker can call the bookings database. */
  readonly bookingsOpen: Promise<void>;
  /** Reloads every worker from one reading of the folder; refused for all when the first refuses it. */
  reload(): Promise<ReloadOutcome>;
  /** Stops every worker, each draining, then what they shared. */
  stop(): Promise<void>;
  /** Resolves with why, when the gateway ended by itself: its workers kept dying. */
  readonly ended: Promise<Error>;
  /** The threads serving now. */
  threads(): Worker[];
}

/** One worker, and what is asked of it. */
interface Slot {
  readonly id: number;
  worker: Worker;
  readonly threadId: number;
  serving: boolean;
  /** Its thread has ended. */
  exited: boolean;
  /** Answers to questions asked of it, by id. */
  readonly waiting: Map<number, (message: FromWorker) => void>;
  /** Waiting for the outcome of its reload. */
  reloaded?: (message: FromWorker & { type: 'reloaded' }) => void;
}

export async function startWorkers(given: WorkersOptions): Promise<Workers> {
  const { logger, count } = given;
  let options = given.options;
  const counters: SharedCounters | undefined = options.redisUrl === undefined ? createSharedCounters() : undefined;
  const database = sharedDatabase(options, logger);
  const restarts = restartPolicy();
  const slots = new Map<number, Slot>();
  let recording: SourceRecording | undefined;
  let stopping = false;
  let lastAsked = 0;
  let reloading: Promise<unknown> = Promise.resolve();
  let bookingsOpened: () => void = () => undefined;
  const openIn = new Set<number>();
  const bookingsOpen = new Promise<void>((resolve) => (bookingsOpened = resolve));
  let endedBy: (why: Error) => void = () => undefined;
  const ended = new Promise<Error>((resolve) => (endedBy = resolve));

  const post = (slot: Slot, message: ToWorker, transfer?: readonly MessagePort[]) =>
    slot.worker.postMessage(message, transfer as never);

  /** Asks `slot` a question whose answer carries the same id. */
  function ask<T extends FromWorker>(slot: Slot, question: (id: number) => ToWorker): Promise<T> {
    const id = ++lastAsked;
    return new Promise<T>((resolve) => {
      slot.waiting.set(id, resolve as (message: FromWorker) => void);
      post(slot, question(id));
    });
  }

  async function gatherFor(from: Slot, id: number): Promise<void> {
    const serving = [...slots.values()].filter((s) => s.serving);
    const collected = await collectAll(
      serving.map(
        (slot) => async () =>
          (await ask<FromWorker & { type: 'collected' }>(slot, (cid) => ({ type: 'collect', id: cid }))).metrics,
      ),
    );
    summedMetrics(collected).then(
      (text) => post(from, { type: 'gathered', id, text }),
      (err: unknown) => post(from, { type: 'gathered', id, error: String(err) }),
    );
  }

  function connectDatabase(from: Slot, id: number): void {
    database.connect().then(
      (port) => post(from, { type: 'database', id, port }, [port]),
      (err: unknown) => post(from, { type: 'database', id, error: errorText(err) }),
    );
  }

  function onMessage(slot: Slot, message: FromWorker): void {
    switch (message.type) {
      case 'collected': {
        const answer = slot.waiting.get(message.id);
        slot.waiting.delete(message.id);
        answer?.(message);
        return;
      }
      case 'gather':
        void gatherFor(slot, message.id);
        return;
      case 'reserve':
        database.reserve().then(
          () => post(slot, { type: 'reserved', id: message.id, open: database.open }),
          (err: unknown) => post(slot, { type: 'reserved', id: message.id, error: errorText(err) }),
        );
        return;
      case 'database':
        connectDatabase(slot, message.id);
        return;
      case 'bookings-open':
        // Open for the gateway once every worker can call it.
        openIn.add(slot.id);
        if (openIn.size >= count) bookingsOpened();
        return;
      case 'reloaded':
        slot.reloaded?.(message);
        slot.reloaded = undefined;
        return;
      default:
    }
  }

  /** Starts worker `id` with the folder as `recording` holds it (none: it reads the folder); resolves once it listens. */
  function startOne(id: number): Promise<Slot & { started: FromWorker & { type: 'listening' } }> {
    const worker = spawnWorker({ id, options, counters, recording }, given.youngGenerationMb);
    // Read now: a thread that has ended has the id -1.
    const threadId = worker.threadId;
    const slot: Slot = { id, worker, threadId, serving: false, exited: false, waiting: new Map() };
    slots.set(id, slot);
    worker.once('exit', () => (slot.exited = true));
    return new Promise((resolve, reject) => {
      const early = (code: number) => reject(new Error(`worker ${id} ended (exit code ${code}) before it listened`));
      worker.once('exit', early);
      worker.on('error', (err) => logger.error({ worker: id, err }, 'a worker failed'));
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'listening') {
          worker.off('exit', early);
          worker.on('exit', (code) => void onExit(slot, code));
          slot.serving = true;
          resolve({ ...slot, started: message });
        } else if (message.type === 'failed') {
          worker.off('exit', early);
          void worker.terminate();
          slots.delete(id);
          reject(new Error(message.error));
        } else onMessage(slot, message);
      });
    });
  }

  async function onExit(slot: Slot, code: number): Promise<void> {
    slot.serving = false;
    if (counters && releaseAbandonedLock(counters, slot.threadId))
      logger.warn({ worker: slot.id }, 'a worker ended holding the counters: its last decision may be counted in part');
    if (stopping) return;
    const wait = restarts.died(Date.now());
    if (wait === undefined) {
      const why = new Error(
        `workers keep ending: ${restarts.recent} ended within a minute; the gateway stops rather than start them again`,
      );
      logger.error({ worker: slot.id, code }, why.message);
      await stopAll();
      endedBy(why);
      return;
    }
    logger.warn({ worker: slot.id, code, restartInMs: wait }, 'a worker ended: another takes its place');
    setTimeout(() => {
      if (stopping) return;
      const onRecording = recording;
      startOne(slot.id).then(
        (started) => {
          logger.info({ worker: slot.id }, 'a worker took the place of one that ended');
          // A reload while it started: it is given the folder the others serve now.
          if (recording !== onRecording && recording) post(started, { type: 'reload', recording });
        },
        (err: unknown) => {
          logger.error({ worker: slot.id, err }, 'a worker could not take the place of one that ended');
          void onExit(slot, 1);
        },
      );
    }, wait).unref();
  }

  /** Reloads `slot`, from `from` or from the file system. */
  function reloadOne(slot: Slot, from?: SourceRecording): Promise<FromWorker & { type: 'reloaded' }> {
    return new Promise((resolve) => {
      slot.reloaded = resolve;
      post(slot, { type: 'reload', recording: from });
    });
  }

  async function reloadAll(): Promise<ReloadOutcome> {
    const [first, ...rest] = [...slots.values()].filter((s) => s.serving);
    if (first === undefined) return { ok: false, problems: ['no worker is serving'] };
    const read = await reloadOne(first);
    if (!read.outcome.ok || read.recording === undefined) return read.outcome;
    recording = read.recording;
    const others = await Promise.all(rest.map((slot) => reloadOne(slot, recording)));
    const refused = others.find((o) => !o.outcome.ok);
    return refused ? refused.outcome : read.outcome;
  }

  let stopped: Promise<void> | undefined;
  let watcher: FolderWatcher | undefined;
  function stopAll(): Promise<void> {
    stopping = true;
    stopped ??= (async () => {
      watcher?.close();
      // A worker that does not end once its grace is over is ended.
      const graceMs = options.drainDelayMs + options.shutdownGraceMs + STOP_MARGIN_MS;
      await Promise.all(
        [...slots.values()]
          .filter((slot) => !slot.exited)
          .map(
            (slot) =>
              new Promise<void>((resolve) => {
                slot.worker.once('exit', () => resolve());
                setTimeout(() => void slot.worker.terminate(), graceMs).unref();
                post(slot, { type: 'stop' });
              }),
          ),
      );
      await database.close();
    })();
    return stopped;
  }

  // The first reads the folder, and binds the ports the others share.
  let first: Awaited<ReturnType<typeof startOne>>;
  try {
    first = await startOne(1);
  } catch (err) {
    await database.close();
    throw err;
  }
  recording = first.started.recording;
  const { listening } = first.started;
  options = {
    ...options,
    port: listening.port,
    grpcPort: listening.grpcPort ?? options.grpcPort,
    httpsPort: listening.httpsPort ?? options.httpsPort,
  };
  try {
    await Promise.all(Array.from({ length: count - 1 }, (_, i) => startOne(i + 2)));
  } catch (err) {
    await stopAll();
    throw err;
  }
  const reload = () => {
    const run = reloading.then(reloadAll);
    reloading = run.catch(() => undefined);
    return run;
  };
  // One watcher for all: each worker reading the folder on its own would read it at its own moment.
  if (options.watch)
    watcher = watchFolder(options.configDir, options.reloadDebounceMs, () => {
      void reload().catch((err: unknown) => logger.error({ err }, 'config reload failed'));
    });
  return {
    listening,
    bookings: first.started.bookings,
    bookingsOpen,
    reload,
    stop: stopAll,
    ended,
    threads: () => [...slots.values()].filter((s) => s.serving).map((s) => s.worker),
  };
}
