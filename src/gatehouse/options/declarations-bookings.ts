/**
 * @module gatehouse/options/declarations-bookings
 * The options of the bookings' store, declared as every option is
 * (./declaration), and taken into the one list of options (./declarations):
 * PostgreSQL or PGlite, where PGlite keeps its files, how long a call may
 * take, and PGlite's memory.
 */
import { dirname, join, resolve } from 'node:path';
import { option, type ServeOnly } from './declaration';
import { bytes, milliseconds, oneOf, postgresUrl, text } from './kinds';

/** `serve` takes these options only for the modules that keep bookings. */
const BOOKINGS: ServeOnly = { modules: ['hotel-booking', 'car-booking'], others: 'keeps no bookings' };

export const BOOKINGS_OPTIONS = {
  databaseUrl: option({
    kind: postgresUrl,
    flag: '--database-url',
    env: 'DATABASE_URL',
    shown: 'PGlite in the data folder',
    help: 'PostgreSQL for the bookings, shared by every process pointed at it',
    more: '(`postgres://user:password@host:5432/database`, [database.md](database.md))',
    commands: ['start', 'serve'],
    serveOnly: BOOKINGS,
  }),
  dataDir: option({
    kind: text('the name of a folder', '<dir>', (dir) => resolve(dir)),
    flag: '--data',
    env: 'GATEHOUSE_DATA',
    // Beside the config folder, not in it: the folder is watched, and may be mounted read-only.
    default: (o) => join(dirname(o.configDir as string), 'data'),
    shown: 'data beside the config folder',
    help: "PGlite's folder for the bookings, made on the first start, without a database URL",
    commands: ['start', 'serve'],
    serveOnly: BOOKINGS,
  }),
  databaseTimeoutMs: option({
    kind: milliseconds(1),
    flag: '--database-timeout-ms',
    env: 'DATABASE_TIMEOUT_MS',
    default: 5000,
    help: 'answer 503 when a call to the bookings database takes longer, in ms',
    commands: ['start', 'serve'],
    serveOnly: BOOKINGS,
  }),
  pgliteSharedBuffers: option({
    kind: bytes(128 * 1024),
    flag: '--pglite-shared-buffers',
    env: 'PGLITE_SHARED_BUFFERS',
    default: 1024 * 1024,
    help: "PGlite's shared_buffers: its cache of the database's 8 kB pages, all of it resident from the start",
    more: '([memory](#memory-and-start))',
    commands: ['start', 'serve'],
    serveOnly: BOOKINGS,
  }),
  pgliteCompiler: option({
    kind: oneOf(['baseline', 'optimizing']),
    flag: '--pglite-compiler',
    env: 'PGLITE_COMPILER',
    default: 'baseline',
    help: "how V8 compiles PGlite's WebAssembly: baseline (Liftoff only, tens of MB less memory) or optimizing (V8's default)",
    more: '([memory](#memory-and-start))',
    commands: ['start', 'serve'],
    serveOnly: BOOKINGS,
  }),
  bookingStore: option({
    kind: oneOf(['database', 'memory']),
    default: 'database',
    help: "'memory': bookings in memory, gone on stop(), for tests",
  }),
};
