/**
 * @module bookings/database/engine
 * What the booking store needs of a database, whichever it is: SQL on one
 * connection within a deadline, transactions, and word of when a commit is
 * on disk. PostgreSQL (./postgres) and PGlite (./pglite) provide it with the
 * same SQL.
 */

/** A row as the drivers return it: column name to value. */
export type Row = Record<string, unknown>;

/** SQL on one connection. */
export interface Sql {
  /** Runs one statement with `$1`-style parameters and resolves its rows. */
  query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /** Runs `work` in a transaction on this connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
}

/**
 * SQL on one connection whose statements go through `query`: a transaction
 * is BEGIN, the work, then COMMIT, or ROLLBACK when the work or the COMMIT
 * throws. One connection has one transaction at a time: a transaction begun
 * inside another is refused, where a second BEGIN would only warn and the
 * inner COMMIT commit the outer work.
 */
export function connectionSql(query: (text: string, params?: readonly unknown[]) => Promise<Row[]>): Sql {
  let inTransaction = false;
  const sql: Sql = {
    query: query as Sql['query'],
    async transaction(work) {
      if (inTransaction) throw new Error('no nested transactions on one connection');
      inTransaction = true;
      try {
        await query('BEGIN');
        try {
          const result = await work(sql);
          await query('COMMIT');
          return result;
        } catch (err) {
          // After a failed COMMIT, or on a connection that is gone, Postgres has rolled back already: this one only warns.
          await query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      } finally {
        inTransaction = false;
      }
    },
  };
  return sql;
}

/** A database the booking store can run on. */
export interface Engine {
  /** `PostgreSQL` or `PGlite`. */
  readonly name: 'PostgreSQL' | 'PGlite';
  /** Where the data is, for logs and messages: a URL without its password, or a folder. */
  readonly location: string;
  /**
   * Runs `work` on one connection. Past `timeoutMs`, counted from the call
   * (waiting for a connection included), it rejects with a
   * DatabaseUnavailableError of kind `timeout`, and whatever had not begun
   * by then never does; a failure to reach the database rejects with one of
   * kind `unavailable`.
   */
  session<T>(work: (sql: Sql) => Promise<T>, timeoutMs: number): Promise<T>;
  /**
   * Resolves once what committed before the call is on disk. PostgreSQL's
   * COMMIT says so itself; PGlite's needs its write-ahead log synced.
   */
  persisted(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Runs `work` with a timer: rejects with `onTimeout()` past `ms` (calling
 * `expire` first, to stop what is under way), else settles as `work` does.
 * Whatever `work` does later is ignored.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => Error, expire?: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expire?.();
      reject(onTimeout());
    }, ms);
  });
  // Settled after the deadline, it has nobody to tell.
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
