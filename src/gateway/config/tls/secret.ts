/**
 * @module gateway/config/tls/secret
 * Kubernetes Secrets in the config folder, as Emissary reads them: a
 * `kind: Secret` of `apiVersion: v1` with its `metadata.name` and
 * `namespace` (`default` when it names none), of `type:
 * kubernetes.io/tls` (`data.tls.crt`, `data.tls.key`) or Opaque (a CA's
 * `tls.crt` or `ca.crt`), its `data` base64 as Kubernetes stores it and
 * its `stringData` as written. Outside Kubernetes a Secret may name files
 * instead, one annotation a key: `files.gatehouse.io/tls.crt:
 * /etc/ssl/example.pem` (the domain is the annotation domain's), a path
 * relative to the file that holds the Secret; the files are read, and
 * looked at for a change, as the Secret's data would be.
 *
 * A Secret is no record of any gateway: every one is read, whatever the
 * `ambassador_id`. Its data is never shown nor logged, and problems never
 * quote it.
 */
import { z } from 'zod';
import { dataRecord } from '../../../files';
import { API_VERSION } from '../api-version';
import { namespaceField } from './tls-context';

/** The namespace of a Secret, or of a resource looking for one, that names none. */
export const DEFAULT_NAMESPACE = 'default';

/** Base64 as Kubernetes writes a Secret's data (line breaks allowed). */
const base64 = z
  .string({ error: 'must be base64, as a Secret holds its data (stringData holds it as written)' })
  .refine((text) => {
    const bare = text.replace(/\s+/g, '');
    return bare.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(bare);
  }, 'must be base64, as a Secret holds its data (stringData holds it as written)');

export const secretSchema = z.strictObject({
  apiVersion: z.literal(API_VERSION, { error: `must be ${API_VERSION}` }),
  kind: z.literal('Secret'),
  name: z.string().min(1),
  namespace: namespaceField.optional(),
  /** `kubernetes.io/tls` (a certificate and its key), `Opaque`... */
  type: z.string().min(1).default('Opaque'),
  /** Each key's value, base64. */
  data: dataRecord(z.string(), base64).default({}),
  /** Each key's file, in place of its data. */
  files: dataRecord(z.string(), z.string().min(1, 'must be the path of a file')).default({}),
});

export type SecretRecord = z.output<typeof secretSchema>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a parsed document is a Kubernetes Secret. */
export function isSecretDocument(doc: Record<string, unknown>): boolean {
  return doc.apiVersion === 'v1' && doc.kind === 'Secret';
}

/** The annotation prefix of the files a Secret names: `files.gatehouse.io/`. */
export function filesAnnotationPrefix(annotationDomain: string): string {
  return `files.${annotationDomain}/`;
}

/**
 * A Kubernetes Secret as the gateway's Secret record, for validation: its
 * `stringData` merged into `data` (base64, as Kubernetes stores it), the
 * files its annotations name.
 */
export function readSecretDocument<S>(
  doc: Record<string, unknown>,
  place: { source: S; index: number },
  annotationDomain: string,
): { value: Record<string, unknown>; source: S; index: number } {
  const metadata = isPlainObject(doc.metadata) ? doc.metadata : {};
  const value: Record<string, unknown> = {
    apiVersion: API_VERSION,
    kind: 'Secret',
    name: typeof metadata.name === 'string' ? metadata.name : `#${place.index}`,
  };
  if (metadata.namespace !== undefined) value.namespace = metadata.namespace;
  if (doc.type !== undefined) value.type = doc.type;
  let data: unknown = doc.data ?? {};
  if (isPlainObject(doc.stringData) && isPlainObject(data)) {
    data = { ...data };
    for (const [key, text] of Object.entries(doc.stringData)) {
      (data as Record<string, unknown>)[key] = typeof text === 'string' ? Buffer.from(text).toString('base64') : text;
    }
  }
  value.data = data;
  const prefix = filesAnnotationPrefix(annotationDomain);
  const annotations = isPlainObject(metadata.annotations) ? metadata.annotations : {};
  const files: Record<string, unknown> = {};
  for (const [key, path] of Object.entries(annotations))
    if (key.startsWith(prefix)) files[key.slice(prefix.length)] = path;
  if (Object.keys(files).length > 0) value.files = files;
  return { value, source: place.source, index: place.index };
}
