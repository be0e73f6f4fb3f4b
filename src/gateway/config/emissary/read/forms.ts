/**
 * @module gateway/config/emissary/read/forms
 * Which documents are Emissary's, and their two forms: a Kubernetes
 * resource (`apiVersion: getambassador.io/v3alpha1`, `kind`,
 * `metadata.name` and `namespace`, the fields under `spec`) and the flat
 * form of the `getambassador.io/config` annotation (`name` and the fields
 * beside `apiVersion` and `kind`). A document of Emissary's group in a
 * version it does not read, or in the annotation and of no Emissary
 * version, is read as a resource that is refused, so that it is never
 * passed over.
 */
import type { RecordSource } from '../../schema';
import type { EmissaryResource, EmissaryVersion } from '../types';
import { isPlainObject } from '../values';
import { metadataProblems } from './metadata';

/** The annotation that holds Emissary's records on a Service. */
export const EMISSARY_ANNOTATION = 'getambassador.io/config';

/** Ambassador 0.x's annotation, `ambassador: |`, which Emissary reads no more. */
const OLD_ANNOTATION = 'ambassador';

/**
 * Why a manifest's annotations cannot be served as they are, when they hold
 * Emissary records under Ambassador 0.x's annotation `ambassador`: Emissary
 * no longer reads it, and passing it over would leave its paths a silent 404.
 * Undefined for annotations without it, or whose `ambassador` holds no record.
 */
