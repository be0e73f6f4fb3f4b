/**
 * @module gateway/config/emissary/assemble/relocate
 * Problems of the records an Emissary resource became, said where the
 * resource has them: `spec.prefix` for a resource's `prefix`, `host` for
 * the `hostname` a v2 `host` became, `metadata.name` for its name; and a
 * problem of a field a Mapping took from the ambassador Module said once,
 * at the Module field it came from.
 */
import { configProblem, type ConfigProblem } from '../../problems';
import type { Applied } from './apply-module';
import type { SelectedRecord } from './select';
import { isPlainObject } from '../values';

function keyOf(
  file: string | undefined,
  service: string | undefined,
  kind: string | undefined,
  name: string | undefined,
): string {
  return [file ?? '', service ?? '', kind ?? '', name ?? ''].join('\0');
}

/** Where a problem of an Emissary resource's record is in the resource. */
function resourcePath(record: SelectedRecord, path: string): string {
  const origin = record.emissary!;
  const [top, ...rest] = path.split('.');
  if (top === 'name' && rest.length === 0) return origin.fieldPrefix === 'spec.' ? 'metadata.name' : 'name';
  return [`${origin.fieldPrefix}${origin.renamed?.[top] ?? top}`, ...rest].join('.');
}

/**
 * The path of a problem in a label as the Mapping wrote it: the Module's
 * default labels put first in its groups taken off the label's index
 * (`labels.<domain>.<group>.<name>.<label>`); undefined for a problem in
 * one of those defaults, which the Module's own check says at the Module.
 */
function withoutDefaultLabels(path: string, prepended: ReadonlyMap<string, number> | undefined): string | undefined {
  if (prepended === undefined || !path.startsWith('labels.')) return path;
  const parts = path.split('.');
  const count = prepended.get(parts[1]);
  if (count === undefined || parts.length < 5 || !/^[0-9]+$/.test(parts[4])) return path;
  const index = Number(parts[4]);
  if (index < count) return undefined;
  parts[4] = String(index - count);
  return parts.join('.');
}

/** `problems` with those of the served records' fields placed where the records were written. */
export function relocateProblems(
  problems: readonly ConfigProblem[],
  records: readonly SelectedRecord[],
  applied: Applied,
): ConfigProblem[] {
  const byKey = new Map<string, SelectedRecord>();
  for (const record of records) {
    if (!isPlainObject(record.value)) continue;
    const { kind, name } = record.value;
    if (typeof kind === 'string' && typeof name === 'string')
      byKey.set(keyOf(record.source?.file, record.source?.service, kind, name), record);
  }
  const module = records.find((r) => r.emissary?.module !== undefined);
  const out: ConfigProblem[] = [];
  const said = new Set<string>();
  for (let p of problems) {
    const record = p.kind === undefined ? undefined : byKey.get(keyOf(p.file, p.service, p.kind, p.record));
    if (record !== undefined && p.path !== undefined) {
      const path = withoutDefaultLabels(p.path, applied.prepended.get(record));
      if (path === undefined) continue;
      if (path !== p.path)
        p = configProblem({ source: record.source, kind: p.kind, record: p.record, path }, p.message);
    }
    let moved = p;
    const from =
      p.path === undefined || record === undefined
        ? undefined
        : applied.injected.get(record)?.get(p.path.split('.')[0]);
    if (from !== undefined && module?.emissary && p.path !== undefined) {
      const rest = p.path.split('.').slice(1);
      const message = `${p.message} (given to every Mapping without its own ${p.path.split('.')[0]})`;
      moved = configProblem(
        {
          source: module.source,
          kind: 'Module',
          record: module.emissary.name,
          path: [`${module.emissary.fieldPrefix}${from}`, ...rest].join('.'),
        },
        message,
      );
    } else if (record?.emissary) {
      moved = configProblem(
        {
          source: record.source,
          kind: p.kind,
          record: p.record,
          path: p.path === undefined ? undefined : resourcePath(record, p.path),
        },
        p.message,
      );
    }
    if (said.has(moved.text)) continue;
    said.add(moved.text);
    out.push(moved);
  }
  return out;
}
