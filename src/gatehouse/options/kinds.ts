/**
 * @module gatehouse/options/kinds
 * What an option's value may be: the zod schema a value is checked with,
 * how the text of a flag or an environment variable is read as a value, and
 * the words a refusal says it must be. A value from code, a flag or the
 * environment goes through the same schema and is refused in the same words.
 */
import { z } from 'zod';
import { parseByteSize } from '../../files';

/** The kind of an option's value. */
export interface Kind<T> {
  /** What a value must be, completing "must be": `an integer from 0 to 65535`. */
  readonly must: string;
  /** The check every value passes, from code or read from text. */
  readonly schema: z.ZodType<T>;
  /**
   * What a value from code may be (`typeof`, `array`): another is a
   * TypeError, one the schema refuses otherwise a RangeError.
   */
  readonly types: readonly string[];
  /** The value a flag's or a variable's text stands for; `undefined` refuses it. Absent: set from code only. */
  read?(text: string): unknown;
  /** The flag's value in the help: `<n>`. */
  readonly placeholder?: string;
  /** A value as the help and the docs write it (a default). */
  show?(value: T): string;
  /** The value as the options hold it, once checked (a path made absolute). */
  settle?(value: T): T;
  /**
   * For a value that may hold a password: what a refusal says of the text,
   * which it never quotes.
   */
  secret?(text: string): string;
  /** Checks deeper than the schema, throwing a TypeError or RangeError that names the part at fault. */
  inspect?(value: T, name: string): void;
}

/** The value a kind holds. */
export type ValueOf<K> = K extends Kind<infer T> ? T : never;

/** What `value` is, in the words of {@link Kind.types}. */
export function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  return value === null ? 'null' : typeof value;
}

/** A value from code as a refusal quotes it. */
export function shownValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === undefined) return 'nothing';
  const type = typeOf(value);
  return type === 'null' ? 'null' : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

const DIGITS = /^[0-9]{1,16}$/;

/** A whole number from `min` to `max` (none: no bound), `unit` saying what it counts. */
export function integer(min: number, max?: number, unit?: string): Kind<number> {
  const range = max === undefined ? `of ${min} or more` : `from ${min} to ${max}`;
  return {
    must: `an integer ${range}${unit ? ` (${unit})` : ''}`,
    schema: z
      .number()
      .int()
      .min(min)
      .max(max ?? Number.MAX_SAFE_INTEGER),
    types: ['number'],
    // Digits only: Number() would also take `0x1F90`, `1e3`, ` 80` or `-0`.
    read: (text) => (DIGITS.test(text) ? Number(text) : undefined),
    placeholder: '<n>',
  };
}

export const port = integer(0, 65535);

/** A port, or `false` for no server at all. */
export const portOrNone: Kind<number | false> = {
  must: 'an integer from 0 to 65535, or false for none',
  schema: z.union([port.schema, z.literal(false)]),
  types: ['number', 'boolean'],
  read: (text) => (text === 'false' ? false : port.read!(text)),
  placeholder: '<n>',
};

export function milliseconds(min: number): Kind<number> {
  return integer(min, undefined, 'milliseconds');
}

/** A number of bytes of at least `min`; its text may have a unit (`512k`, `16m`, `1g`). */
export function bytes(min: number): Kind<number> {
  return {
    must: `a number of bytes of ${min} or more (512k, 16m, 1g)`,
    schema: z.number().int().min(min).max(Number.MAX_SAFE_INTEGER),
    types: ['number'],
    read(text) {
      if (/^0+[a-z]*$/i.test(text.trim())) return 0;
      try {
        return parseByteSize(text, '');
      } catch {
        return undefined;
      }
    },
    placeholder: '<size>',
    show: (value) => {
      for (const [unit, size] of [
        ['g', 2 ** 30],
        ['m', 2 ** 20],
        ['k', 2 ** 10],
      ] as const) {
        if (value >= size && value % size === 0) return `${value / size}${unit}`;
      }
      return String(value);
    },
  };
}

export const boolean: Kind<boolean> = {
  must: 'true or false',
  schema: z.boolean(),
  types: ['boolean'],
  read: (text) => ({ true: true, 1: true, false: false, 0: false })[text.trim().toLowerCase()],
};

