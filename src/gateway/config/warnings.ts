/**
 * @module gateway/config/warnings
 * What a valid configuration does that its author may not mean: said by
 * `gatehouse check` and logged at every load, never refused (Emissary and
 * Envoy take the same records).
 */
import { lendsCredentialsToAnyOrigin } from '../../cors';
import type { GatewayConfig } from './schema';

const ANY_ORIGIN_WITH_CREDENTIALS =
  'origins "*" with credentials: true lets every web site read its answers with the credentials a browser holds for the user (a browser refuses "*" with credentials, so the gateway names each asking origin); list the origins instead';

/** The warnings of a valid configuration, each naming its record. */
export function configWarnings(config: GatewayConfig): string[] {
  const warnings: string[] = [];
  if (config.module?.config.cors && lendsCredentialsToAnyOrigin(config.module.config.cors))
    warnings.push(`Module ${config.module.name}: config.cors: ${ANY_ORIGIN_WITH_CREDENTIALS}`);
  const domain = config.rateLimitService?.domain;
  for (const mapping of config.mappings) {
    if (mapping.cors && lendsCredentialsToAnyOrigin(mapping.cors))
      warnings.push(`Mapping ${mapping.name}: cors: ${ANY_ORIGIN_WITH_CREDENTIALS}`);
    for (const labelDomain of Object.keys(mapping.labels ?? {})) {
      if (labelDomain === domain) continue;
      warnings.push(
        `Mapping ${mapping.name}: labels.${labelDomain}: ${
          domain === undefined
            ? 'no RateLimitService is configured'
            : `the RateLimitService asks under domain ${domain}`
        }, so these labels are never sent and limit nothing (as in Emissary, which drops them without a word)`,
      );
    }
  }
  return warnings;
}
