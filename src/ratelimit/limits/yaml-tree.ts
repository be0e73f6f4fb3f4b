/**
 * @module ratelimit/limits/yaml-tree
 * The plain values of a parsed limits document, built as Go's yaml.v2 builds
 * them rather than as the `yaml` package's toJS does. The two differ on merge
 * keys: yaml.v2 applies each `<<` where it is written, so a merge overrides
 * the keys written before it in its mapping, the keys after it override the
 * merge, and of two `<<` in one mapping the later wins; the `yaml` package,
 * as the YAML merge spec says, lets every key of the mapping win over any
 * merge, and the first merge over later ones. Within one `<<: [*a, *b]` both
 * let the earlier win.
 *
 * An anchor whose value holds an alias to itself is refused, as yaml.v2
 * refuses it, and so is a document whose aliases expand it by more than
 * {@link MAX_VALUES} values (each alias stands for a whole copy to check);
 * what is written out, however much, is the file size limit's to bound.
 */
import { isAlias, isMap, isScalar, isSeq, visit, type Alias, type Document, type Node } from 'yaml';

/** The node an alias stands for: the last one before it with its anchor. */
export type AliasResolver = (alias: Alias) => Node | undefined;

/**
 * The node each alias of `doc` stands for, found in one walk of it. The
 * `yaml` package's `Alias.resolve` walks the whole document for each
 * alias: a file of 20 000 aliases took it minutes.
 */
export function aliasResolver(doc: Document): AliasResolver {
  const targets = new Map<Alias, Node>();
  const anchored = new Map<string, Node>();
  visit(doc, {
    Node(_, node) {
      if (isAlias(node)) {
        const to = anchored.get(node.source);
        if (to) targets.set(node, to);
      } else if (node.anchor) {
        anchored.set(node.anchor, node);
      }
    },
  });
  return (alias) => targets.get(alias);
}

/** Most values a document's aliases may add to it once expanded. */
export const MAX_VALUES = 100_000;

/** How many values `doc` holds as written (an alias counts as one). */
function writtenValues(doc: Document): number {
  let count = 0;
  visit(doc, {
    Node() {
      count++;
    },
  });
  return count;
}

/** A document yaml.v2 would refuse to build, or too large once expanded. */
export class YamlTreeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'YamlTreeError';
  }
}

/** A built value and how many values it stands for, aliases expanded. */
interface Built {
  value: unknown;
  size: number;
}

/** The one field of envoyproxy/ratelimit's types that is a pointer to a struct. */
const POINTER_FIELD = 'rate_limit';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Sets a key as data, so that `__proto__` is a key like any other. A
 * `rate_limit` given again (written twice, or by a merge) fills the fields of
 * the first one: yaml.v2 decodes it into the struct its pointer already
 * points at, where any other field is replaced whole.
 */
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  const before = out[key];
  if (key === POINTER_FIELD && isRecord(before) && isRecord(value) && Object.prototype.hasOwnProperty.call(out, key)) {
    const filled: Record<string, unknown> = {};
    for (const [k, v] of [...Object.entries(before), ...Object.entries(value)]) put(filled, k, v);
    value = filled;
  }
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Builds the plain value of `doc` as yaml.v2 would. Throws {@link YamlTreeError}. */
export function goValue(doc: Document, resolve: AliasResolver = aliasResolver(doc)): unknown {
  const built = new Map<unknown, Built>();
  const building = new Set<unknown>();
  const limit = writtenValues(doc) + MAX_VALUES;

  function target(node: unknown): unknown {
    if (!isAlias(node)) return node;
    const to = resolve(node);
    if (to === undefined) throw new YamlTreeError(`unknown anchor '${node.source}'`);
    if (building.has(to)) throw new YamlTreeError(`anchor '${node.source}' value contains itself`);
    return to;
  }

  function build(at: unknown): Built {
    const node = target(at);
    const done = built.get(node);
    if (done) return done;
    let result: Built;
    if (isMap(node)) {
      building.add(node);
      const out: Record<string, unknown> = {};
      let size = 1;
      for (const pair of node.items) {
        if (isScalar(pair.key) && typeof pair.key.value === 'symbol') {
          size += merge(out, pair.value);
          continue;
        }
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const child = build(pair.value);
        put(out, key, child.value);
        size += child.size;
      }
      building.delete(node);
      result = { value: out, size };
    } else if (isSeq(node)) {
      building.add(node);
      const out: unknown[] = [];
      let size = 1;
      for (const item of node.items) {
        const child = build(item);
        out.push(child.value);
        size += child.size;
      }
      building.delete(node);
      result = { value: out, size };
    } else {
      result = { value: isScalar(node) ? node.value : (node ?? null), size: 1 };
    }
    if (result.size > limit)
      throw new YamlTreeError(`the aliases expand the document by more than ${MAX_VALUES} values`);
    built.set(node, result);
    return result;
  }

  /** Copies the keys of a `<<` value over those of `out`; its size. */
  function merge(out: Record<string, unknown>, value: unknown): number {
    const node = target(value);
    // Of several mappings, the earlier win: they are applied last.
    const sources = isSeq(node) ? [...node.items].reverse() : [node];
    let size = 0;
    for (const source of sources) {
      if (!isMap(target(source))) throw new YamlTreeError('map merge requires map or sequence of maps as the value');
      const from = build(source);
      for (const [key, v] of Object.entries(from.value as Record<string, unknown>)) put(out, key, v);
      size += from.size;
    }
    return size;
  }

  return doc.contents === null ? null : build(doc.contents).value;
}
