/**
 * @module gateway/request/headers/owned-headers
 * The header names a configuration owns: those its Mappings match, label
 * or edit, and those the gateway writes on every forwarded request or
 * reads a method override from. No lookalike spelling of one reaches a
 * backend (see ./lookalike-headers).
 */
import { labelHeaders, type MappingRecord } from '../../config/schema';
import type { Steps } from '../../slices';
import { OVERRIDE_HEADERS } from '../override/method-override';

/** Whatever the config: those the gateway writes on every forwarded request, and those it reads a method override from. */
const ALWAYS_OWNED = ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', ...OVERRIDE_HEADERS];

/** The header names (lower case) the Mappings of a configuration match, label or edit, and those the gateway writes or reads itself; a step a Mapping. */
export function* ownedHeaders(mappings: readonly MappingRecord[]): Steps<string[]> {
  const names = new Set(ALWAYS_OWNED);
  for (const mapping of mappings) {
    yield;
    // A pseudo-header (`:authority`) has no lookalike spelling: it is no header a backend reads.
    for (const name of Object.keys(mapping.headers ?? {})) if (!name.startsWith(':')) names.add(name);
    for (const name of Object.keys(mapping.regex_headers ?? {})) if (!name.startsWith(':')) names.add(name);
    for (const name of Object.keys(mapping.add_request_headers)) names.add(name);
    for (const name of mapping.remove_request_headers) names.add(name);
    for (const name of labelHeaders(mapping.labels)) names.add(name);
  }
  return [...names];
}
