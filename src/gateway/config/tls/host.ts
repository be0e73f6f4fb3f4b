/**
 * @module gateway/config/tls/host
 * The `Host` record, Emissary's v3alpha1 Host: a domain the gateway serves
 * (`hostname`, an exact name, `*.example.com`, or `*` when left out), the
 * certificate it is served with (`tlsSecret`, with its TLS context's
 * settings from `tlsContext` or an inline `tls`), what a request that came
 * over cleartext gets (`requestPolicy.insecure.action`: Redirect, the
 * default, Route or Reject) and which Mappings it serves
 * (`mappingSelector`, and each Mapping's own hostname).
 */
import { z } from 'zod';
import { dataRecord } from '../../../files';
import { API_VERSION } from '../api-version';
import { namespaceField, servedName, tlsSettingsChecks, tlsSettingsFields } from './tls-context';

/** Labels as Kubernetes writes them: names to string values. */
export const labelsField = dataRecord(z.string(), z.string({ error: 'must be a string (a label value)' }));

const ADDITIONAL_PORT = 'must be a port from 1 to 65535, or -1 for none';

const insecureSchema = z.strictObject({
  /** What a request that came over cleartext gets: Redirect (301 to https://), Route, or Reject (403). */
  action: z.enum(['Redirect', 'Route', 'Reject'], { error: 'must be Redirect, Route or Reject' }).default('Redirect'),
  /**
   * A cleartext port the gateway listens on beside `PORT`, served as it is;
   * unset or `PORT`'s own: none more; -1: none, and cleartext for this Host
   * is refused as Reject refuses it.
   */
  additionalPort: z
    .number({ error: ADDITIONAL_PORT })
    .int({ error: ADDITIONAL_PORT })
    .refine((port) => port === -1 || (port >= 1 && port <= 65535), { error: ADDITIONAL_PORT })
    .optional(),
});

/** A Host's inline TLS context: the settings of a TLSContext, the certificate given by `tlsSecret`. */
const inlineTls = z
  .strictObject({
    ...tlsSettingsFields,
    secret: z.never({ error: "give the Host's certificate in tlsSecret" }).optional(),
    cert_chain_file: z.never({ error: "give the Host's certificate in tlsSecret" }).optional(),
    private_key_file: z.never({ error: "give the Host's certificate in tlsSecret" }).optional(),
  })
  .superRefine(tlsSettingsChecks);

export const hostSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION, { error: `must be ${API_VERSION}` }),
    kind: z.literal('Host'),
    name: z.string().min(1),
    namespace: namespaceField.optional(),
    /** The domain served: an exact name, `*.example.com`, or `*` (the default) for any. */
    hostname: servedName.default('*'),
    /** The Secret of its certificate: in the Host's namespace unless `namespace` says another. */
    tlsSecret: z.strictObject({ name: z.string().min(1), namespace: namespaceField.optional() }).optional(),
    /** The TLSContext whose settings it is served with. */
    tlsContext: z.strictObject({ name: z.string().min(1) }).optional(),
    /** The settings of a TLSContext, written in the Host. */
    tls: inlineTls.optional(),
    requestPolicy: z.strictObject({ insecure: insecureSchema.default({ action: 'Redirect' }) }).default({
      insecure: { action: 'Redirect' },
    }),
    /** The labels of the Mappings it serves, beside those whose hostname covers its own. */
    mappingSelector: z.strictObject({ matchLabels: labelsField.optional() }).optional(),
    /** Its own labels (metadata.labels), as Emissary keeps them. */
    metadata_labels: labelsField.optional(),
  })
  .superRefine((h, ctx) => {
    if (h.tlsContext !== undefined && h.tls !== undefined)
      ctx.addIssue({ code: 'custom', path: ['tls'], message: 'give tlsContext or tls, not both' });
  });

export type HostRecord = z.output<typeof hostSchema>;
export type InsecureAction = HostRecord['requestPolicy']['insecure']['action'];
