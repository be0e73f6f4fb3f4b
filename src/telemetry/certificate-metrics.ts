/**
 * @module telemetry/certificate-metrics
 * The expiry of every certificate in service, as a gauge Prometheus alerts
 * on (`gatehouse_tls_certificate_expiry_timestamp_seconds < time() + 14 *
 * 86400`): one series a certificate, by where it comes from (a Secret or a
 * file), what it does (serves, presents, verifies) and its subject; the
 * series of a certificate no longer in service goes with it.
 */
import { Gauge, type Registry } from 'prom-client';

/** A certificate in service, as the gauge labels it. */
export interface CertificateExpiry {
  /** `Secret default/shop-cert`, or the path of its file. */
  readonly source: string;
  /** `serves`, `presents` or `verifies`. */
  readonly role: string;
  readonly subject?: string;
  /** ISO 8601. */
  readonly validTo: string;
}

/** Makes the gauge; the function it returns puts `certificates` in place of those before. */
export function certificateExpiryGauge(
  registry: Registry,
  prefix: string,
): (certificates: readonly CertificateExpiry[]) => void {
  const gauge = new Gauge({
    name: `${prefix}tls_certificate_expiry_timestamp_seconds`,
    help: 'When each certificate in service expires (Unix time), by source (a Secret or a file), role (serves, presents, verifies) and subject.',
    labelNames: ['source', 'role', 'subject'] as const,
    registers: [registry],
  });
  return (certificates) => {
    gauge.reset();
    for (const c of certificates) {
      gauge.labels(c.source, c.role, c.subject ?? '').set(Math.floor(new Date(c.validTo).getTime() / 1000));
    }
  };
}
