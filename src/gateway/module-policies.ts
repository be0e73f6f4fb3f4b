/**
 * @module gateway/module-policies
 * What the Module sets for every request, compiled once per configuration:
 * its `ip_allow` / `ip_deny`, held before any route is looked at, and its
 * `error_response_overrides`, which a Mapping takes unless it gives its own
 * list or bypasses them.
 */
import type { GatewayConfig, MappingRecord } from './config/schema';
import { compileErrorOverrides, type ErrorOverrides } from './error-overrides';
import { compileAddressFilter, type AddressFilter } from './request/address-filter';

/** The Module's settings for every request. */
export interface ModulePolicies {
  /** Its `ip_allow` / `ip_deny`; null when it has neither. */
  readonly addressFilter: AddressFilter | null;
  /** Its `error_response_overrides`; null for none. */
  readonly errorOverrides: ErrorOverrides | null;
}

/** Compiles the Module's settings for every request. */
export function modulePolicies(config: GatewayConfig): ModulePolicies {
  const settings = config.module?.config;
  let addressFilter: AddressFilter | null = null;
  if (settings?.ip_allow !== undefined) addressFilter = compileAddressFilter(settings.ip_allow, true);
  else if (settings?.ip_deny !== undefined) addressFilter = compileAddressFilter(settings.ip_deny, false);
  return { addressFilter, errorOverrides: compileErrorOverrides(settings?.error_response_overrides) };
}

/** A Mapping's overrides: its own list, else the Module's; none with `bypass_error_response_overrides`, as in Emissary. */
export function routeErrorOverrides(mapping: MappingRecord, module: ModulePolicies): ErrorOverrides | null {
  if (mapping.bypass_error_response_overrides === true) return null;
  return compileErrorOverrides(mapping.error_response_overrides) ?? module.errorOverrides;
}
