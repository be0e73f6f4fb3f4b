/**
 * @module cli/compile-cache
 * Node's compile cache for the `gatehouse` process (Node 22.1 or later):
 * the code V8 compiled from every module, kept on disk, so that a start
 * compiles only the modules that changed. It is turned on before anything
 * else is loaded, from the `--compile-cache` flag or the
 * `GATEHOUSE_COMPILE_CACHE` variable read as they are written (the option
 * is declared in gatehouse/options, whose loading it would slow down); a
 * value the declaration refuses turns nothing on and is refused by the
 * command line as any other. Worker threads keep their code in the same
 * folder (`NODE_COMPILE_CACHE`, which each thread reads as it starts).
 */
import nodeModule from 'node:module';
import { resolve } from 'node:path';

/** The flag and the variable of the `compileCache` option, as gatehouse/options declares them. */
export const COMPILE_CACHE_FLAG = '--compile-cache';
export const COMPILE_CACHE_ENV = 'GATEHOUSE_COMPILE_CACHE';

/** What `module.enableCompileCache` answers, where this Node has it. */
interface Enabled {
  readonly status: number;
  readonly message?: string;
  readonly directory?: string;
}

type CacheApi = {
  enableCompileCache?: (directory?: string) => Enabled;
  flushCompileCache?: () => void;
  constants?: { compileCacheStatus?: { FAILED?: number } };
};

/** The value of the flag in `args` (the last one given, up to `--`), else undefined. */
function flagValue(args: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') break;
    if (arg === COMPILE_CACHE_FLAG) value = args[++i];
    else if (arg.startsWith(`${COMPILE_CACHE_FLAG}=`)) value = arg.slice(COMPILE_CACHE_FLAG.length + 1);
  }
  return value;
}

/**
 * Turns the compile cache on as `args` (a command's arguments) and `env`
 * ask: in the folder given, in Node's own (`NODE_COMPILE_CACHE`, else one
 * in the temporary folder) when none is, not at all for `false`. Resolves
 * the folder it keeps the code in, if any; says on standard error why a
 * folder given cannot be used, and goes on without.
 */
export function enableCompileCache(args: readonly string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  const api = nodeModule as unknown as CacheApi;
  const given = flagValue(args) ?? (env[COMPILE_CACHE_ENV] || undefined);
  if (given === 'false' || api.enableCompileCache === undefined) return undefined;
  // Refused by the command line once it is read: nothing is turned on meanwhile.
  if (given !== undefined && given.trim() === '') return undefined;
  const enabled = given === undefined ? api.enableCompileCache() : api.enableCompileCache(resolve(given));
  if (enabled.directory === undefined) {
    if (given !== undefined && enabled.status === api.constants?.compileCacheStatus?.FAILED)
      process.stderr.write(
        `gatehouse: no compile cache in ${resolve(given)}: ${enabled.message ?? 'it cannot be used'}\n`,
      );
    return undefined;
  }
  env.NODE_COMPILE_CACHE = enabled.directory;
  return enabled.directory;
}

/**
 * Writes what was compiled so far to the cache (Node 22.10 or later), as
 * Node does only when the process exits: a gateway that is killed, or that
 * runs for months, keeps what its start compiled.
 */
export function flushCompileCache(): void {
  (nodeModule as unknown as CacheApi).flushCompileCache?.();
}
