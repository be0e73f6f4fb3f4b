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
import { integer, type Kind } from './kinds';

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
 * The young generation of each worker thread's V8 heap by default, in MiB:
 * two semi-spaces of 4 MiB. Node's default (48 MiB on Node 22, 192 on
 * Node 24) lets each worker's nursery grow to 32 MiB and more of resident
 * memory under traffic, for objects that seldom outlive the request that
 * made them: a nursery this size collects them more often, for a cost per
 * request bench/results measures.
 */
export const DEFAULT_WORKER_YOUNG_GENERATION_MB = 12;

export const PROCESS_OPTIONS = {
  workerYoungGeneration: option({
    kind: integer(3, 1024, 'MiB'),
    flag: '--worker-young-generation',
    env: 'WORKER_YOUNG_GENERATION',
    default: DEFAULT_WORKER_YOUNG_GENERATION_MB,
    help: "the young generation of each worker thread's V8 heap, in MiB: less memory, more frequent minor collections",
    more: "(`resourceLimits.maxYoungGenerationSizeMb`; Node's default is 48 on Node 22; [workers](#workers))",
    commands: ['start'],
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
