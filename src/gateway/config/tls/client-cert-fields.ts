/**
 * @module gateway/config/tls/client-cert-fields
 * The Module settings that tell upstreams of a client's certificate, as
 * Envoy's connection manager takes them: `forward_client_cert_details`
 * (what becomes of a client's X-Forwarded-Client-Cert) and
 * `set_current_client_cert_details` (what the gateway's own element says).
 */
import { z } from 'zod';

const ALWAYS =
  "not supported: ALWAYS_FORWARD_ONLY passes on any client's X-Forwarded-Client-Cert, certificate or not, so that any client names the certificate it likes; write FORWARD_ONLY, which passes it on from a client whose certificate was verified";

/** The fields, spread into the Module's `config`. */
export const clientCertModuleFields = {
  /**
   * SANITIZE (the default): a client's X-Forwarded-Client-Cert is dropped;
   * SANITIZE_SET: replaced by the gateway's own for a verified client
   * certificate; FORWARD_ONLY, APPEND_FORWARD: passed on (appended to) from
   * a client whose certificate was verified, dropped from any other.
   */
  forward_client_cert_details: z
    .string()
    .refine((mode) => mode !== 'ALWAYS_FORWARD_ONLY', ALWAYS)
    .pipe(
      z.enum(['SANITIZE', 'FORWARD_ONLY', 'APPEND_FORWARD', 'SANITIZE_SET'], {
        error: 'must be SANITIZE, FORWARD_ONLY, APPEND_FORWARD or SANITIZE_SET',
      }),
    )
    .optional(),
  /** What the gateway's element holds besides `By` and `Hash`. */
  set_current_client_cert_details: z
    .strictObject({
      subject: z.boolean().optional(),
      cert: z.boolean().optional(),
      chain: z.boolean().optional(),
      dns: z.boolean().optional(),
      uri: z.boolean().optional(),
    })
    .optional(),
};
