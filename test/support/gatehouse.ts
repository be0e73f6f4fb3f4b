/**
 * @module test/support/gatehouse
 * A whole Gatehouse for tests, in this process: started on free ports over a
 * config folder, its log lines captured.
 */
import { createGatehouse, type Gatehouse, type GatehouseOptions } from '../../src/gatehouse';
import { createLogger } from '../../src/telemetry';
import { captureLog, type LogCapture } from './log-capture';

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
  return { gatehouse, url: listening.url, log, stop: () => gatehouse.stop() };
}
