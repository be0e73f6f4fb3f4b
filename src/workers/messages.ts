/**
 * @module workers/messages
 * What the main thread of a gateway and its workers say to each other.
 * Everything here is plain data, cloned by postMessage; a connection to
 * the bookings database goes as a transferred MessagePort.
 */
import type { MessagePort } from 'node:worker_threads';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { SourceRecording } from '../files';
import type { BookingsState, Listening, ReloadOutcome, ResolvedOptions } from '../gatehouse';
import type { SharedCounters } from '../ratelimit';

/** The options a worker builds its Gatehouse with: those of code alone (a logger, a source, a signal) left out. */
export type WorkerOptions = Omit<ResolvedOptions, 'logger' | 'configSource' | 'signal' | 'modules' | 'ports'>;

/** What a worker starts with (its `workerData`). */
export interface WorkerStart {
  /** 1, 2...: on every line it logs. A replacement takes the id of the worker it replaces. */
  readonly id: number;
  readonly options: WorkerOptions;
  /** The counters every worker counts in; none with Redis. */
  readonly counters?: SharedCounters;
  /** The folder as the first worker read it: read from the file system when absent. */
  readonly recording?: SourceRecording;
}

/** The metrics of one worker, as prom-client's AggregatorRegistry sums them. */
export type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];

/** What the main thread tells a worker. */
export type ToWorker =
  /** Reload: from `recording`, or from the file system, keeping what was read. */
  | { readonly type: 'reload'; readonly recording?: SourceRecording }
  | { readonly type: 'stop' }
  /** Send your metrics. */
  | { readonly type: 'collect'; readonly id: number }
  /** The metrics of every worker, summed, that you asked for. */
  | { readonly type: 'gathered'; readonly id: number; readonly text?: string; readonly error?: string }
  /** The bookings database is reserved for the gateway (and open already, or not yet), or why it cannot be. */
  | { readonly type: 'reserved'; readonly id: number; readonly open?: boolean; readonly error?: string }
  /** The connection to the bookings database you asked for. */
  | { readonly type: 'database'; readonly id: number; readonly port?: MessagePort; readonly error?: string };

/** What a worker tells the main thread. */
export type FromWorker =
  | {
      readonly type: 'listening';
      readonly listening: Listening;
      readonly recording: SourceRecording;
      readonly bookings: BookingsState;
    }
  | { readonly type: 'failed'; readonly error: string }
  | { readonly type: 'bookings-open' }
  /** A reload's outcome; with what was read, when it read the file system and applied it. */
  | { readonly type: 'reloaded'; readonly outcome: ReloadOutcome; readonly recording?: SourceRecording }
  | { readonly type: 'collected'; readonly id: number; readonly metrics: WorkerMetrics }
  /** Asks for every worker's metrics, summed. */
  | { readonly type: 'gather'; readonly id: number }
  /** Asks for the bookings database to be reserved (its data folder locked). */
  | { readonly type: 'reserve'; readonly id: number }
  /** Asks for a connection to the bookings database. */
  | { readonly type: 'database'; readonly id: number }
  | { readonly type: 'stopped' };
