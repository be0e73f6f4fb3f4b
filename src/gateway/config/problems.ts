/**
 * @module gateway/config/problems
 * What is wrong with a configuration, said so that a person can find it: the
 * file, the Service manifest, the record and the field.
 */
import type { RecordSource } from './schema';

/** One thing wrong with a configuration. */
export interface ConfigProblem {
  /** The file, as the folder was named plus the file name (`config/services.yaml`). */
  readonly file?: string;
  /** The Service manifest's `metadata.name`, for records read from its annotation. */
  readonly service?: string;
  /** The record's kind, when it has one that can be shown. */
  readonly kind?: string;
  /** The record's name, or `#<n>` (its place in the file or annotation) when it has none. */
  readonly record?: string;
  /** The field, dotted (`labels.gateway.0.request_label_group`); absent for the record as a whole. */
  readonly path?: string;
  /** What is wrong. */
  readonly message: string;
  /** All of the above on one line, e.g. `config/services.yaml: service hotels: Mapping hotels-mapping: timeout_ms: expected number, received string`. */
  readonly text: string;
}

/** Where in the configuration a problem is. */
export interface ProblemLocation {
  source?: RecordSource;
  kind?: string;
  record?: string;
  path?: readonly PropertyKey[] | string;
}

/** Builds a problem and its one-line text. */
export function configProblem(location: ProblemLocation, message: string): ConfigProblem {
  const path =
    typeof location.path === 'string'
      ? location.path
      : location.path && location.path.length > 0
        ? location.path.map(String).join('.')
        : undefined;
  const parts: string[] = [];
  const file = location.source?.file;
  const service = location.source?.service;
  if (file) parts.push(file);
  if (service) parts.push(`service ${service}`);
  if (location.kind || location.record)
    parts.push(`${location.kind ?? 'record'}${location.record ? ` ${location.record}` : ''}`);
  if (path) parts.push(path);
  parts.push(message);
  return { file, service, kind: location.kind, record: location.record, path, message, text: parts.join(': ') };
}

/**
 * A configuration that cannot be served. Thrown by `createGateway` and
 * `reconfigure`, and by whatever loads the config at startup; it carries every
 * problem found, not only the first.
 */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(`invalid gateway configuration (${count}):\n${problems.map((p) => `  ${p.text}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}
