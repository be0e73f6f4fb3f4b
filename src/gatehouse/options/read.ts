/**
 * @module gatehouse/options/read
 * Reading the options: each from what was given (code, or a flag read
 * beforehand), else its environment variable, else its default, in the
 * order they are declared, so that a default may follow from an option
 * before it. Every value goes through its kind's schema, and every refusal
 * has one shape, whatever gave the value:
 * `--port: must be an integer from 0 to 65535 (got "-1")`,
 * `PORT: must be an integer from 0 to 65535 (got "-1")`,
 * `port: must be an integer from 0 to 65535 (got -1)`.
 */
import { OPTIONS, type OptionName } from './declarations';
import { shownValue, typeOf, type ValueOf } from './kinds';

type Declared = typeof OPTIONS;

/** The value an option holds. */
export type OptionValue<K extends OptionName> = ValueOf<Declared[K]['kind']>;

/** Values of some options. */
export type OptionValues = { [K in OptionName]?: OptionValue<K> };

/** The options `createGatehouse` takes: every one not of the command line alone. */
type LibraryName = {
  [K in OptionName]: Declared[K] extends { library: string | false } ? never : K;
}[OptionName];
type DefaultedName = { [K in OptionName]: Declared[K] extends { default: unknown } ? K : never }[OptionName];

/** The options of a Gatehouse: see docs/operations.md, or {@link OPTIONS}, where each is declared. */
export type GatehouseOptions = { [K in LibraryName]?: OptionValue<K> };

/** Options with every default applied. */
export type ResolvedOptions = { [K in LibraryName & DefaultedName]: OptionValue<K> } & {
  [K in Exclude<LibraryName, DefaultedName>]?: OptionValue<K>;
};

/** Every option, in the order declared. */
export const OPTION_NAMES = Object.keys(OPTIONS) as OptionName[];

/** The options `createGatehouse` takes. */
export const LIBRARY_NAMES = OPTION_NAMES.filter((name) => !('library' in OPTIONS[name])) as LibraryName[];

/** Every environment variable an option is read from. */
export const OPTION_VARIABLES: readonly string[] = OPTION_NAMES.flatMap((name) => {
  const env = (OPTIONS[name] as { env?: string }).env;
  return env ? [env] : [];
});

/** A flag or a variable whose value was refused. */
export class OptionError extends Error {
  constructor(
    message: string,
    /** What gave the value: `--port`, `PORT`. */
    readonly source: string,
  ) {
    super(message);
    this.name = 'OptionError';
  }

  /** Whether the value was given on the command line, not in the environment. */
  get onCommandLine(): boolean {
    return this.source.startsWith('-');
  }
}

/**
 * The value `text` (a flag's, or a variable's; none for a flag given
 * without one) stands for as option `name`, given as `source`. Throws an
 * {@link OptionError} saying what it must be.
 */
export function readText<K extends OptionName>(name: K, text: string | undefined, source: string): OptionValue<K> {
  const kind = OPTIONS[name].kind;
  const value: unknown = text === undefined ? undefined : kind.read?.(text);
  if (value === undefined || !kind.schema.safeParse(value).success) {
    const got = text === undefined ? 'nothing' : kind.secret ? kind.secret(text) : JSON.stringify(text);
    throw new OptionError(`${source}: must be ${kind.must} (got ${got})`, source);
  }
  return settled(name, value) as OptionValue<K>;
}

/**
 * Throws unless `value` is one option `name` may hold: a TypeError when it
 * is of another type, a RangeError when it is out of bounds, each saying
 * what it must be.
 */
export function checkValue(name: OptionName, value: unknown): void {
  const kind = OPTIONS[name].kind;
  const shown = kind.secret && typeof value === 'string' ? kind.secret(value) : shownValue(value);
  if (!kind.types.includes(typeOf(value))) throw new TypeError(`${name}: must be ${kind.must} (got ${shown})`);
  if (!kind.schema.safeParse(value).success) throw new RangeError(`${name}: must be ${kind.must} (got ${shown})`);
  if (kind.inspect) kind.inspect(value as never, name);
}

function settled(name: OptionName, value: unknown): unknown {
  const { kind } = OPTIONS[name];
  return kind.settle ? kind.settle(value as never) : value;
}

/** Options read, and what gave each. */
export interface ReadOptions {
  readonly values: OptionValues;
  /** What gave the value of `name`: `code` (or a flag read before), its variable, or `default`. */
  sourceOf(name: OptionName): string | undefined;
}

/**
 * Reads the options `names` (default all): `given` (checked), else each
 * one's variable in `env` (one set empty is unset), else its default.
 * Throws for a value refused.
 */
export function readOptions(
  given: OptionValues,
  env: NodeJS.ProcessEnv,
  names: readonly OptionName[] = OPTION_NAMES,
  givenAs: (name: OptionName) => string = () => 'code',
): ReadOptions {
  const values: Record<string, unknown> = {};
  const sources = new Map<OptionName, string>();
  for (const name of OPTION_NAMES) {
    if (!names.includes(name)) continue;
    const declared = OPTIONS[name] as { env?: string; default?: unknown };
    let value: unknown = given[name];
    let source = givenAs(name);
    if (value !== undefined) {
      checkValue(name, value);
      value = settled(name, value);
    } else if (declared.env !== undefined && env[declared.env]) {
      source = declared.env;
      value = readText(name, env[declared.env], declared.env);
    } else if (declared.default !== undefined) {
      source = 'default';
      const fallback = declared.default;
      value = settled(name, typeof fallback === 'function' ? (fallback as (o: object) => unknown)(values) : fallback);
    }
    if (value === undefined) continue;
    values[name] = value;
    sources.set(name, source);
  }
  return { values, sourceOf: (name) => sources.get(name) };
}

/**
 * The TLS files `read` names: both files, or neither. Either may come
 * from its flag or its variable; a refusal names the one missing.
 */
export function tlsPair(read: ReadOptions): { cert: string; key: string } | undefined {
  const { tlsCert: cert, tlsKey: key } = read.values;
  if (cert !== undefined && key !== undefined) return { cert, key };
  if (cert === undefined && key === undefined) return undefined;
  const given = read.sourceOf(cert !== undefined ? 'tlsCert' : 'tlsKey')!;
  const missing = cert !== undefined ? 'tlsKey' : 'tlsCert';
  const flag = OPTIONS[missing].flag;
  const env = OPTIONS[missing].env;
  const message = given.startsWith('-')
    ? `${given}: goes with ${flag} (or ${env}): a certificate and its key, both or neither`
    : `${given}: goes with ${env}: a certificate and its key, both or neither`;
  throw new OptionError(message, given);
}
