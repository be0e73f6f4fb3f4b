/**
 * @module gateway/config/emissary/assemble/assemble
 * The configuration from every record read, Emissary's resources among
 * them: the records this gateway's `ambassador_id` selects, what they take
 * from each other (apply-module), validated together as any records are,
 * their problems placed where they were written, and the report
 * `gatehouse check` gives of the Emissary resources.
 */
import type { ConfigProblem } from '../../problems';
import { assembleConfig, type ConfigResult, type RawRecord } from '../../validate';
import { applyModule, type Applied } from './apply-module';
import { relocateProblems } from './relocate';
import { selectRecords, type SelectedRecord } from './select';
import type { EmissaryReading, EmissaryReport, SkippedRecord } from '../types';

/** A record's source, with the fields it took from the ambassador Module, if any: the gateway applies those of a cluster only where there is one. */
function withModuleFields(record: SelectedRecord, applied: Applied): RawRecord['source'] {
  const fields = applied.injected.get(record);
  return fields && record.source ? { ...record.source, fromModule: [...fields.keys()] } : record.source;
}

/** What decides which records are served. */
export interface SelectOptions {
  /** This gateway's `ambassador_id`. Default `default`. */
  readonly ambassadorId?: string;
}

function report(
  id: string,
  records: readonly SelectedRecord[],
  skipped: readonly SkippedRecord[],
  applied: Applied,
): EmissaryReport {
  return {
    ambassadorId: id,
    records: records.flatMap((record) => {
      const origin = record.emissary;
      if (!origin) return [];
      return [
        {
          source: record.source,
          apiVersion: origin.apiVersion,
          kind: origin.kind,
          name: origin.name,
          ...(origin.namespace !== undefined ? { namespace: origin.namespace } : {}),
          became: origin.became,
          notes: [...origin.notes, ...(applied.notes.get(record) ?? [])],
        },
      ];
    }),
    skipped,
  };
}

/**
 * Validates `records` (Emissary entries among them) into a configuration,
 * as {@link assembleConfig} does, serving only those of this gateway's
 * `ambassador_id`. `sources` and `earlier` as there.
 */
export function assembleWithEmissary(
  records: readonly RawRecord[],
  sources: readonly string[],
  earlier: readonly ConfigProblem[],
  options: SelectOptions = {},
): ConfigResult & EmissaryReading {
  const id = options.ambassadorId ?? 'default';
  const selection = selectRecords(records, id);
  const served = selection.records;
  const applied = applyModule(served);
  const before = [...earlier, ...selection.problems];
  const result = assembleConfig(
    served
      .filter((r) => r.value !== null)
      .map((r) => ({ value: r.value, source: withModuleFields(r, applied), index: r.index })),
    sources,
    before,
  );
  const emissary =
    served.some((r) => r.emissary) || selection.skipped.length > 0
      ? { emissary: report(id, served, selection.skipped, applied) }
      : {};
  if (result.ok) return { ...result, ...emissary };
  const problems = [
    ...result.problems.slice(0, before.length),
    ...relocateProblems(result.problems.slice(before.length), served, applied),
  ];
  return { ok: false, problems, ...emissary };
}
