/**
 * @module ratelimit/limits
 * The limits of every domain compiled into a tree walked entry by entry, and
 * the lookup that finds the rule for one descriptor exactly as
 * envoyproxy/ratelimit does: at each level `key` + `value` first, then the
 * wildcard values in the order written (each `*` stands for any text, so
 * `prefix*`, `/api*v1` and `svc*ep*rpc` all match), then `key` alone; the
 * rule must sit at the depth of the descriptor's last entry.
 */
import type { CurrentLimit, DescriptorEntry } from '../types';
import type { DescriptorConfig, LimitsDocument } from './schema';
import { UNIT_SECONDS } from './units';

/** A configured limit, ready to be applied. */
export interface LimitRule {
  /** `domain.key_value.key`, for messages and diagnostics. */
  readonly fullKey: string;
  readonly name?: string;
  readonly unlimited: boolean;
  /** Counted, but never refuses. */
  readonly shadowMode: boolean;
  /**
   * A soft limit (`quota_mode`): counted, never refusing the request, but a
   * descriptor over it is answered OVER_LIMIT and named in the response's
   * dynamic metadata. Shadow mode wins over it.
   */
  readonly quotaMode: boolean;
  /** Names of rules this one replaces when both apply to one request. */
  readonly replaces: readonly string[];
  readonly requestsPerUnit: number;
  /** Length of the fixed window; 0 when unlimited. */
  readonly windowMs: number;
  /** What a status reports; absent when unlimited. */
  readonly currentLimit?: CurrentLimit;
  /**
   * Per level, the wildcard that stands for the value in the counter's key
   * (`share_threshold`), or undefined to count each value apart.
   */
  readonly sharedValues?: readonly (string | undefined)[];
}

export interface LimitNode {
  rule?: LimitRule;
  keys?: Map<string, KeyBranch>;
}

export interface KeyBranch {
  values?: Map<string, LimitNode>;
  /** The value split at its `*`s: `a*b*` is ['a', 'b', '']. */
  wildcards?: { parts: readonly string[]; node: LimitNode }[];
  any?: LimitNode;
}

/** The compiled limits of every loaded domain. */
export interface LimitTable {
  readonly domains: ReadonlyMap<string, LimitNode>;
  /** Whether any rule replaces another: the service skips that pass otherwise. */
  readonly hasReplaces: boolean;
  /** Number of rules, for diagnostics. */
  readonly ruleCount: number;
}

/** A document that cannot be compiled, with the path of the culprit. */
export class LimitsCompileError extends Error {
  constructor(
    /** Index of the offending document in the list given to {@link compileLimits}. */
    readonly document: number,
    readonly path: string,
    readonly reason: string,
  ) {
    super(`[${document}] ${path}: ${reason}`);
    this.name = 'LimitsCompileError';
  }
}

interface Build {
  ruleCount: number;
  hasReplaces: boolean;
}

function makeRule(config: DescriptorConfig, fullKey: string, shared: (string | undefined)[]): LimitRule | undefined {
  const spec = config.rate_limit;
  if (!spec) return undefined;
  const unit = spec.unit;
  const current: CurrentLimit | undefined =
    spec.unlimited || !unit
      ? undefined
      : Object.freeze(
          spec.name
            ? { name: spec.name, requestsPerUnit: spec.requestsPerUnit, unit }
            : { requestsPerUnit: spec.requestsPerUnit, unit },
        );
  return Object.freeze({
    fullKey,
    name: spec.name,
    unlimited: spec.unlimited,
    shadowMode: config.shadow_mode,
    quotaMode: config.quota_mode,
    replaces: Object.freeze([...spec.replaces]),
    requestsPerUnit: spec.requestsPerUnit,
    windowMs: unit && !spec.unlimited ? UNIT_SECONDS[unit] * 1000 : 0,
    currentLimit: current,
    sharedValues: shared.some((s) => s !== undefined) ? Object.freeze([...shared]) : undefined,
  });
}

