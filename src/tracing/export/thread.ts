/**
 * @module tracing/export/thread
 * The exporter the batch processor is given: it serializes each batch with
 * the official serializer of the protocol and hands the body to the export
 * thread (./worker), whose official transport sends it, then reports how
 * the export ended. The thread starts with the exporter, never keeps the
 * process alive, and is started again at the next batch if it ends; a
 * batch it took with it is a failed export.
 */
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../../threads';
import { batchSerializer, type ExporterSettings } from './exporter';
import type { ExportThreadAsk, FromExportThread, ToExportThread } from './messages';

/** The export thread, from where this file runs. */
function startExportThread(settings: ExporterSettings): Worker {
  return startThread(join(__dirname, 'worker'), { workerData: settings, name: 'gatehouse trace export' });
}

/** Exports on the export thread with the official exporter of `settings`. */
export class ThreadExporter implements SpanExporter {
  private thread: Worker | null = null;
  private readonly waiting = new Map<number, (reply: FromExportThread) => void>();
  private nextId = 1;
  private readonly serialize: ReturnType<typeof batchSerializer>;
  private readonly core = require('@opentelemetry/core') as typeof import('@opentelemetry/core');

  constructor(private readonly settings: ExporterSettings) {
    this.serialize = batchSerializer(settings.protocol);
    // Started now, while the gateway starts, rather than at the first batch under load.
    this.started();
  }

  private started(): Worker {
    if (this.thread !== null) return this.thread;
    const thread = startExportThread(this.settings);
    thread.unref();
    thread.on('message', (reply: FromExportThread) => {
      const done = this.waiting.get(reply.id);
      if (done === undefined) return;
      this.waiting.delete(reply.id);
      done(reply);
    });
    thread.on('error', (err) => this.lost(thread, `the export thread failed: ${err.message}`));
    thread.on('exit', (code) => this.lost(thread, `the export thread ended (exit code ${code})`));
    return (this.thread = thread);
  }

  /** `thread` is gone: what it was asked fails, and the next batch starts another. */
  private lost(thread: Worker, why: string): void {
    if (this.thread !== thread) return;
    this.thread = null;
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const [id, done] of waiting) done({ id, ok: false, error: why });
  }

  private ask(message: ExportThreadAsk, done: (reply: FromExportThread) => void): void {
    const id = this.nextId++;
    const thread = this.started();
    this.waiting.set(id, done);
    thread.postMessage({ ...message, id } satisfies ToExportThread);
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const { ExportResultCode } = this.core;
    let body: Uint8Array | undefined;
    try {
      body = this.serialize(spans);
    } catch (err) {
      return done({ code: ExportResultCode.FAILED, error: err as Error });
    }
    if (body === undefined)
      return done({ code: ExportResultCode.FAILED, error: new Error('the spans could not be serialized') });
    // Copied to the thread, never moved: moving a buffer detaches it, and the first buffer detached in a
    // process makes V8 check every typed array access for it from then on, the request path's included.
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : body.slice();
    this.ask({ batch: { body: own, spans: spans.length } }, (reply) =>
      done(
        reply.ok
          ? { code: ExportResultCode.SUCCESS }
          : { code: ExportResultCode.FAILED, error: new Error(reply.error) },
      ),
    );
  }

  forceFlush(): Promise<void> {
    if (this.thread === null) return Promise.resolve();
    return new Promise((resolve) => this.ask({ flush: true }, () => resolve()));
  }

  /** Stops the exporter on the thread, then the thread. */
  shutdown(): Promise<void> {
    const thread = this.thread;
    if (thread === null) return Promise.resolve();
    return new Promise((resolve) =>
      this.ask({ shutdown: true }, () => {
        this.thread = null;
        void thread.terminate().then(() => resolve());
      }),
    );
  }
}
