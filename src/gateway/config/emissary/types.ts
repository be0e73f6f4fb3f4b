/**
 * @module gateway/config/emissary/types
 * What reading an Emissary resource yields: the record it becomes (if any),
 * what each of its fields became, and what the configuration as a whole
 * takes from it (the ambassador Module's defaults). Plain data only, so that
 * it crosses to wherever the records are assembled (a worker thread too).
 */
import type { RawRecord } from '../validate';
import type { RecordSource } from '../schema';

/** The apiVersions Emissary reads, by the version they are read as. */
export type EmissaryVersion = 'v3alpha1' | 'v2' | 'v1';

/** A field of an Emissary resource and what became of it, or why it is refused. */
export interface FieldNote {
  /** The field as the resource names it, relative to its fields (`stats_name`, `config.gzip`). */
  readonly field: string;
  readonly note: string;
}

/** An Emissary resource as read, before its fields are translated. */
export interface EmissaryResource {
  readonly apiVersion: string;
  readonly version: EmissaryVersion;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  /** Where its fields are in the document: `spec.` for a resource, `` for the flat form of an annotation. */
  readonly fieldPrefix: string;
  /** Its fields, `ambassador_id` and (flat form) `namespace` taken out. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Its `metadata.labels` (a resource's), which a Host's mappingSelector selects by. */
  readonly labels?: Readonly<Record<string, string>>;
}

/** A Mapping default the ambassador Module gives: the value and where in the Module it is written. */
export interface ModuleDefault {
  readonly value: unknown;
  /** The Module field it comes from, relative to its fields (`config.defaults.httpmapping.add_request_headers`). */
  readonly from: string;
}

/** What the ambassador Module gives every Mapping and the reading of the others. */
export interface ModuleSettings {
  /** Fields a Mapping takes when it has none of its own: header edits, timeout_ms, upstream settings. */
  readonly mappingDefaults: Readonly<Record<string, ModuleDefault>>;
  /** `default_labels`: the labels put first in each group, by domain. */
  readonly defaultLabels: Readonly<Record<string, readonly unknown[]>>;
  /** `default_label_domain` (`ambassador`). */
  readonly defaultLabelDomain: string;
  /** `add_linkerd_headers`: every Mapping adds `l5d-dst-override`. */
  readonly linkerdHeaders: boolean;
  /** `use_ambassador_namespace_for_service_resolution`: names are not qualified with a record's namespace. */
  readonly ownNamespace: boolean;
}

/** What one resource becomes. */
export interface Translation {
  /** The gateway record, validated later with the rest; absent when the resource is served by no record. */
  readonly record?: Record<string, unknown>;
  /** In a few words: `Mapping quote`, or what happens instead of a record. */
  readonly became: string;
  /** Fields ignored or served otherwise than by Emissary. */
  readonly notes: readonly FieldNote[];
  /** Fields, or the whole resource (field ``), refused. */
  readonly problems: readonly FieldNote[];
  /** Record fields that the resource names otherwise (`hostname` ← `host`), for problems. */
  readonly renamed?: Readonly<Record<string, string>>;
  /** The record field naming an upstream by a Kubernetes name, which the namespace qualifies. */
  readonly serviceField?: 'service' | 'auth_service';
  /** A Mapping's own `add_linkerd_headers`. */
  readonly linkerdHeaders?: boolean;
  /** The ambassador Module's settings. */
  readonly module?: ModuleSettings;
}

/**
 * Where an entry came from and what it became, its notes and problems at
 * their paths in the document (`spec.stats_name`); its problems are
 * reported only when the gateway serves its `ambassador_id`.
 */
export interface EmissaryOrigin extends Omit<Translation, 'record'> {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  /** Where its fields are in the document (`spec.` or ``). */
  readonly fieldPrefix: string;
  /** `ambassador_id` as written (a name, a list of names), or undefined. */
  readonly ambassadorId: unknown;
}

/** An Emissary resource among the raw records: `value` is its record, or null when it becomes none. */
export interface EmissaryEntry extends RawRecord {
  readonly emissary: EmissaryOrigin;
}

/** One Emissary resource in the report of `gatehouse check`. */
export interface EmissaryRecordReport {
  readonly source?: RecordSource;
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly became: string;
  /** Each field ignored or served otherwise, named as the resource names it (`spec.stats_name`). */
  readonly notes: readonly FieldNote[];
}

/** A record left out because its `ambassador_id` is another gateway's. */
export interface SkippedRecord {
  readonly source?: RecordSource;
  readonly kind: string;
  readonly name: string;
  /** Its ids (`default` when it names none). */
  readonly ids: readonly string[];
}

/** What `gatehouse check` says of the Emissary resources of a configuration. */
export interface EmissaryReport {
  /** This gateway's `ambassador_id`. */
  readonly ambassadorId: string;
  readonly records: readonly EmissaryRecordReport[];
  readonly skipped: readonly SkippedRecord[];
}

/** A configuration result with its Emissary report, when it read any Emissary resource or skipped a record. */
export interface EmissaryReading {
  readonly emissary?: EmissaryReport;
}
