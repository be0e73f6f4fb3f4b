/**
 * @module test/support/echo-thread
 * A thread body in TypeScript: it answers with what it was started with,
 * through a type annotation that only a TypeScript loader can read.
 */
import { parentPort, workerData } from 'node:worker_threads';

const started: { greeting: string } = workerData as { greeting: string };
parentPort?.postMessage(`${started.greeting}, from a thread`);
