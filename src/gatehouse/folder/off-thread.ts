/**
 * @module gatehouse/folder/off-thread
 * Checks a folder's texts on a worker thread, so that the event loop goes on
 * answering requests while a large config is parsed and validated (a
 * 6 MB records file takes seconds). The thread is started for one check and
 * ends with it, taking the memory of the parse with it.
 */
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { errorText } from '../../files';
import { startThread } from '../../threads';
import type { CheckedFolder } from './check';
import type { FolderTexts } from './read';
import { createAssembler } from './transfer';
import type { ResultMessage, TextMessage } from './worker';

/**
 * The heap the checking thread may grow to, in MiB: what the largest
 * folder the file size limit lets through takes (an 8 MiB file of 60 000
 * Mappings), with room to spare. Past it the thread ends, and the check
 * is a problem, rather than the process growing until the system ends it.
 */
export const CHECK_HEAP_MB = 512;

/** How to start the checking thread from where this file runs, its heap held to `heapMb`. */
function startWorker(heapMb: number): Worker {
  return startThread(join(__dirname, 'worker'), { resourceLimits: { maxOldGenerationSizeMb: heapMb } });
}

/** Why the thread failed, in words: running out of its heap is said as such. */
function threadFailure(err: Error, heapMb: number): string {
  if ((err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY')
    return `it needs more than the ${heapMb} MiB the check may take: split the files, or make them simpler`;
  return `the checking thread failed: ${errorText(err)}`;
}

/** The texts as messages: one a file, so that no one copy holds the event loop long. */
function* textMessages(texts: FolderTexts): Generator<TextMessage> {
  yield { settings: { annotationDomain: texts.annotationDomain, ambassadorId: texts.ambassadorId } };
  for (const file of texts.records ?? []) yield { kind: 'records', file };
  for (const file of texts.limits ?? []) yield { kind: 'limits', file };
  if (texts.users) yield { kind: 'users', file: texts.users };
  if (texts.bookings) yield { kind: 'bookings', file: texts.bookings };
  yield { end: true };
}

/**
 * Checks `texts` on a worker thread. Rejects when the thread fails (it could
 * not start, it ran out of memory), or once `signal` aborts: the thread is
 * ended then, however long its check would still take.
 */
export function checkOffThread(
  texts: FolderTexts,
  signal?: AbortSignal,
  heapMb: number = CHECK_HEAP_MB,
): Promise<CheckedFolder> {
  return new Promise<CheckedFolder>((resolve, reject) => {
    if (signal?.aborted) {
      reject(new Error(`the check was called off: ${errorText(signal.reason)}`));
      return;
    }
    let worker: Worker;
    try {
      worker = startWorker(heapMb);
    } catch (err) {
      reject(new Error(`the checking thread did not start: ${errorText(err)}`));
      return;
    }
    const assembler = createAssembler();
    let settled = false;
    const onAbort = () => settle(() => reject(new Error(`the check was called off: ${errorText(signal!.reason)}`)));
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      outcome();
      void worker.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (message: ResultMessage) => {
      if ('failed' in message) return settle(() => reject(new Error(message.failed)));
      const checked = assembler.add(message);
      if (checked) settle(() => resolve(checked));
      else worker.postMessage({ more: true });
    });
    worker.on('error', (err) => settle(() => reject(new Error(threadFailure(err, heapMb)))));
    worker.on('exit', (code) => settle(() => reject(new Error(`the checking thread stopped (exit code ${code})`))));
    try {
      for (const message of textMessages(texts)) worker.postMessage(message);
    } catch (err) {
      settle(() => reject(new Error(`the texts could not be handed to the checking thread: ${errorText(err)}`)));
    }
  });
}
