/**
 * @module ratelimit/limits/keys
 * The keys of a limits document, checked as envoyproxy/ratelimit checks them
 * (its `validateYamlKeys`): a key it does not know, at any depth, refuses the
 * file; a key it knows is accepted wherever it stands, and where its typed
 * reader has no field for it there, it is silently ignored. Such a key loads
 * here too, with a warning saying it has no effect, and so do the keys of
 * features this service does not apply.
 */
import { formatIssuePath } from './schema';

/** Where a mapping sits in the format. */
type Level = 'document' | 'descriptor' | 'rate_limit' | 'replaces' | 'elsewhere';

/** The keys envoyproxy/ratelimit reads at each level. */
const KEYS_AT: Readonly<Record<Level, ReadonlySet<string>>> = {
  document: new Set(['domain', 'descriptors']),
  descriptor: new Set([
    'key',
    'value',
    'rate_limit',
    'descriptors',
    'shadow_mode',
    'quota_mode',
    'detailed_metric',
    'value_to_metric',
    'share_threshold',
    'metadata',
  ]),
  rate_limit: new Set(['unit', 'requests_per_unit', 'unlimited', 'name', 'replaces']),
  replaces: new Set(['name']),
  elsewhere: new Set(),
};

/** Every key envoyproxy/ratelimit accepts in a file, wherever it stands. */
const VALID_KEYS: ReadonlySet<string> = new Set(Object.values(KEYS_AT).flatMap((keys) => [...keys]));

/** Where a key is read, for the warning about one that is not. */
const HOME: Readonly<Record<string, string>> = {
  domain: 'the top of a document',
  unit: 'rate_limit',
  requests_per_unit: 'rate_limit',
  unlimited: 'rate_limit',
  replaces: 'rate_limit',
  name: 'rate_limit or a replaces entry',
};

/** Keys read by envoyproxy/ratelimit that change nothing here, and why. */
const NOT_APPLIED: Readonly<Record<string, string>> = {
  detailed_metric: "names envoyproxy/ratelimit's statistics only; nothing to do here",
  value_to_metric: "names envoyproxy/ratelimit's statistics only; nothing to do here",
  metadata:
    'is sent by envoyproxy/ratelimit only as response dynamic metadata (RESPONSE_DYNAMIC_METADATA); not sent here',
};

/** A key that refuses the document: where it is, and why. */
export interface KeyProblem {
  path: (string | number)[];
  message: string;
}

/** What the check found: problems refuse the document, warnings are logged. */
export interface KeyCheck {
  problems: KeyProblem[];
  warnings: string[];
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function childLevel(level: Level, key: string): Level {
  if (key === 'descriptors' && (level === 'document' || level === 'descriptor')) return 'descriptor';
  if (key === 'rate_limit' && level === 'descriptor') return 'rate_limit';
  if (key === 'replaces' && level === 'rate_limit') return 'replaces';
  return 'elsewhere';
}

/**
 * Checks the keys of one document as parsed from YAML. Warnings about a
 * feature not applied come once per key, with how many places use it.
 */
export function checkKeys(document: unknown): KeyCheck {
  const problems: KeyProblem[] = [];
  const warnings: string[] = [];
  const unapplied = new Map<string, { first: string; count: number }>();

  function walk(value: unknown, path: (string | number)[], level: Level): void {
    if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, [...path, i], level));
      return;
    }
    if (!isMapping(value)) return;
    for (const [key, child] of Object.entries(value)) {
      const at = formatIssuePath([...path, key]);
      if (!VALID_KEYS.has(key)) {
        problems.push({ path: [...path, key], message: `unknown key '${key}' (envoyproxy/ratelimit refuses it too)` });
        continue;
      }
      if (!KEYS_AT[level].has(key)) {
        const home = HOME[key] ?? 'a descriptor';
        warnings.push(`${at}: ignored, as envoyproxy/ratelimit ignores it: '${key}' is read only in ${home}`);
      } else if (key in NOT_APPLIED && child !== false && child !== null) {
        const seen = unapplied.get(key);
        if (seen) seen.count++;
        else unapplied.set(key, { first: at, count: 1 });
      }
      // The content of metadata is free, as that service leaves it unchecked.
      if (key !== 'metadata') walk(child, [...path, key], childLevel(level, key));
    }
  }

  walk(document, [], 'document');
  for (const [key, { first, count }] of unapplied) {
    const more = count > 1 ? ` (and ${count - 1} more)` : '';
    warnings.push(`${first}${more}: ${key} ${NOT_APPLIED[key]}`);
  }
  return { problems, warnings };
}