export function oldAnnotationProblem(
  annotations: Record<string, unknown>,
): { path: string; message: string } | undefined {
  const value = annotations[OLD_ANNOTATION];
  if (typeof value !== 'string' || !/^\s*apiVersion:\s*['"]?(getambassador\.io|ambassador)\//m.test(value))
    return undefined;
  return {
    path: `metadata.annotations.${OLD_ANNOTATION}`,
    message: `is Ambassador 0.x's annotation, which Emissary no longer reads: move its records to the ${EMISSARY_ANNOTATION} annotation (apiVersion getambassador.io/v2)`,
  };
}

/** Where a document was read, for its entries. */
export interface DocumentPlace {
  readonly source: RecordSource;
  /** Its 1-based place in its file or annotation. */
  readonly index: number;
  /** The annotation it was read from, when it was. */
  readonly annotation?: string;
  /** The `metadata.namespace` of the manifest whose annotation held it: the namespace of a record that names none. */
  readonly namespace?: string;
}

/** A document read as an Emissary resource, or why it cannot be: its name (or `#<n>`) and the problem. */
export type ReadResource =
  | {
      readonly resource: EmissaryResource;
      readonly ambassadorId: unknown;
      readonly problems: readonly { field: string; note: string }[];
    }
  | {
      readonly refused: string;
      readonly apiVersion: string;
      readonly kind: string;
      readonly name: string;
      readonly ambassadorId: unknown;
    };

const VERSIONS = 'getambassador.io/v3alpha1, getambassador.io/v2 or getambassador.io/v1';

/**
 * Why a resource of `x.getambassador.io`, the group of Emissary 2.0's
 * developer previews (`AmbassadorMapping`, `AmbassadorHost`...), is
 * refused: Emissary 2.0 itself came out reading `getambassador.io/v3alpha1`
 * and the kinds' short names instead, and reads this group no more.
 */
function previewRefusal(apiVersion: string, kind: unknown): string {
  const renamed =
    typeof kind === 'string' && /^Ambassador(Mapping|Host|Listener|TCPMapping)$/.test(kind)
      ? `, kind ${kind.slice('Ambassador'.length)}`
      : '';
  return `apiVersion: ${apiVersion} is the group of Emissary 2.0's previews, which Emissary 2 and 3 no longer read: write getambassador.io/v3alpha1${renamed}`;
}

/**
 * The Emissary version an apiVersion is read as; a refusal for one of
 * Emissary's that is not read; undefined for one that is not Emissary's.
 */
function versionOf(apiVersion: unknown, kind: unknown): EmissaryVersion | { refused: string } | undefined {
  if (typeof apiVersion !== 'string') return undefined;
  const m = /^(x\.getambassador\.io|getambassador\.io|ambassador)\/(.*)$/.exec(apiVersion);
  if (!m) return undefined;
  if (m[1] === 'x.getambassador.io') return { refused: previewRefusal(apiVersion, kind) };
  const version = m[2];
  if (version === 'v3alpha1' && m[1] === 'getambassador.io') return 'v3alpha1';
  if (version === 'v2' || version === 'v1') return version;
  if (version === 'v0')
    return {
      refused: `apiVersion: ${apiVersion} is the v0 form, which Emissary 2 and 3 no longer read either: write ${VERSIONS}`,
    };
  return { refused: `apiVersion: ${apiVersion} is not a version Emissary serves: write ${VERSIONS}` };
}

/**
 * Whether a document is an Ingress that Emissary would serve: a Kubernetes
 * Ingress of class `ambassador`, or a Knative Ingress of Ambassador's class.
 */
export function isEmissaryIngress(doc: Record<string, unknown>): boolean {
  if (doc.kind !== 'Ingress' || typeof doc.apiVersion !== 'string') return false;
  const annotations =
    isPlainObject(doc.metadata) && isPlainObject(doc.metadata.annotations) ? doc.metadata.annotations : {};
  if (/^networking\.internal\.knative\.dev\//.test(doc.apiVersion)) {
    const knativeClass = annotations['networking.knative.dev/ingress.class'];
    return typeof knativeClass === 'string' && knativeClass.startsWith('ambassador.');
  }
  if (!/^(networking\.k8s\.io|extensions)\//.test(doc.apiVersion)) return false;
  const ingressClassName = isPlainObject(doc.spec) ? doc.spec.ingressClassName : undefined;
  return annotations['kubernetes.io/ingress.class'] === 'ambassador' || ingressClassName === 'ambassador';
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The labels whose values are strings, as Kubernetes keeps them; undefined for none. */
function stringValues(labels: Record<string, unknown>): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(labels)) if (typeof value === 'string') out[name] = value;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The keys of a resource beside `spec`: Kubernetes' own. */
const RESOURCE_KEYS = new Set(['apiVersion', 'kind', 'metadata', 'spec', 'status']);

/**
 * Reads `doc` as an Emissary resource when it is one: a document of
 * Emissary's group, an Ingress of class `ambassador`, or any document of
 * Emissary's annotation. Undefined for any other document.
 */
export function readResource(doc: Record<string, unknown>, place: DocumentPlace): ReadResource | undefined {
  const version = versionOf(doc.apiVersion, doc.kind);
  const inAnnotation = place.annotation === EMISSARY_ANNOTATION;
  const ingress = version === undefined && isEmissaryIngress(doc);
  if (version === undefined && !inAnnotation && !ingress) return undefined;

  const resourceForm = 'spec' in doc || isPlainObject(doc.metadata);
  const metadata = isPlainObject(doc.metadata) ? doc.metadata : {};
  const fields: Record<string, unknown> = resourceForm ? (isPlainObject(doc.spec) ? { ...doc.spec } : {}) : { ...doc };
  const name = stringOf(resourceForm ? metadata.name : doc.name) ?? `#${place.index}`;
  const kind = stringOf(doc.kind) ?? 'resource';
  const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : String(doc.apiVersion);
  const annotations = isPlainObject(metadata.annotations) ? metadata.annotations : {};
  const ambassadorId = ingress ? annotations['getambassador.io/ambassador-id'] : fields.ambassador_id;

  const refused = (why: string): ReadResource => ({ refused: why, apiVersion, kind, name, ambassadorId });
  if (ingress) {
    return refused(
      "an Ingress of class ambassador is not read: write each rule's paths as Mappings (prefix, hostname, and the backend as service: <name>.<namespace>:<port>)",
    );
  }
  if (version === undefined)
    return refused(
      `apiVersion: ${doc.apiVersion === undefined ? 'required' : `'${apiVersion}' is not Emissary's`}: ${EMISSARY_ANNOTATION} holds Emissary's records (${VERSIONS})`,
    );
  if (typeof version !== 'string') return refused(version.refused);
  if (stringOf(doc.kind) === undefined) return refused('kind: required');

  const problems: { field: string; note: string }[] = [];
  if (name.startsWith('#')) problems.push({ field: resourceForm ? 'metadata.name' : 'name', note: 'required' });
  if (resourceForm) {
    if ('spec' in doc && !isPlainObject(doc.spec))
      problems.push({ field: 'spec', note: "expected a mapping of the resource's fields" });
    for (const key of Object.keys(doc)) {
      if (!RESOURCE_KEYS.has(key))
        problems.push({ field: key, note: "is outside spec: a resource's fields go under spec" });
    }
    if ('metadata' in doc) problems.push(...metadataProblems(doc.metadata));
  }
  const namespace = stringOf(resourceForm ? metadata.namespace : fields.namespace) ?? place.namespace;
  delete fields.ambassador_id;
  if (!resourceForm) for (const key of ['apiVersion', 'kind', 'name', 'namespace']) delete fields[key];
  // A field written empty (`protocol_version:`) is one left out: Kubernetes drops a null field of a
  // resource before storing it (Emissary's CRDs make none nullable), and Emissary reads an annotation's
  // records into the same types, where null is no value.
  for (const [field, value] of Object.entries(fields)) if (value === null) delete fields[field];
  const labels = isPlainObject(metadata.labels) ? stringValues(metadata.labels) : undefined;
  const resource: EmissaryResource = {
    apiVersion,
    version,
    kind,
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    fieldPrefix: resourceForm ? 'spec.' : '',
    fields,
    ...(labels !== undefined ? { labels } : {}),
  };
  return { resource, ambassadorId, problems };
}
