/**
 * @module gatehouse/folder/worker
 * The worker thread that checks a large config folder off the event loop:
 * it takes the texts file by file, checks them (./check), and sends the
 * result back in parts (./transfer). Started by ./off-thread, from the
 * compiled `worker.js`, or through tsx from the sources.
 */
import { parentPort } from 'node:worker_threads';
import { errorText } from '../../files';
import { checkTexts } from './check';
import type { FolderTexts } from './read';
import { partsOf, type Part } from './transfer';

/** What the event loop sends: the texts, one file a message, then the end. */
export type TextMessage =
  | { settings: Pick<FolderTexts, 'annotationDomain' | 'ambassadorId'> }
  | { kind: 'records' | 'limits'; file: { file: string; text: string } }
  | { kind: 'users' | 'bookings'; file: { file: string; text: string } }
  | { end: true }
  /** The part before was taken: the next one, please. */
  | { more: true };

/** What the worker sends back: the parts of the result, or why it could not check. */
export type ResultMessage = Part | { failed: string };

/** Takes the texts from `port`, checks them once they are all in, and answers on it. */
export function serveCheck(port: NonNullable<typeof parentPort>): void {
  const texts: FolderTexts = {};
  let parts: Iterator<Part> | undefined;
  const post = (message: ResultMessage) => port.postMessage(message);
  const sendNext = () => {
    try {
      const next = parts!.next();
      if (!next.done) post(next.value);
    } catch (err) {
      post({ failed: errorText(err) });
    }
  };
  port.on('message', (message: TextMessage) => {
    if ('more' in message) sendNext();
    else if ('settings' in message) Object.assign(texts, message.settings);
    else if ('kind' in message) {
      if (message.kind === 'records' || message.kind === 'limits') (texts[message.kind] ??= []).push(message.file);
      else texts[message.kind] = message.file;
    } else if ('end' in message) {
      parts = partsOf(checkTexts(texts));
      sendNext();
    }
  });
}

if (parentPort) serveCheck(parentPort);
