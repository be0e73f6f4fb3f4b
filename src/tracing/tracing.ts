/**
 * @module tracing/tracing
 * A Gatehouse's tracing: off, or running with the settings it was last
 * given. A reload that brings other settings (a TracingService added,
 * changed or removed) switches to new tracing at once; the tracing before
 * it exports what it holds and stops in the background. OpenTelemetry is
 * loaded the first time tracing is on, never while it stays off.
 */
import type { ExportCounts } from './export';
import type { RunningTracing } from './provider';
import { sameSettings, type TracingSettings } from './settings';
import type { GatewayTracing, RequestTracer } from './types';

/**
 * How long tracing that was replaced still takes the spans of the requests
 * (and the reload) that began with it, before it exports them and stops.
 */
const RETIRE_GRACE_MS = 10_000;

export interface TracingOptions {
  /** Where to start from: null is off. */
  readonly settings: TracingSettings | null;
  /** `service.version` of every span. */
  readonly version: string;
}

/** Tracing, on or off, and the handles that change and stop it. */
export interface Tracing extends GatewayTracing {
  /** The tracer of requests, or null while tracing is off. */
  readonly requests: RequestTracer | null;
  /** The settings it runs with, or null while off. */
  readonly settings: TracingSettings | null;
  /** Switches to `settings` (null: off); the same settings again change nothing. Throws when they cannot be built. */
  configure(settings: TracingSettings | null): void;
  /** What became of the spans so far: exported, dropped and why. */
  counts(): Readonly<ExportCounts>;
  /** Exports what waits now. */
  flush(): Promise<void>;
  /** Exports what waits, bounded by the export timeout, and stops; tracing is off after it. */
  shutdown(): Promise<void>;
}

/** Builds a Gatehouse's tracing. Throws when `settings` cannot be built. */
export function createTracing(options: TracingOptions): Tracing {
  const counts: ExportCounts = { exported: 0, queueFull: 0, exportFailed: 0 };
  let running: RunningTracing | null = null;
  let settings: TracingSettings | null = null;
  const stopping = new Set<Promise<void>>();
  /** Tracing replaced, still taking the spans of requests that began with it, until its grace ends. */
  const retiring = new Map<RunningTracing, NodeJS.Timeout>();

  function stop(old: RunningTracing): void {
    retiring.delete(old);
    // A silent collector holds a stop up no longer than one export may take.
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, old.timeoutMs)));
    const done = Promise.race([old.shutdown().catch(() => undefined), bound]).finally(() => clearTimeout(timer));
    stopping.add(done);
    void done.then(() => stopping.delete(done));
  }

  function retire(old: RunningTracing): void {
    const timer = setTimeout(stop, RETIRE_GRACE_MS, old);
    timer.unref();
    retiring.set(old, timer);
  }

  // A plain property, not a getter: the gateway reads it once a request.
  const tracing: { -readonly [K in keyof Tracing]: Tracing[K] } = {
    requests: null,
    get settings() {
      return settings;
    },
    configure(next) {
      if (sameSettings(settings, next)) return;
      let started: RunningTracing | null = null;
      if (next !== null) {
        const { startTracing } = require('./provider') as typeof import('./provider');
        started = startTracing(next, counts, options.version);
      }
      const old = running;
      running = started;
      tracing.requests = started === null ? null : started.requests;
      settings = next;
      if (old !== null) retire(old);
    },
    counts: () => ({ ...counts }),
    flush: () => running?.flush() ?? Promise.resolve(),
    async shutdown() {
      const old = running;
      running = null;
      tracing.requests = null;
      settings = null;
      if (old !== null) stop(old);
      for (const [retired, timer] of retiring) {
        clearTimeout(timer);
        stop(retired);
      }
      await Promise.all([...stopping]);
    },
  };
  tracing.configure(options.settings);
  return tracing;
}
