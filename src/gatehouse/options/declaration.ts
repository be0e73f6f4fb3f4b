/**
 * @module gatehouse/options/declaration
 * The shape of one option's declaration: its kind, flag, environment
 * variable, default, help line and the commands that take it. From these
 * come the help of the commands, the reading of flags and variables, the
 * type of `createGatehouse`'s options and the table in docs/operations.md.
 */
import type { Kind } from './kinds';

/** The commands that read options from flags and the environment. */
export type Command = 'start' | 'serve' | 'check';

/** `gatehouse serve`: the modules an option applies to, and why it is refused for the others. */
export interface ServeOnly {
  readonly modules: readonly string[];
  /** What the other modules are, for the refusal: `keeps no counters`. */
  readonly others: string;
}

/** One option. */
export interface Declaration<T> {
  readonly kind: Kind<T>;
  /** Its flag. A boolean's takes no value and sets {@link flagSets}. */
  readonly flag?: `--${string}`;
  /** The value a boolean's flag sets: `--no-watch` sets false. Default true. */
  readonly flagSets?: boolean;
  /** Its environment variable; one set empty counts as unset. */
  readonly env?: string;
  /** The value when none is given, or how it follows from the options before it. */
  readonly default?: T | ((options: Readonly<Record<string, unknown>>) => T);
  /** How the default is written in the help and the docs, where the value would not say it. */
  readonly shown?: string;
  /** One line: what it does. */
  readonly help: string;
  /** The help line of a flag that says the opposite of the option (`--no-watch`). */
  readonly flagHelp?: string;
  /** What the table in the docs adds to the help line: links, finer points. */
  readonly more?: string;
  /** The commands that take it from its flag and its variable. */
  readonly commands?: readonly Command[];
  /** `gatehouse serve`: the modules it is for, when not all. */
  readonly serveOnly?: ServeOnly;
  /**
   * Not an option of `createGatehouse`, which takes it as the option this
   * names (`tls.cert`); `false`: of the command line alone.
   */
  readonly library?: string | false;
}

/**
 * Declares an option, holding on to its exact type (which fields it has,
 * its kind's value), from which the types of the options are derived.
 */
export function option<T, const D extends Declaration<T>>(declaration: D & Declaration<T> & { kind: Kind<T> }): D {
  return declaration;
}
