/**
 * @module gateway/config/emissary/read/metadata
 * A manifest's `metadata` as Kubernetes reads it: the fields of ObjectMeta,
 * with a string name and namespace. Any other key there (a misspelt
 * `namespace`, a key the YAML made of something else) is refused rather
 * than dropped, since the namespace it was meant to be qualifies the
 * services of the manifest's Mappings: dropped, they would route elsewhere.
 */
import { isPlainObject } from '../values';

/** The fields of Kubernetes' ObjectMeta, as `kubectl get -o yaml` writes them back. */
const OBJECT_META_FIELDS = new Set([
  'name',
  'namespace',
  'labels',
  'annotations',
  'generateName',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'finalizers',
  'ownerReferences',
  'managedFields',
  'selfLink',
  'clusterName',
]);

/** A field of `metadata` and what is wrong with it. */
export interface MetadataProblem {
  readonly field: string;
  readonly note: string;
}

/** What Kubernetes would refuse in a manifest's `metadata` (given as it was parsed), field by field. */
export function metadataProblems(metadata: unknown): MetadataProblem[] {
  if (!isPlainObject(metadata))
    return [{ field: 'metadata', note: 'expected a mapping (name, namespace, labels, annotations)' }];
  const problems: MetadataProblem[] = [];
  for (const key of Object.keys(metadata)) {
    if (!OBJECT_META_FIELDS.has(key)) {
      problems.push({
        field: `metadata.${key}`,
        note: 'unknown field: metadata has name, namespace, labels, annotations and the fields Kubernetes sets itself',
      });
    }
  }
  for (const key of ['name', 'namespace']) {
    const value = metadata[key];
    if (value !== undefined && value !== null && typeof value !== 'string')
      problems.push({ field: `metadata.${key}`, note: 'expected a string' });
  }
  return problems;
}
