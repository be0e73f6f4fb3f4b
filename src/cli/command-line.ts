/**
 * @module cli/command-line
 * A command's flags, read by their declarations (gatehouse/options): each
 * flag's text goes through its option's schema, and is refused in the shape
 * every option is (`--port: must be an integer from 0 to 65535 (got "-1")`).
 * A flag's value is the next argument whatever it starts with, as getopt
 * takes it: `--port -1` is a port that is refused, not a puzzle.
 */
import {
  OPTIONS,
  readOptions,
  readText,
  type Command,
  type OptionName,
  type OptionValues,
  type ReadOptions,
} from '../gatehouse/options';
import { commandOptions } from '../gatehouse/options';

/** A mistake on the command line: exit 2, with a pointer to the usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A command line read. */
export interface CommandLine {
  /** `-h` or `--help` was given: the rest is not read. */
  readonly help: boolean;
  /** The options given by flag, checked. */
  readonly values: OptionValues;
  /** The flag that gave each option. */
  readonly flags: ReadonlyMap<OptionName, string>;
  readonly positionals: readonly string[];
}

/** Reads `args` as `command`'s flags and arguments; throws a {@link UsageError} or an OptionError for a mistake. */
export function parseCommandLine(command: Command, args: readonly string[]): CommandLine {
  const end = args.indexOf('--');
  const options = end === -1 ? args : args.slice(0, end);
  // Asked for help, the rest need not be right.
  if (options.includes('-h') || options.includes('--help'))
    return { help: true, values: {}, flags: new Map(), positionals: [] };
  const byFlag = new Map<string, OptionName>();
  for (const name of commandOptions(command)) {
    const flag = (OPTIONS[name] as { flag?: string }).flag;
    if (flag) byFlag.set(flag, name);
  }
  const values: Record<string, unknown> = {};
  const flags = new Map<OptionName, string>();
  const positionals: string[] = [];
  for (let i = 0; i < options.length; i++) {
    const arg = options[i];
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const equals = arg.indexOf('=');
    const flag = equals === -1 ? arg : arg.slice(0, equals);
    const name = byFlag.get(flag);
    if (name === undefined) throw new UsageError(`${command} has no option ${flag}`);
    const declared = OPTIONS[name] as { kind: { types: readonly string[] }; flagSets?: boolean };
    if (declared.kind.types.includes('boolean') && declared.kind.types.length === 1) {
      if (equals !== -1) throw new UsageError(`${flag}: takes no value (got ${JSON.stringify(arg.slice(equals + 1))})`);
      values[name] = declared.flagSets ?? true;
    } else {
      values[name] = readText(name, equals === -1 ? options[++i] : arg.slice(equals + 1), flag);
    }
    flags.set(name, flag);
  }
  if (end !== -1) positionals.push(...args.slice(end + 1));
  return { help: false, values, flags, positionals };
}

/**
 * The options `names` from the command line, else the environment, else
 * their defaults; a refusal names the flag or the variable.
 */
export function readCommandOptions(
  line: CommandLine,
  names?: readonly OptionName[],
  env: NodeJS.ProcessEnv = process.env,
): ReadOptions {
  return readOptions(line.values, env, names, (name) => line.flags.get(name) ?? 'code');
}
