/**
 * @module gateway/runtime-disposal
 * How a runtime is let go of: closed at once (its stages and its clusters'
 * pools), or retired when a newer one replaces it, and closed once the
 * requests that still use it are done, or after a grace period.
 */
import type { Runtime } from './types';

/** What `close` returns, as a promise that never rejects, even when `close` throws at once. */
export function closing(close: () => unknown): Promise<void> {
  return Promise.resolve()
    .then(close)
    .then(
      () => undefined,
      () => undefined,
    );
}

/**
 * Closes a runtime's stages and clusters. Graceful by default (pools finish
 * what they carry); `force` destroys the pools' connections. Runs once.
 */
export function disposeRuntime(runtime: Runtime, force = false): Promise<void> {
  if (runtime.graceTimer) clearTimeout(runtime.graceTimer);
  const clusters = runtime.clusters.all();
  // Closed one by one, each as a promise: a close that throws at once (in a timer, at the end of a request) must not escape.
  if (!runtime.closing) {
    runtime.closing = Promise.all([
      ...[runtime.auth, runtime.rateLimit].map((stage) => closing(() => stage?.close?.())),
      ...clusters.map((cluster) => closing(() => cluster.close(force))),
    ]).then(() => undefined);
  } else if (force) {
    return Promise.all(clusters.map((cluster) => closing(() => cluster.close(true)))).then(() => undefined);
  }
  return runtime.closing;
}

/**
 * Marks a runtime replaced: it is closed as soon as no request uses it, or
 * after `graceMs` at the latest.
 */
export function retireRuntime(runtime: Runtime, graceMs: number): void {
  runtime.retired = true;
  if (runtime.active === 0) {
    void disposeRuntime(runtime);
    return;
  }
  runtime.graceTimer = setTimeout(() => void disposeRuntime(runtime, true), graceMs);
  runtime.graceTimer.unref();
}
