/**
 * @module bookings/database/postgres
 * PostgreSQL through `pg`: a pool of connections to the server a
 * `DATABASE_URL` names, every call on one connection within its deadline,
 * and a connection that missed it dropped rather than reused.
 */
import type { PoolClient } from 'pg';
import { connectionSql, withDeadline, type Engine, type Row } from './engine';
import { asUnavailable, DatabaseUnavailableError, errorText, isUnavailable, redact } from './errors';

/** How many connections a process keeps open at most: pg's default. */
export const DEFAULT_POOL_SIZE = 10;

/**
 * Throws, naming `name` and never quoting the value (it may hold a
 * password), unless `url` is a `postgres://` or `postgresql://` URL.
 */
export function checkDatabaseUrl(url: string, name: string): void {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  if (scheme !== 'postgres' && scheme !== 'postgresql') {
    throw new Error(
      `${name} must be a postgres:// or postgresql:// URL${scheme ? `, not ${scheme}://` : ''}: write postgres://user:password@host:5432/database`,
    );
  }
  try {
    new URL(url);
  } catch {
    throw new Error(
      `${name} is not a URL that can be read: write postgres://user:password@host:5432/database (a password with @, : or / percent-encoded)`,
    );
  }
}

/** `url` without its password, for logs: `postgres://gatehouse@db:5432/gatehouse`. */
export function describeDatabaseUrl(url: string): string {
  const parsed = new URL(url);
  parsed.password = '';
  parsed.search = '';
  return parsed.toString();
}

export interface PostgresOptions {
  url: string;
  /** The longest a statement may run on the server, in ms: statement_timeout. */
  statementTimeoutMs: number;
  /** Connections kept at most. Default {@link DEFAULT_POOL_SIZE}. */
  poolSize?: number;
}

/** Connects to PostgreSQL lazily: the first call opens the first connection. */
export function createPostgresEngine(options: PostgresOptions): Engine {
  const parsed = new URL(options.url);
  // libpq's URLs may give it as a parameter too: `?password=...`.
  const password = decodeURIComponent(parsed.password) || parsed.searchParams.get('password') || undefined;
  const location = describeDatabaseUrl(options.url);
  // Loaded on first use: a process on PGlite does not load the driver.
  const { Pool } = require('pg') as typeof import('pg');
  const pool = new Pool({
    connectionString: options.url,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: options.statementTimeoutMs,
    idleTimeoutMillis: 30_000,
    // The server stops a statement that runs too long; an abandoned transaction does not hold its locks for good.
    statement_timeout: options.statementTimeoutMs,
    idle_in_transaction_session_timeout: Math.max(options.statementTimeoutMs * 2, 10_000),
    keepAlive: true,
    application_name: 'gatehouse',
  });
  // An idle connection the server dropped (a restart, a failover): the pool forgets it and opens another when needed.
  pool.on('error', () => undefined);

  return {
    name: 'PostgreSQL',
    location,
    session(work, timeoutMs) {
      let client: PoolClient | undefined;
      let expired = false;
      let released = false;
      const onError = () => undefined;
      const release = (drop: boolean) => {
        if (!client || released) return;
        released = true;
        client.off('error', onError);
        client.release(drop);
      };
      const run = (async () => {
        let connected: PoolClient;
        try {
          connected = await pool.connect();
        } catch (err) {
          // Any failure to connect (refused, no such host, a password refused, no such database) is the database being unavailable.
          throw new DatabaseUnavailableError('unavailable', redact(errorText(err), password), { cause: err });
        }
        if (expired) {
          connected.release();
          throw new DatabaseUnavailableError('timeout', `${location} did not answer within ${timeoutMs} ms`);
        }
        client = connected;
        // A socket error on a connection in use is also its query's error; unheard, it would end the process.
        client.on('error', onError);
        try {
          const result = await work(
            connectionSql(
              async (text, params) => (await connected.query<Row>(text, params as unknown[] | undefined)).rows,
            ),
          );
          release(false);
          return result;
        } catch (err) {
          release(isUnavailable(err));
          throw asUnavailable(err, password);
        }
      })();
      return withDeadline(
        run,
        timeoutMs,
        () => new DatabaseUnavailableError('timeout', `${location} did not answer within ${timeoutMs} ms`),
        () => {
          expired = true;
          // Whatever it was waiting for may never come: the connection goes, and its transaction with it.
          release(true);
        },
      );
    },
    async persisted() {
      // synchronous_commit: COMMIT returned once the commit was flushed.
    },
    close: () => pool.end(),
  };
}