/** Text that is not blank: `must` says what it names. */
export function text(must: string, placeholder: string, settle?: (value: string) => string): Kind<string> {
  return {
    must,
    schema: z.string().refine((value) => value.trim() !== ''),
    types: ['string'],
    read: (value) => value,
    placeholder,
    ...(settle ? { settle } : {}),
  };
}

const DNS_DOMAIN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Whether `domain` is a DNS name (`cluster.local`, `k8s.example.com`), without a trailing dot. */
export function isDnsDomain(domain: string): boolean {
  return DNS_DOMAIN.test(domain);
}

/** A DNS domain such as `example`. */
export function dnsDomain(example: string): Kind<string> {
  return {
    must: `a DNS domain such as ${example}`,
    schema: z.string().regex(DNS_DOMAIN),
    types: ['string'],
    read: (value) => value,
    placeholder: '<domain>',
  };
}

/**
 * A number of workers: `auto` (the cores this process may use,
 * `os.availableParallelism()`), or a count from 1 to four times those
 * cores: more threads than that only take turns on the same cores.
 */
export function workerCount(cores: number): Kind<number | 'auto'> {
  const most = 4 * cores;
  return {
    must: `auto or an integer from 1 to ${most} (four times the ${cores} cores)`,
    schema: z.union([z.literal('auto'), z.number().int().min(1).max(most)]),
    types: ['number', 'string'],
    read: (text) => (text.trim().toLowerCase() === 'auto' ? 'auto' : DIGITS.test(text) ? Number(text) : undefined),
    placeholder: '<n|auto>',
  };
}

/** One of `values`; its text is read in any case. */
export function oneOf<const V extends string>(values: readonly V[]): Kind<V> {
  return {
    must: `one of ${values.join(', ')}`,
    schema: z.enum(values as unknown as [V, ...V[]]),
    types: ['string'],
    read: (value) => value.trim().toLowerCase(),
    placeholder: '<level>',
  };
}

/**
 * What a refusal says of a URL that may hold a password: its scheme when
 * that is not one of `schemes`, else that it cannot be read; never the rest.
 */
function urlScheme(value: string, schemes: RegExp): string {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(value)?.[1];
  if (scheme === undefined || !schemes.test(scheme)) return scheme ? `the scheme ${scheme.toLowerCase()}://` : 'no URL';
  return 'a URL that cannot be read; a password with @, : or / is written percent-encoded';
}

/** Whether `value` parses as a URL, and names a host when `host` says it must. */
function parses(value: string, host: boolean): boolean {
  try {
    const url = new URL(value);
    return !host || url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * What the Redis client reads as an address: `redis://` or `rediss://`
 * URLs, `host:port`, a port, a Unix socket path.
 */
export const redisUrl: Kind<string> = {
  must: 'a redis:// or rediss:// URL, host:port, a port or a socket path',
  schema: z.string().refine((url) => {
    if (/^[0-9]{1,5}$/.test(url) || /^\/\S/.test(url)) return true;
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1];
    if (scheme !== undefined && !/^rediss?$/i.test(scheme)) return false;
    return parses(scheme === undefined ? `redis://${url}` : url, true);
  }),
  types: ['string'],
  read: (value) => value,
  placeholder: '<url>',
  secret: (value) =>
    /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value) ? urlScheme(value, /^rediss?$/i) : 'an address that cannot be read',
};

/** `url` as logs and the start line say it: without its user and password. */
export function describeRedisUrl(url: string): string {
  if (/^[0-9]+$/.test(url)) return `redis://127.0.0.1:${url}`;
  if (url.startsWith('/')) return `the socket ${url}`;
  const parsed = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `redis://${url}`);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}

/** A PostgreSQL URL. */
export const postgresUrl: Kind<string> = {
  must: 'a postgres:// or postgresql:// URL (postgres://user:password@host:5432/database)',
  schema: z.string().refine((url) => /^postgres(?:ql)?:/i.test(url) && parses(url, false)),
  types: ['string'],
  read: (value) => value,
  placeholder: '<url>',
  secret: (value) => urlScheme(value, /^postgres(?:ql)?$/i),
};

/** A value of code: an object `check` accepts, throwing a TypeError that names what is wrong. */
export function codeValue<T>(
  must: string,
  types: readonly string[],
  inspect?: (value: T, name: string) => void,
): Kind<T> {
  return { must, schema: z.custom<T>(() => true), types, ...(inspect ? { inspect } : {}) };
}
