/**
 * @module gateway/config/labels
 * A Mapping's rate-limit labels, `labels: {<domain>: [<group>, ...]}`, each
 * group one key (`request_label_group`, or any name: Emissary ignores it)
 * holding a list of labels, each one entry of the descriptor the group
 * becomes. A label is written in any of the forms Emissary reads:
 *
 * - `"text"`: `generic_key=text`; `"source_cluster"`, `"destination_cluster"`
 *   and `"remote_address"` are those labels instead, as in Emissary;
 * - `{<key>: {header, omit_if_not_present}}`: the header's value under `<key>`;
 * - `{generic_key: "text"}` or `{generic_key: {value, key}}` (key by default `generic_key`);
 * - `{request_headers: {key, header_name, omit_if_not_present}}`;
 * - `{source_cluster: {}}`, `{destination_cluster: {}}`, `{remote_address: {}}`
 *   (a `key` may be given; it is the label's own name);
 * - any of these actions under a name of the label's own, as Emissary's
 *   rate-limit tutorial writes `{x-test: {request_headers: {...}}}`.
 *
 * Records keep labels as written (header names in lower case, defaults
 * filled in); {@link readLabel} says what each one reads.
 */
import { z } from 'zod';
import { dataRecord } from '../../files';
import { HEADER_NAME } from './headers';

/** A label as written and validated. */
export type LabelSpecifier = string | Readonly<Record<string, unknown>>;
/** One group: its name and its labels. */
export type LabelGroup = Readonly<Record<string, readonly LabelSpecifier[]>>;

/** The labels filled in by the gateway, not read from a header: Envoy's actions of the same names. */
export const LABEL_ACTIONS = ['source_cluster', 'destination_cluster', 'remote_address'] as const;
export type LabelAction = (typeof LABEL_ACTIONS)[number];

/** What a label puts in its descriptor entry. */
export type LabelSource =
  | { readonly kind: 'header'; readonly key: string; readonly header: string; readonly omit: boolean }
  | { readonly kind: 'literal'; readonly key: string; readonly value: string }
  | { readonly kind: LabelAction; readonly key: LabelAction };

/**
 * The pseudo-headers Envoy's `request_headers` action reads besides real
 * headers, as Emissary passes a label's `header` on to it: the request's
 * Host, method, path with its query, and scheme.
 */
export const PSEUDO_HEADERS: readonly string[] = [':authority', ':method', ':path', ':scheme'];

/** Whether a label's header (validated) is one of {@link PSEUDO_HEADERS}: a header name holds no colon, so its first character tells. */
export function isPseudoHeader(name: string): boolean {
  return name.charCodeAt(0) === 58;
}

const headerName = z
  .string()
  .refine(
    (h) => HEADER_NAME.test(h) || PSEUDO_HEADERS.includes(h.toLowerCase()),
    'must be an HTTP header name, or :authority, :method, :path or :scheme',
  )
  .transform((h) => h.toLowerCase());

/** The seed's (and Emissary 1's) `{<key>: {header, omit_if_not_present}}`. */
const headerLabel = z.strictObject({ header: headerName, omit_if_not_present: z.boolean().default(false) });
const requestHeaders = z.strictObject({
  key: z.string().min(1),
  header_name: headerName,
  omit_if_not_present: z.boolean().default(false),
});
// `v2Shorthand` is how Emissary's stored resources remember a v2 string label: accepted, it changes nothing.
const genericKey = z.union([
  z.string().min(1),
  z.strictObject({ key: z.string().min(1).optional(), value: z.string().min(1), v2Shorthand: z.boolean().optional() }),
]);
const action = (name: LabelAction) =>
  z.strictObject({ key: z.literal(name, { error: `must be ${name}, the label's own name` }).optional() });

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The actions a label may name, as Emissary's v3alpha1 Mapping writes them. */
const ACTIONS: readonly string[] = ['request_headers', 'generic_key', ...LABEL_ACTIONS];

/**
 * The action a label wraps under a name of its own, as Emissary's rate-limit
 * tutorial writes it (`- x-test: {request_headers: {key, header_name}}`):
 * the name is only a name there, and the action is read as if written alone.
 */
function wrappedAction(name: string, argument: unknown): string | undefined {
  if (ACTIONS.includes(name) || !isPlainObject(argument)) return undefined;
  const keys = Object.keys(argument);
  return keys.length === 1 && ACTIONS.includes(keys[0]) ? keys[0] : undefined;
}

/** The schema a one-key label `{name: argument}` is read with. */
function argumentSchema(name: string, argument: unknown): z.ZodType {
  const seedForm = isPlainObject(argument) && 'header' in argument;
  if (seedForm) return headerLabel;
  if (name === 'generic_key') return genericKey;
  if (name === 'request_headers') return requestHeaders;
  if ((LABEL_ACTIONS as readonly string[]).includes(name)) return action(name as LabelAction);
  return unknownAction(name);
}

