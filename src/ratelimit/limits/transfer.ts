/**
 * @module ratelimit/limits/transfer
 * A compiled limit table as a flat list of its nodes, parents first, to
 * carry it from the thread that compiled it in parts: copied in one message,
 * the table of an 8 MiB limits file held the receiving event loop for
 * almost half a second.
 */
import type { KeyBranch, LimitNode, LimitRule, LimitTable } from './index';

/** One node of a table: a domain's root, or the node a key and value lead to from its parent (an earlier entry). */
export type LimitEntry =
  | { domain: string; rule?: LimitRule }
  | { parent: number; key: string; value: string; wildcard?: readonly string[]; rule?: LimitRule };

/** The nodes of `table`, each after its parent, wildcards in their order. */
export function* limitEntries(table: LimitTable): Generator<LimitEntry> {
  let next = 0;
  function* below(node: LimitNode, id: number): Generator<LimitEntry> {
    for (const [key, branch] of node.keys ?? []) {
      const children: [LimitEntry, LimitNode][] = [];
      for (const [value, child] of branch.values ?? [])
        children.push([{ parent: id, key, value, rule: child.rule }, child]);
      for (const w of branch.wildcards ?? [])
        children.push([{ parent: id, key, value: w.parts.join('*'), wildcard: w.parts, rule: w.node.rule }, w.node]);
      if (branch.any) children.push([{ parent: id, key, value: '', rule: branch.any.rule }, branch.any]);
      for (const [entry, child] of children) {
        const childId = next++;
        yield entry;
        yield* below(child, childId);
      }
    }
  }
  for (const [domain, root] of table.domains) {
    const id = next++;
    yield { domain, rule: root.rule };
    yield* below(root, id);
  }
}

/** Builds a table back from its entries, as they come. */
export function createLimitTableBuilder(): {
  add(entry: LimitEntry): void;
  table(hasReplaces: boolean, ruleCount: number): LimitTable;
} {
  const nodes: LimitNode[] = [];
  const domains = new Map<string, LimitNode>();
  return {
    add(entry) {
      const node: LimitNode = entry.rule ? { rule: entry.rule } : {};
      nodes.push(node);
      if ('domain' in entry) {
        domains.set(entry.domain, node);
        return;
      }
      const parent = nodes[entry.parent];
      parent.keys ??= new Map();
      let branch: KeyBranch | undefined = parent.keys.get(entry.key);
      if (!branch) parent.keys.set(entry.key, (branch = {}));
      if (entry.wildcard) (branch.wildcards ??= []).push({ parts: entry.wildcard, node });
      else if (entry.value === '') branch.any = node;
      else (branch.values ??= new Map()).set(entry.value, node);
    },
    table: (hasReplaces, ruleCount) => ({ domains, hasReplaces, ruleCount }),
  };
}
