/**
 * @module test/gatehouse/support/running
 * A whole Gatehouse for tests: a temporary copy of the demo config folder to
 * change at will, a Gatehouse started on free ports over it, its log lines
 * captured, and a few request helpers.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createGatehouse, type Gatehouse, type GatehouseOptions } from '../../../src/gatehouse';
import { createLogger } from '../../../src/telemetry';
import { captureLog, type LogCapture } from '../../telemetry/log-capture';

/** The demo config folder, as `npm start` uses it. */
export const DEMO_CONFIG = join(__dirname, '..', '..', '..', 'config');

/** A config folder of a test's own, removed by `remove()`. */
export interface TempConfig {
  readonly dir: string;
  /** The text of a file of the folder. */
  read(name: string): string;
  /** Replaces a file whole, as editors do: written aside, then renamed over it (its folder made if need be). */
  write(name: string, text: string): void;
  /** Deletes a file of the folder. */
  unlink(name: string): void;
  remove(): void;
}

/** Copies the demo config (or `from`) into a fresh temporary folder. */
export function copyConfig(from: string = DEMO_CONFIG): TempConfig {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-config-'));
  cpSync(from, dir, { recursive: true });
  let n = 0;
  return {
    dir,
    read: (name) => readFileSync(join(dir, name), 'utf8'),
    write(name, text) {
      // Outside the folder, so that the watcher sees only the rename.
      const aside = join(tmpdir(), `gatehouse-write-${process.pid}-${n++}`);
      writeFileSync(aside, text);
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      renameSync(aside, join(dir, name));
    },
    unlink: (name) => unlinkSync(join(dir, name)),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A started Gatehouse. */
export interface Running {
  readonly gatehouse: Gatehouse;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every line it logged. */
  readonly log: LogCapture;
  stop(): Promise<void>;
}

/**
 * Builds and starts a Gatehouse on 127.0.0.1 with a free HTTP port, no gRPC
 * server, no folder watching and no drain delay at stop unless asked,
 * logging into a capture.
 */
export async function startGatehouse(options: GatehouseOptions): Promise<Running> {
  const log = captureLog();
  const gatehouse = await createGatehouse({
    host: '127.0.0.1',
    port: 0,
    grpcPort: false,
    watch: false,
    drainDelayMs: 0,
    logger: createLogger({ destination: log, level: 'info' }),
    // Bookings in memory unless the test names a database: the default folder, beside the config, would be one for every test at once.
    ...(options.dataDir === undefined && options.databaseUrl === undefined ? { bookingStore: 'memory' as const } : {}),
    ...options,
  });
  const listening = await gatehouse.start().catch(async (err: unknown) => {
    await gatehouse.stop();
    throw err;
  });
  // It serves while its bookings database opens: the tests begin once bookings answer too (or failed to open).
  if (gatehouse.bookingsState === 'opening') await gatehouse.openBookings().catch(() => undefined);
  return { gatehouse, url: listening.url, log, stop: () => gatehouse.stop() };
}

/** The `Authorization` value of HTTP Basic credentials. */
export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** The demo user alice, with her password. */
export const ALICE = basic('alice', 'wonderland');

/**
 * Calls `check` until it returns something other than undefined, pausing
 * `intervalMs` between calls. For states that change with nothing to wait
 * on (a Redis connection seen dropped). It waits as long as the state takes
 * by default: a loaded machine makes a reload or a reconnection take longer
 * than any bound chosen here, and the test's own timeout ends a wait for
 * what never comes. `timeoutMs` is for a test about how long something
 * takes, which should say so.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  what: string,
  timeoutMs = Infinity,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
