/**
 * @module workers/thread
 * One worker of a gateway: a whole Gatehouse on a thread of its own,
 * listening on the gateway's ports beside the other workers (reusePort),
 * counting in the shared counters and calling the one bookings database
 * through a port to it. The main thread starts, reloads and stops it
 * (./supervisor). Started from the compiled `thread.js`, or through tsx.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { errorText } from '../files';
import { bindGatehousePorts, createGatehouse, type Gatehouse } from '../gatehouse';
import { pgliteEngineOverPort } from '../bookings';
import { createSharedStore } from '../ratelimit';
import { createLogger } from '../telemetry';
import { folderFeed } from './feed';
import type { FromWorker, ToWorker, WorkerStart } from './messages';

/** Answers asked of the main thread, by the id of the question. */
function questions(port: MessagePort) {
  let last = 0;
  const waiting = new Map<number, (answer: ToWorker) => void>();
  return {
    ask(question: (id: number) => FromWorker): Promise<ToWorker> {
      const id = ++last;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        port.postMessage(question(id));
      });
    },
    answered(message: ToWorker & { id: number }): void {
      const resolve = waiting.get(message.id);
      waiting.delete(message.id);
      resolve?.(message);
    },
  };
}

async function run(port: MessagePort, start: WorkerStart): Promise<void> {
  const post = (message: FromWorker) => port.postMessage(message);
  const { options } = start;
  const logger = createLogger({ level: options.logLevel, fields: { worker: start.id } });
  const asked = questions(port);
  const feed = folderFeed();
  if (start.recording) feed.replay(start.recording);
  else feed.readFiles();
  const inPglite = options.bookingStore !== 'memory' && options.databaseUrl === undefined;
  let gatehouse: Gatehouse | undefined;
  let stopAsked = false;
  /** The gateway's bookings database was open when this worker reserved it: it joins workers that serve it. */
  let joinsOpenDatabase = false;
  let stopping: Promise<void> | undefined;
  // Its lines are written out as the thread ends (see telemetry/log-destination).
  const stop = (built: Gatehouse) =>
    (stopping ??= built.stop().then(() => {
      post({ type: 'stopped' });
      process.exit(0);
    }));
  // Listened to before the start: a stop asked for while it starts is one once it has.
  port.on('message', (message: ToWorker) => {
    switch (message.type) {
      case 'gathered':
      case 'reserved':
      case 'database':
        asked.answered(message);
        return;
      case 'collect':
        if (gatehouse === undefined) return;
        void gatehouse.metrics.registry
          .getMetricsAsJSON()
          .then((metrics) => post({ type: 'collected', id: message.id, metrics: metrics }));
        return;
      case 'reload':
        if (gatehouse === undefined) return;
        if (message.recording) feed.replay(message.recording);
        else feed.readFiles();
        void gatehouse.reload().then((outcome) => {
          if (outcome.ok) feed.served();
          post({ type: 'reloaded', outcome, recording: message.recording ? undefined : feed.lastRead() });
        });
        return;
      case 'stop':
        // Asked while it starts: it stops once started, the ports it bound closed with the rest.
        if (gatehouse === undefined) stopAsked = true;
        else void stop(gatehouse);
        return;
    }
  });
  try {
    const ports = await bindGatehousePorts(options, true);
    const built = await createGatehouse(
      { ...options, logger, ports, configSource: feed.source, reusePort: true },
      {
        counters: start.counters && createSharedStore(start.counters),
        bookingEngine: inPglite
          ? async () => {
              const reserved = await asked.ask((id) => ({ type: 'reserve', id }));
              if (reserved.type !== 'reserved' || reserved.error !== undefined)
                throw new Error(reserved.type === 'reserved' ? reserved.error : 'no answer');
              joinsOpenDatabase = reserved.open === true;
              return async () => {
                const answer = await asked.ask((id) => ({ type: 'database', id }));
                if (answer.type !== 'database' || answer.port === undefined)
                  throw new Error(answer.type === 'database' ? answer.error : 'no answer');
                return pgliteEngineOverPort(answer.port, options.dataDir);
              };
            }
          : undefined,
        gatherMetrics: async () => {
          const answer = await asked.ask((id) => ({ type: 'gather', id }));
          if (answer.type !== 'gathered' || answer.text === undefined)
            throw new Error(answer.type === 'gathered' ? answer.error : 'no answer');
          return answer.text;
        },
        folderWatchedElsewhere: true,
        configVersion: () => feed.version,
      },
    );
    feed.served();
    // Beside workers that serve its bookings already, it connects before it listens: a request it takes finds them as theirs.
    if (joinsOpenDatabase && built.bookingsState === 'opening') await built.openBookings().catch(() => undefined);
    const listening = await built.start();
    gatehouse = built;
    post({ type: 'listening', listening, recording: feed.lastRead(), bookings: built.bookingsState });
  } catch (err) {
    post({ type: 'failed', error: errorText(err) });
    return;
  }
  if (stopAsked) {
    void stop(gatehouse);
    return;
  }
  if (gatehouse.bookingsState === 'opening' || gatehouse.bookingsState === 'open')
    gatehouse.openBookings().then(
      () => post({ type: 'bookings-open' }),
      () => undefined,
    );
}

if (parentPort) void run(parentPort, workerData as WorkerStart);
