/**
 * @module gateway/config/mapping-emissary
 * The Mapping fields that come from Emissary beyond the seed's: the host a
 * Mapping applies to (`hostname`, the older `host`).
 */
import { z } from 'zod';
import { formatHostPattern, parseHostPattern } from '../host-match';

/** A host pattern field: read in its normal form (lower case, no trailing dot) or refused with why. */
function hostField(globs: boolean) {
  return z.string().transform((text, ctx) => {
    const parsed = parseHostPattern(text, globs);
    if (typeof parsed === 'string') {
      ctx.issues.push({ code: 'custom', message: parsed, input: text });
      return z.NEVER;
    }
    return formatHostPattern(parsed);
  });
}

/** The fields, spread into the Mapping schema. */
export const emissaryMappingFields = {
  /** The hosts the Mapping applies to: an Emissary DNS glob; `*` (the default) for any. */
  hostname: hostField(true).optional(),
  /** Emissary's older spelling: an exact host, as `hostname` without globs. */
  host: hostField(false).optional(),
  host_regex: z
    .literal(false, {
      error:
        'must be false: regular expressions on the Host are not supported (one would run on every request, on a header the client writes); write hostname with a glob (*.example.com, api.*)',
    })
    .optional(),
};

/** What no single field can say is wrong with a Mapping's Emissary fields: fields that contradict each other. */
export function emissaryMappingChecks(
  m: { hostname?: string; host?: string; host_regex?: false },
  ctx: z.RefinementCtx,
): void {
  const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  // Emissary logs an error and ignores host; here the record says what it means.
  if (m.hostname !== undefined && m.host !== undefined) problem('host', 'give hostname or host, not both (host is the older spelling of an exact hostname)');
  if (m.host_regex !== undefined && m.host === undefined) problem('host_regex', 'applies to host, which is not given');
}
