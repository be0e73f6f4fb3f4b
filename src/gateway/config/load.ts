/**
 * @module gateway/config/load
 * Reads the gateway's records from a config folder.
 *
 * The rule, file by file and document by document:
 * - Every `*.yaml` / `*.yml` file directly in the folder is read (no
 *   sub-folders, no dotfiles), in name order, except `ratelimit.yaml` /
 *   `ratelimit.yml`, which hold the rate-limit service's own limits, and
 *   `bookings.yaml`, the booking modules' data.
 * - A document whose `kind` is a gateway kind (`Mapping`, `AuthService`,
 *   `RateLimitService`) or whose `apiVersion` starts with `gateway/` is a
 *   record, validated as one.
 * - Any other document with `kind` and `metadata` is a Kubernetes-style
 *   manifest (a `Service`, typically). The annotation `<domain>/config` of its
 *   `metadata.annotations`, when there is one, is a YAML string of one or more
 *   records separated by `---`; every document in it is a record. The
 *   manifest's `metadata.name` names it in messages.
 * - Emissary's resources (`apiVersion: getambassador.io/...`) and the
 *   records of its `getambassador.io/config` annotation are read as the
 *   records they become (see ./emissary); a `kind: List` gives its items.
 *   Every record is served only when its `ambassador_id` names this
 *   gateway's (`default` when it names none).
 * - A Kubernetes Secret (`apiVersion: v1`, `kind: Secret`) is read as the
 *   gateway's Secret record (see ./tls/secret), whatever the `ambassador_id`.
 * - Every other document (data files, an envoy rate-limit config with
 *   `domain` and `descriptors`, a manifest without records) is no gateway
 *   record and is ignored; the result lists it with what it looks like
 *   (./documents), for `gatehouse check` to say.
 * - A file with no document at all (empty, blank, only comments or `---`)
 *   is refused: it is what a reload sees of a file being written over.
 */
import { errorText, fileSystemSource } from '../../files';
import { documentShape, documentWhat, type IgnoredDocument } from './documents';
import { configProblem, type ConfigProblem } from './problems';
import type { RecordSource } from './schema';
import { API_VERSION } from './schema';
import { RECORD_KINDS, type ConfigResult, type RawRecord } from './validate';
import { isSecretDocument, readSecretDocument } from './tls';
import {
  assembleWithEmissary,
  EMISSARY_ANNOTATION,
  expandLists,
  metadataProblems,
  oldAnnotationProblem,
  readEmissaryDocument,
  type EmissaryReading,
} from './emissary';
import { readRecordFiles, unreadableFolder, type ConfigFile, type ReadOptions } from './record-files';
import { annotationOffset, parseDocuments } from './yaml-documents';

export interface LoadOptions {
  /** The domain part of the annotation key `<domain>/config`. Default `gatehouse.io`. */
  annotationDomain?: string;
  /** This gateway's `ambassador_id`: the records it serves name it, or none (`default`). Default `default`. */
  ambassadorId?: string;
}

/** A configuration as loaded, with what `gatehouse check` says of its Emissary resources and of the documents that hold no record. */
export type LoadedConfig = ConfigResult & EmissaryReading & { ignored?: IgnoredDocument[] };

const EMPTY_FILE =
  'holds no YAML document (it is empty, or only comments): refused, since a file caught while it is being written would drop its records; delete the file to have none';
const API_GROUP = API_VERSION.slice(0, API_VERSION.indexOf('/') + 1);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isRecordDocument(doc: Record<string, unknown>): boolean {
  const { kind, apiVersion } = doc;
  return (
    (typeof kind === 'string' && RECORD_KINDS.includes(kind)) ||
    (typeof apiVersion === 'string' && apiVersion.startsWith(API_GROUP))
  );
}

function isManifest(
  doc: Record<string, unknown>,
): doc is Record<string, unknown> & { metadata: Record<string, unknown> } {
  return typeof doc.kind === 'string' && isPlainObject(doc.metadata);
}

/**
 * Reads the records of already-read files by the folder rule (see the module
 * comment) and validates them. The configuration's `sources` are the files
 * that held records. Pure: no file access.
 */
export function parseConfigFiles(files: readonly ConfigFile[], options: LoadOptions = {}): LoadedConfig {
  const domain = options.annotationDomain ?? 'gatehouse.io';
  const annotation = `${domain}/config`;
  // Emissary's annotation is read beside the gateway's own, unless the domain makes them one.
  const annotationKeys = annotation === EMISSARY_ANNOTATION ? [annotation] : [annotation, EMISSARY_ANNOTATION];
  const problems: ConfigProblem[] = [];
  const records: RawRecord[] = [];
  const ignored: IgnoredDocument[] = [];

  for (const { file, text } of files) {
    try {
      readRecords(file, text, { annotationKeys, domain }, records, problems, ignored);
    } catch (err) {
      // Whatever a file could still throw is a problem of that file, never the end of a reload.
      problems.push(configProblem({ source: { file } }, `cannot be read as records: ${errorText(err)}`));
    }
  }
  const sources = [...new Set(records.map((r) => r.source!.file))];
  const loaded: LoadedConfig = assembleWithEmissary(records, sources, problems, { ambassadorId: options.ambassadorId });
  if (ignored.length > 0) loaded.ignored = ignored;
  return loaded;
}

