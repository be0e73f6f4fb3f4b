/**
 * @module gatehouse/options/declarations-process
 * The options of the `gatehouse` process itself rather than of a gateway,
 * declared as every option is (./declaration) and taken into the one list
 * of options (./declarations). `createGatehouse` takes none of them: an app
 * that embeds Gatehouse decides for its own process.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { option } from './declaration';
import { integer, oneOf, type Kind } from './kinds';

/** The flag and the variable of the compile cache, which the command reads before anything else is loaded. */
export const COMPILE_CACHE_FLAG = '--compile-cache';
export const COMPILE_CACHE_ENV = 'GATEHOUSE_COMPILE_CACHE';

/** A folder, made absolute, or `false` for none. */
const folderOrNone: Kind<string | false> = {
  must: 'the name of a folder, or false for none',
  schema: z.union([z.string().refine((value) => value.trim() !== ''), z.literal(false)]),
  types: ['string', 'boolean'],
  read: (text) => (text === 'false' ? false : text),
  placeholder: '<dir|false>',
  settle: (value) => (value === false ? false : resolve(value)),
};

/**
 * The young generation of each thread that serves by default, in MiB: two
 * semi-spaces of 4 MiB and as much for large objects, as V8 counts it.
 * Node's default lets it grow to 32 MiB of resident memory and more under
 * traffic (48 MiB for a worker, 192 on Node 24), for objects that seldom
 * outlive the request that made them: a young generation this size
 * collects them more often, for a cost per request bench/results measures.
 */
export const DEFAULT_YOUNG_GENERATION_MB = 12;

export const PROCESS_OPTIONS = {
  youngGeneration: option({
    kind: integer(3, 1024, 'MiB'),
    flag: '--young-generation',
    env: 'YOUNG_GENERATION',
    default: DEFAULT_YOUNG_GENERATION_MB,
    help: 'the young generation of the V8 heap of each thread that serves, in MiB: less memory, more frequent minor collections',
    more: "(one worker: the main thread's, unless node was given `--max-semi-space-size`; each worker's `resourceLimits.maxYoungGenerationSizeMb`; [memory and start](#memory-and-start))",
    commands: ['start'],
    library: false,
  }),
  parallelScavenge: option({
    kind: { ...oneOf(['auto', 'on', 'off']), placeholder: '<auto|on|off>' },
    flag: '--parallel-scavenge',
    env: 'PARALLEL_SCAVENGE',
    default: 'auto',
    help: 'whether V8 collects the young generation with its helper threads as well as the thread that allocated: auto turns them off where the process may use one CPU only (os.availableParallelism() is 1), where they can only take turns with the thread that serves',
    more: '(process-wide; left alone when node was given `--parallel-scavenge` or `--single-threaded-gc`; [memory and start](#memory-and-start))',
    commands: ['start', 'serve'],
    library: false,
  }),
  compileCache: option({
    kind: folderOrNone,
    flag: COMPILE_CACHE_FLAG,
    env: COMPILE_CACHE_ENV,
    shown: "Node's: `NODE_COMPILE_CACHE`, else `node-compile-cache` in the temporary folder",
    help: 'where Node keeps the code it compiled, so that a start compiles only what changed (Node 22.1 or later); false keeps none',
    more: '([memory and start](#memory-and-start))',
    commands: ['start', 'serve', 'check'],
    library: false,
  }),
};