/** A label `{name: {...}}` that names no action and is no `{<key>: {header}}` either, refused as Emissary refuses it. */
function unknownAction(name: string): z.ZodType {
  return z.unknown().superRefine((_argument, ctx) => {
    ctx.addIssue({
      code: 'custom',
      message: `'${name}' is no label action (${ACTIONS.join(', ')}), nor a label {<key>: {header: <name>}}`,
    });
  });
}

/** One label, validated; its problems are reported at their own paths. */
const labelSchema = z.unknown().transform((raw, ctx): LabelSpecifier => {
  if (typeof raw === 'string' && raw !== '') return raw;
  if (!isPlainObject(raw) || Object.keys(raw).length !== 1) {
    // Several keys are most often a label's fields indented one level too far out (`- x-user:` then
    // `request_headers:` beside it): said by name, since Emissary drops such a label with an error too.
    const keys = isPlainObject(raw) ? Object.keys(raw) : [];
    const several =
      keys.length > 1
        ? `has ${keys.length} keys (${keys.join(', ')}) where a label has one (a field written beside its label, not under it?): `
        : '';
    ctx.issues.push({
      code: 'custom',
      input: raw,
      message: `${several}a label is a string (a generic_key value) or one key naming it: {<key>: {header}}, {request_headers: {key, header_name}}, {generic_key: {value}}, {remote_address: {}}...`,
    });
    return z.NEVER;
  }
  let [name, argument] = Object.entries(raw)[0];
  const at = [name];
  const wrapped = wrappedAction(name, argument);
  if (wrapped !== undefined) {
    [name, argument] = [wrapped, (argument as Record<string, unknown>)[wrapped]];
    at.push(wrapped);
  }
  const parsed = argumentSchema(name, argument).safeParse(argument ?? {});
  if (parsed.success) return { [name]: parsed.data };
  for (const problem of parsed.error.issues)
    ctx.issues.push({ ...problem, path: [...at, ...problem.path] } as z.core.$ZodRawIssue);
  return z.NEVER;
});

/** One group: `{<name>: [<label>, ...]}`. */
const groupSchema = z
  .record(z.string().min(1), z.array(labelSchema).min(1, 'a label group holds at least one label'))
  .refine(
    (group) => Object.keys(group).length === 1,
    'a label group is one key (request_label_group, or any name) holding its labels',
  );

/** `labels: {<domain>: [{<group>: [...]}, ...]}` */
export const labelsSchema = dataRecord(z.string().min(1), z.array(groupSchema));

/** The labels of a group. */
export function groupLabels(group: LabelGroup): readonly LabelSpecifier[] {
  for (const name in group) return group[name];
  return [];
}

/** What a validated label reads. */
export function readLabel(label: LabelSpecifier): LabelSource {
  if (typeof label === 'string') {
    return (LABEL_ACTIONS as readonly string[]).includes(label)
      ? { kind: label as LabelAction, key: label as LabelAction }
      : { kind: 'literal', key: 'generic_key', value: label };
  }
  const [name, argument] = Object.entries(label)[0] as [string, Record<string, unknown> | string];
  if (typeof argument === 'string') return { kind: 'literal', key: 'generic_key', value: argument };
  if (typeof argument.header === 'string')
    return { kind: 'header', key: name, header: argument.header, omit: argument.omit_if_not_present === true };
  if (name === 'request_headers') {
    return {
      kind: 'header',
      key: argument.key as string,
      header: argument.header_name as string,
      omit: argument.omit_if_not_present === true,
    };
  }
  if (name === 'generic_key')
    return {
      kind: 'literal',
      key: (argument.key as string | undefined) ?? 'generic_key',
      value: argument.value as string,
    };
  return { kind: name as LabelAction, key: name as LabelAction };
}

/** A label in a few words, for `gatehouse check` and diag: `user ← x-travel-user (if present)`, `generic_key="hotels"`. */
export function describeLabel(label: LabelSpecifier): string {
  const source = readLabel(label);
  switch (source.kind) {
    case 'header':
      return `${source.key} ← ${source.header}${source.omit ? ' (if present)' : ''}`;
    case 'literal':
      return source.key === 'generic_key' ? `"${source.value}"` : `${source.key}="${source.value}"`;
    default:
      return source.kind;
  }
}

/** The request headers a Mapping's labels read, in lower case. */
export function labelHeaders(labels: Readonly<Record<string, readonly LabelGroup[]>> | undefined): string[] {
  const names: string[] = [];
  for (const groups of Object.values(labels ?? {})) {
    for (const group of groups) {
      for (const label of groupLabels(group)) {
        const source = readLabel(label);
        if (source.kind === 'header' && !isPseudoHeader(source.header)) names.push(source.header);
      }
    }
  }
  return names;
}
