/**
 * @module gateway/config/emissary
 * Emissary-ingress's own files read as the gateway's records: resources
 * (`getambassador.io/v3alpha1`, `v2`, `v1`: `kind`, `metadata`, `spec`) and
 * the flat records of the `getambassador.io/config` annotation, the
 * ambassador Module's defaults, and `ambassador_id`. Pure functions from
 * parsed YAML to records and problems: they run wherever parsing runs.
 */
export { readEmissaryDocument, expandLists, type Located } from './read/document';
export { EMISSARY_ANNOTATION, oldAnnotationProblem, type DocumentPlace } from './read/forms';
export { metadataProblems } from './read/metadata';
export { assembleWithEmissary, type SelectOptions } from './assemble/assemble';
export type {
  EmissaryReading,
  EmissaryReport,
  EmissaryRecordReport,
  SkippedRecord,
  FieldNote,
  EmissaryEntry,
} from './types';
