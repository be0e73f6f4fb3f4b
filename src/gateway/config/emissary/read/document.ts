/**
 * @module gateway/config/emissary/read/document
 * One parsed document as the entries it gives the configuration: an
 * Emissary resource becomes one entry, holding the gateway record it
 * translates to (or none), what became of each field and what is refused;
 * a `kind: List` (what `kubectl get -o yaml` writes) gives its items.
 */
import { readResource, type DocumentPlace } from './forms';
import { translateMapping } from '../kinds/mapping';
import { translateModule } from '../kinds/module';
import { OTHER_KINDS } from '../kinds/other-kinds';
import { translateAuthService, translateRateLimitService, translateTracingService } from '../kinds/services';
import { translateHost, translateTlsContext } from '../kinds/tls-kinds';
import type { EmissaryEntry, EmissaryResource, FieldNote, Translation } from '../types';
import { isPlainObject } from '../values';

const TRANSLATORS: Readonly<Record<string, (r: EmissaryResource) => Translation>> = {
  Mapping: translateMapping,
  AuthService: translateAuthService,
  RateLimitService: translateRateLimitService,
  Module: translateModule,
  Host: translateHost,
  TLSContext: translateTlsContext,
  TracingService: translateTracingService,
  ...OTHER_KINDS,
};

/** An unknown kind of Emissary's group: refused, so that a resource meant to do something is not passed over. */
function unknownKind(r: EmissaryResource): Translation {
  return {
    became: 'nothing',
    notes: [],
    problems: [
      { field: 'kind', note: `'${r.kind}' is not a kind this gateway reads: ${Object.keys(TRANSLATORS).join(', ')}` },
    ],
  };
}

function absolute(prefix: string, notes: readonly FieldNote[]): FieldNote[] {
  return notes.map((n) => ({
    field: n.field === '' || n.field === 'kind' ? n.field : `${prefix}${n.field}`,
    note: n.note,
  }));
}

/**
 * The entries of one document when it is Emissary's (see forms): a
 * resource of Emissary's group, an Ingress of class ambassador, or any
 * document of the `getambassador.io/config` annotation. Undefined for a
 * document that is not, which is read as before.
 */
export function readEmissaryDocument(doc: unknown, place: DocumentPlace): EmissaryEntry[] | undefined {
  if (!isPlainObject(doc)) return undefined;
  const read = readResource(doc, place);
  if (read === undefined) return undefined;
  const { source, index } = place;
  if ('refused' in read) {
    const { refused, apiVersion, kind, name, ambassadorId } = read;
    return [
      {
        value: null,
        source,
        index,
        emissary: {
          apiVersion,
          kind,
          name,
          fieldPrefix: '',
          ambassadorId,
          became: 'nothing',
          notes: [],
          problems: [{ field: '', note: refused }],
        },
      },
    ];
  }
  const { resource: r, ambassadorId } = read;
  const { record, ...t } = (TRANSLATORS[r.kind] ?? unknownKind)(r);
  const origin = {
    ...t,
    apiVersion: r.apiVersion,
    kind: r.kind,
    name: r.name,
    ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
    fieldPrefix: r.fieldPrefix,
    ambassadorId,
    notes: absolute(r.fieldPrefix, t.notes),
    problems: [...read.problems, ...absolute(r.fieldPrefix, t.problems)],
  };
  return [{ value: record ?? null, source, index, emissary: origin }];
}

/** A document of a stream, with the path of its value in the document (for a List's items). */
export interface Located {
  readonly value: unknown;
  readonly path: readonly (string | number)[];
}

/**
 * The documents of a stream with each `kind: List` (or `<Kind>List`, as
 * `kubectl get mappings -o yaml` writes) replaced by its items, each with
 * its path in its document; one at a time, as the stream gives them.
 */
export function* expandLists<T extends { value: unknown }>(documents: Iterable<T>): Generator<T & Located, void> {
  for (const doc of documents) {
    const v = doc.value;
    if (isPlainObject(v) && typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items)) {
      for (let i = 0; i < v.items.length; i++) yield { ...doc, value: v.items[i] as unknown, path: ['items', i] };
    } else yield { ...doc, path: [] };
  }
}
