/**
 * @module tracing/export/worker
 * The export thread: the official OTLP exporter's transport, sending the
 * batches the gateway's thread serialized. Talking to the collector happens
 * here, on an isolate of its own, so that the HTTP or gRPC client code of an
 * export never shares compiled code with the streams that serve requests.
 */
import { ExportResultCode } from '@opentelemetry/core';
import { parentPort, workerData } from 'node:worker_threads';
import { batchSender, type BatchSender, type ExporterSettings } from './exporter';
import type { FromExportThread, ToExportThread } from './messages';

/** The failure's words, without its stack. */
function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function serve(port: NonNullable<typeof parentPort>, settings: ExporterSettings): void {
  let sender: BatchSender | undefined;
  let unbuilt = '';
  try {
    sender = batchSender(settings);
  } catch (err) {
    unbuilt = `the exporter could not be built: ${reason(err)}`;
  }
  const answer = (id: number, ok: boolean, error?: string) =>
    port.postMessage((ok ? { id, ok } : { id, ok, error }) satisfies FromExportThread);
  const settle = (id: number, done: Promise<void>) =>
    void done.then(
      () => answer(id, true),
      (err: unknown) => answer(id, false, reason(err)),
    );

  port.on('message', (message: ToExportThread) => {
    const { id } = message;
    if (sender === undefined) return answer(id, 'shutdown' in message, unbuilt);
    if ('batch' in message) {
      try {
        sender.export(message.batch, (result) =>
          answer(
            id,
            result.code === ExportResultCode.SUCCESS,
            result.error === undefined ? 'the collector did not take them' : reason(result.error),
          ),
        );
      } catch (err) {
        answer(id, false, reason(err));
      }
    } else if ('flush' in message) settle(id, sender.forceFlush());
    else settle(id, sender.shutdown());
  });
}

if (parentPort !== null) serve(parentPort, workerData as ExporterSettings);