/**
 * Adds the records of one file to `records`, its problems to `problems`, and
 * its documents that hold no record to `ignored`; `annotationKeys` are the
 * annotations read, `domain` the gateway's annotation domain (a Secret's own).
 */
function readRecords(
  file: string,
  text: string,
  { annotationKeys, domain }: { annotationKeys: readonly string[]; domain: string },
  records: RawRecord[],
  problems: ConfigProblem[],
  ignored: IgnoredDocument[],
): void {
  const fileSource: RecordSource = { file };
  const before = problems.length;
  let documents = 0;
  const parsed = parseDocuments(text, fileSource, 'YAML', problems);
  const counted = (function* () {
    for (const document of parsed) {
      documents++;
      yield document;
    }
  })();
  const ignore = (doc: unknown, index: number) => {
    const shape = documentShape(doc);
    ignored.push({ file, index, shape, what: documentWhat(doc, shape) });
  };
  for (const { value: doc, index, node, path } of expandLists(counted)) {
    if (Array.isArray(doc)) {
      // A list of records is no way of writing them; said, rather than passed over in silence.
      if (doc.some((item) => isPlainObject(item) && isRecordDocument(item))) {
        problems.push(
          configProblem(
            { source: fileSource },
            `document ${index} is a list of records: write each record as a document of its own, separated by ---`,
          ),
        );
      } else ignore(doc, index);
      continue;
    }
    if (!isPlainObject(doc)) {
      ignore(doc, index);
      continue;
    }
    if (isSecretDocument(doc)) {
      records.push(readSecretDocument(doc, { source: fileSource, index }, domain));
      continue;
    }
    const emissary = readEmissaryDocument(doc, { source: fileSource, index });
    if (emissary !== undefined) {
      records.push(...emissary);
      continue;
    }
    if (isRecordDocument(doc)) {
      records.push({ value: doc, source: fileSource, index });
      continue;
    }
    if (!isManifest(doc)) {
      ignore(doc, index);
      continue;
    }
    const annotations = doc.metadata.annotations;
    const service = typeof doc.metadata.name === 'string' ? doc.metadata.name : undefined;
    const source: RecordSource = service === undefined ? { file } : { file, service };
    // A manifest without records of its own (a Deployment beside the Services) is ignored as it should be, and said in the report.
    if (annotations === undefined || annotations === null) {
      ignore(doc, index);
      continue;
    }
    if (!isPlainObject(annotations)) {
      problems.push(configProblem({ source, path: 'metadata.annotations' }, 'expected a mapping'));
      continue;
    }
    const namespace = typeof doc.metadata.namespace === 'string' ? doc.metadata.namespace : undefined;
    if (!annotationKeys.some((key) => annotations[key] !== undefined)) ignore(doc, index);
    else {
      // The manifest's name and namespace are its records' service and namespace: a misspelt one is refused, not dropped.
      for (const { field, note } of metadataProblems(doc.metadata))
        problems.push(configProblem({ source, path: field }, note));
    }
    const old = oldAnnotationProblem(annotations);
    if (old !== undefined) problems.push(configProblem({ source, path: old.path }, old.message));
    for (const key of annotationKeys) {
      const value = annotations[key];
      if (value === undefined) continue;
      if (typeof value !== 'string') {
        problems.push(
          configProblem({ source, path: `metadata.annotations.${key}` }, 'expected a YAML string of records'),
        );
        continue;
      }
      const offset = annotationOffset(node, [...path, 'metadata', 'annotations', key], text);
      for (const record of parseDocuments(value, source, `annotation ${key}: YAML`, problems, offset)) {
        const place = { source, index: record.index, annotation: key, namespace };
        records.push(
          ...(readEmissaryDocument(record.value, place) ?? [{ value: record.value, source, index: record.index }]),
        );
      }
    }
  }
  if (documents === 0 && problems.length === before) {
    // What a reload sees of a file being written over: truncated, or only its heading comments so far.
    problems.push(configProblem({ source: fileSource }, EMPTY_FILE));
  }
}

/**
 * Reads every gateway config file of `dir` (see the module comment for which)
 * and validates the records in them. Resolves to the whole configuration or to
 * every problem found, each naming file, service, record and field; never
 * rejects.
 */
export async function loadConfig(dir: string, options: LoadOptions & ReadOptions = {}): Promise<LoadedConfig> {
  let names: string[];
  try {
    names = await (options.source ?? fileSystemSource).list(dir);
  } catch (err) {
    return { ok: false, problems: [unreadableFolder(dir, err)] };
  }
  const { files, problems } = await readRecordFiles(dir, names, options);
  const result = parseConfigFiles(files, options);
  if (problems.length === 0) return result;
  return { ok: false, problems: [...problems, ...(result.ok ? [] : result.problems)], emissary: result.emissary };
}
