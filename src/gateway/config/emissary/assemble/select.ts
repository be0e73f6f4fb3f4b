/**
 * @module gateway/config/emissary/assemble/select
 * Which records this gateway serves, by `ambassador_id` as Emissary
 * selects them: a record names the ids of the gateways that serve it (a
 * name or a list), `default` when it names none; the gateway serves those
 * that name its own. A record of another gateway is no error, and none of
 * its problems is reported: it is listed as skipped. The gateway's own form
 * follows the same rule, its `ambassador_id` taken out before validation.
 */
import { configProblem, type ConfigProblem } from '../../problems';
import type { RawRecord } from '../../validate';
import type { EmissaryEntry, SkippedRecord } from '../types';
import { ambassadorIds, isPlainObject } from '../values';

/** A record the gateway serves, as a copy that the later steps may change; `emissary` for an Emissary resource. */
export interface SelectedRecord {
  value: unknown;
  readonly source?: RawRecord['source'];
  readonly index?: number;
  readonly emissary?: EmissaryEntry['emissary'];
}

export interface Selection {
  readonly records: SelectedRecord[];
  readonly skipped: SkippedRecord[];
  readonly problems: ConfigProblem[];
}

function isEntry(raw: RawRecord): raw is EmissaryEntry {
  return 'emissary' in raw && isPlainObject((raw as EmissaryEntry).emissary);
}

function nameOf(raw: RawRecord, value: Record<string, unknown>): string {
  return typeof value.name === 'string' && value.name !== '' ? value.name : `#${raw.index ?? '?'}`;
}

/** The records served under `id`, those skipped, and the problems of the served Emissary resources. */
export function selectRecords(records: readonly RawRecord[], id: string): Selection {
  const selection: Selection = { records: [], skipped: [], problems: [] };
  for (const raw of records) {
    if (isEntry(raw)) {
      const origin = raw.emissary;
      const at = { source: raw.source, kind: origin.kind, record: origin.name };
      const ids = ambassadorIds(origin.ambassadorId);
      if ('problem' in ids) {
        selection.problems.push(configProblem({ ...at, path: `${origin.fieldPrefix}ambassador_id` }, ids.problem));
        continue;
      }
      if (!ids.includes(id)) {
        selection.skipped.push({ source: raw.source, kind: origin.kind, name: origin.name, ids });
        continue;
      }
      for (const p of origin.problems)
        selection.problems.push(configProblem({ ...at, path: p.field || undefined }, p.note));
      selection.records.push({
        value: raw.value === null ? null : structuredClone(raw.value),
        source: raw.source,
        index: raw.index,
        emissary: origin,
      });
      continue;
    }
    const value = raw.value;
    if (!isPlainObject(value)) {
      selection.records.push({ value, source: raw.source, index: raw.index });
      continue;
    }
    const { ambassador_id: written, ...rest } = value;
    // A Kubernetes Secret names no gateway: every one reads it, as Emissary reads every Secret it is shown.
    if (value.kind === 'Secret' && written === undefined) {
      selection.records.push({ value: rest, source: raw.source, index: raw.index });
      continue;
    }
    const ids = ambassadorIds(written);
    const kind = typeof value.kind === 'string' ? value.kind : undefined;
    if ('problem' in ids)
      selection.problems.push(
        configProblem({ source: raw.source, kind, record: nameOf(raw, value), path: 'ambassador_id' }, ids.problem),
      );
    else if (ids.includes(id)) selection.records.push({ value: rest, source: raw.source, index: raw.index });
    else selection.skipped.push({ source: raw.source, kind: kind ?? 'record', name: nameOf(raw, value), ids });
  }
  return selection;
}
