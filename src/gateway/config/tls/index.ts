/**
 * @module gateway/config/tls
 * The records of TLS as an ingress configures it: `Host`, `TLSContext` and
 * Kubernetes `Secret`, each with its schema; how a configuration holds
 * them; and how a Secret of the config folder is read.
 */
import { hostSchema, type HostRecord } from './host';
import { secretSchema, type SecretRecord } from './secret';
import { tlsContextSchema, type TlsContextRecord } from './tls-context';

export { clientCertModuleFields } from './client-cert-fields';
export { hostSchema, labelsField, type HostRecord, type InsecureAction } from './host';
export {
  DEFAULT_NAMESPACE,
  filesAnnotationPrefix,
  isSecretDocument,
  readSecretDocument,
  secretSchema,
  type SecretRecord,
} from './secret';
export { TLS_VERSIONS, tlsContextSchema, type TlsContextRecord, type TlsSettings } from './tls-context';

/** The schemas of the TLS records, by kind. */
export const TLS_RECORD_SCHEMAS = { Host: hostSchema, TLSContext: tlsContextSchema, Secret: secretSchema } as const;

/** A TLS record. */
export type TlsRecord = HostRecord | TlsContextRecord | SecretRecord;

/** The TLS records of a configuration, each kind in the order read. */
export interface TlsRecords {
  hosts: HostRecord[];
  tlsContexts: TlsContextRecord[];
  secrets: SecretRecord[];
}

/** Adds a validated TLS record to its list. */
export function addTlsRecord(records: TlsRecords, record: TlsRecord): void {
  if (record.kind === 'Host') records.hosts.push(record);
  else if (record.kind === 'TLSContext') records.tlsContexts.push(record);
  else records.secrets.push(record);
}

/** The key a record's name is unique by: a Secret's within its namespace, as Kubernetes keeps them. */
export function uniqueName(record: { kind: string; name: string; namespace?: string }): string {
  return record.kind === 'Secret' ? `${record.namespace ?? 'default'}/${record.name}` : record.name;
}
