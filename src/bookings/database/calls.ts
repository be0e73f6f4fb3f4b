/**
 * @module bookings/database/calls
 * Every call to the bookings database: within its deadline (a write until it
 * is on disk), timed and counted, traced when its request is, and its
 * outages logged once each way.
 */
import { HttpError } from '../../http';
import type { Logger } from '../../telemetry';
import type { ChildSpan, TraceParent } from '../../tracing';
import { IdempotencyKeyInFlight, IdempotencyKeyReused } from '../idempotency';
import type { Engine, Sql } from './engine';
import { DatabaseUnavailableError } from './errors';

/** How a call failed: the database did not answer in time, could not be reached, or the call itself failed. */
export type DatabaseFailure = 'timeout' | 'unavailable' | 'error';

/** What the calls of one database are made with. */
export interface DatabaseCallsOptions {
  readonly engine: Engine;
  /** The schema of the tables, named in the spans. */
  readonly schema: string;
  /** The engine and where it is, as the logs name it. */
  readonly where: string;
  readonly logger: Pick<Logger, 'info' | 'warn'>;
  /** Hears every call: its operation, duration and failure. */
  readonly onCall?: (operation: string, seconds: number, failure?: DatabaseFailure) => void;
}

/** The calls of one database, and whether it answers. */
export interface DatabaseCalls {
  /** Runs `work` in a session within `ms`; a `write` resolves once it is on disk, within what is left of `ms`. */
  readonly call: <T>(
    operation: string,
    work: (sql: Sql) => Promise<T>,
    write: boolean,
    ms: number,
    trace?: TraceParent,
  ) => Promise<T>;
  /** The database is out of reach, for `reason`: logged the first time. */
  readonly lost: (reason: string) => void;
  /** The database answers: logged when it was out of reach. */
  readonly regained: () => void;
  /** Why the database is out of reach, while it is. */
  readonly down: string | undefined;
}

/** The calls to the database on `options.engine`. */
export function databaseCalls(options: DatabaseCallsOptions): DatabaseCalls {
  const { engine, schema, where, logger } = options;
  let down: string | undefined;

  const lost = (reason: string) => {
    if (down === undefined)
      logger.warn(
        { database: where, err: reason },
        'the bookings database is unavailable: bookings answer 503 until it is back',
      );
    down = reason;
  };
  const regained = () => {
    if (down !== undefined) logger.info({ database: where }, 'the bookings database answers again');
    down = undefined;
  };

  /** A call's span, when its request is traced: PostgreSQL's conventions, PGlite being PostgreSQL too. */
  function openSpan(trace: TraceParent, operation: string): ChildSpan {
    const span = trace.child(`${operation} ${schema}.bookings`, 'client');
    if (span.recording) {
      span.set('db.system.name', 'postgresql');
      span.set('db.namespace', schema);
      span.set('db.collection.name', 'bookings');
      span.set('db.operation.name', operation);
      span.set('gatehouse.database.engine', engine.name);
    }
    return span;
  }

  async function call<T>(
    operation: string,
    work: (sql: Sql) => Promise<T>,
    write: boolean,
    ms: number,
    trace?: TraceParent,
  ): Promise<T> {
    const started = performance.now();
    const span = trace === undefined ? null : openSpan(trace, operation);
    try {
      const result = await engine.session(work, ms);
      if (write) await engine.persisted(Math.max(1, Math.round(ms - (performance.now() - started))));
      options.onCall?.(operation, (performance.now() - started) / 1000);
      regained();
      span?.end();
      return result;
    } catch (err) {
      // A key used again is the database answering as it should: the request is what is refused.
      // So is a booking refused by the checks a new one must pass (see CreateOptions.admit).
      const refused =
        err instanceof IdempotencyKeyReused || err instanceof IdempotencyKeyInFlight || err instanceof HttpError;
      const failure: DatabaseFailure | undefined =
        err instanceof DatabaseUnavailableError
          ? err.kind === 'timeout'
            ? 'timeout'
            : 'unavailable'
          : refused
            ? undefined
            : 'error';
      options.onCall?.(operation, (performance.now() - started) / 1000, failure);
      if (err instanceof DatabaseUnavailableError) lost(err.reason);
      if (span !== null) {
        if (failure !== undefined) span.fail(failure);
        span.end();
      }
      throw err;
    }
  }

  return {
    call,
    lost,
    regained,
    get down() {
      return down;
    },
  };
}