function addLevel(
  document: number,
  parent: LimitNode,
  descriptors: readonly DescriptorConfig[],
  parentKey: string,
  path: string,
  shared: (string | undefined)[],
  build: Build,
): void {
  const seen = new Set<string>();
  descriptors.forEach((config, i) => {
    const here = `${path}[${i}]`;
    const value = config.value ?? '';
    const composite = value === '' ? config.key : `${config.key}_${value}`;
    const fullKey = `${parentKey}.${composite}`;
    if (seen.has(composite)) throw new LimitsCompileError(document, here, `duplicate descriptor '${fullKey}'`);
    seen.add(composite);

    const wildcard = value.includes('*');
    if (config.share_threshold && !wildcard) {
      throw new LimitsCompileError(
        document,
        `${here}.share_threshold`,
        "needs a wildcard value (one holding '*'), as envoyproxy/ratelimit requires",
      );
    }
    shared.push(wildcard && config.share_threshold ? value : undefined);
    const node: LimitNode = {};
    node.rule = makeRule(config, fullKey, shared);
    if (node.rule) {
      build.ruleCount++;
      if (node.rule.replaces.length > 0) build.hasReplaces = true;
    }
    if (config.descriptors?.length)
      addLevel(document, node, config.descriptors, fullKey, `${here}.descriptors`, shared, build);
    shared.pop();

    parent.keys ??= new Map();
    let branch = parent.keys.get(config.key);
    if (!branch) parent.keys.set(config.key, (branch = {}));
    if (value === '') branch.any = node;
    else if (wildcard) (branch.wildcards ??= []).push({ parts: Object.freeze(value.split('*')), node });
    else (branch.values ??= new Map()).set(value, node);
  });
}

/**
 * Compiles validated documents, one domain each. Throws a
 * {@link LimitsCompileError} for a duplicate domain or descriptor.
 */
export function compileLimits(documents: readonly LimitsDocument[]): LimitTable {
  const domains = new Map<string, LimitNode>();
  const build: Build = { ruleCount: 0, hasReplaces: false };
  documents.forEach((doc, i) => {
    if (domains.has(doc.domain)) throw new LimitsCompileError(i, 'domain', `duplicate domain '${doc.domain}'`);
    const root: LimitNode = {};
    addLevel(i, root, doc.descriptors ?? [], doc.domain, 'descriptors', [], build);
    domains.set(doc.domain, root);
  });
  return { domains, hasReplaces: build.hasReplaces, ruleCount: build.ruleCount };
}

/**
 * Whether a value matches a wildcard split at its `*`s: it starts with the
 * first part, ends with the last, and holds the others in order between
 * them, without overlapping. No allocation.
 */
export function wildcardMatches(parts: readonly string[], value: string): boolean {
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (value.length < first.length + last.length || !value.startsWith(first) || !value.endsWith(last)) return false;
  let from = first.length;
  const end = value.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const at = value.indexOf(parts[i], from);
    if (at < 0 || at + parts[i].length > end) return false;
    from = at + parts[i].length;
  }
  return true;
}

function step(node: LimitNode, entry: DescriptorEntry): LimitNode | undefined {
  const branch = node.keys?.get(entry.key);
  if (!branch) return undefined;
  const exact = branch.values?.get(entry.value);
  if (exact) return exact;
  if (branch.wildcards) {
    for (const w of branch.wildcards) if (wildcardMatches(w.parts, entry.value)) return w.node;
  }
  return branch.any;
}

/**
 * The rule for a descriptor of `domain`, or undefined when the domain is
 * unknown or no rule sits exactly at the depth of the descriptor.
 */
export function findRule(
  table: LimitTable,
  domain: string,
  entries: readonly DescriptorEntry[],
): LimitRule | undefined {
  let node = table.domains.get(domain);
  if (!node || entries.length === 0) return undefined;
  for (let i = 0; i < entries.length; i++) {
    node = step(node, entries[i]);
    if (!node) return undefined;
  }
  return node.rule;
}
