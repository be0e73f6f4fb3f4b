/**
 * @module gatehouse/options
 * The options of a Gatehouse, each declared once (./declarations), and
 * their reading: from code, flags or the environment, checked by one schema
 * and refused in one shape.
 */
import { OPTIONS, type OptionName } from './declarations';
import { shownValue } from './kinds';
import {
  LIBRARY_NAMES,
  OPTION_NAMES,
  readOptions,
  tlsPair,
  type GatehouseOptions,
  type OptionValues,
  type ResolvedOptions,
} from './read';

export { OPTIONS, LOG_LEVELS, type OptionName } from './declarations';
export { DEFAULT_YOUNG_GENERATION_MB } from './declarations-process';
export type { Command, Declaration, ServeOnly } from './declaration';
export { describeRedisUrl, isDnsDomain, type Kind } from './kinds';
export type { BoundPorts } from './code-values';
export {
  checkValue,
  LIBRARY_NAMES,
  OPTION_NAMES,
  OPTION_VARIABLES,
  OptionError,
  readOptions,
  readText,
  tlsPair,
  type GatehouseOptions,
  type OptionValue,
  type OptionValues,
  type ReadOptions,
  type ResolvedOptions,
} from './read';
export { commandOptions, optionsHelp, optionsTable } from './text';

/** Throws a TypeError for options that are no object, or name an option there is not. */
function checkNames(options: unknown): asserts options is OptionValues {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError(`the options: must be an object (got ${shownValue(options)})`);
  for (const name of Object.keys(options)) {
    if (!(LIBRARY_NAMES as string[]).includes(name))
      throw new TypeError(`there is no option '${name}'; the options are ${LIBRARY_NAMES.join(', ')}`);
  }
}

/**
 * `options` with the environment's values and the defaults applied, each
 * value checked. Throws a TypeError or RangeError naming an option of
 * `options` that is wrong, and an {@link OptionError} naming a variable.
 */
/** The options `createGatehouse` reads: every one but those of the command line alone. */
const EMBEDDED_NAMES = OPTION_NAMES.filter((name) => libraryName(name) !== undefined);

export function resolveOptions(options: GatehouseOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedOptions {
  checkNames(options);
  // Those of the command line alone (`workers`) are not read: an app that embeds the gateway has none of them.
  const read = readOptions(options, env, EMBEDDED_NAMES);
  // TLS files from code win over the variables.
  const resolved: Record<string, unknown> = { ...read.values, tls: options.tls ?? tlsPair(read) };
  // Of the command line alone: `tls` holds them.
  delete resolved.tlsCert;
  delete resolved.tlsKey;
  return resolved as ResolvedOptions;
}

/** The option of `createGatehouse` a command line option becomes (`tlsCert`: `tls.cert`). */
export function libraryName(name: OptionName): string | undefined {
  const library = (OPTIONS[name] as { library?: string | false }).library;
  return library === undefined ? name : library || undefined;
}
