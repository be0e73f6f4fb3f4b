/**
 * @module gateway/config/mapping-emissary
 * The Mapping fields that come from Emissary beyond the seed's: the host a
 * Mapping applies to (`hostname`, the older `host`), the Host an upstream is
 * sent (`host_rewrite`), and whether its prefix matches in any case
 * (`case_sensitive`).
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

/** A `host[:port]` to send as Host: a name, an IPv4 or a bracketed IPv6 address. */
const HOST_PORT = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

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
  /** The Host a remote upstream is sent instead of its own `host:port`. */
  host_rewrite: z.string().regex(HOST_PORT, 'must be host or host:port').optional(),
  /** What the gateway does anyway for a remote upstream: it is sent its own host:port. */
  auto_host_rewrite: z
    .literal(true, {
      error: 'must be true (or left out): a remote upstream is always sent its own host:port as Host, or host_rewrite; the client\'s Host goes in X-Forwarded-Host',
    })
    .optional(),
  /** `false`: the prefix matches in any case. */
  case_sensitive: z.boolean().default(true),
};

/** What no single field can say is wrong with a Mapping's Emissary fields: fields that contradict each other. */
export function emissaryMappingChecks(
  m: { hostname?: string; host?: string; host_regex?: false; host_rewrite?: string; auto_host_rewrite?: true },
  ctx: z.RefinementCtx,
): void {
  const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  // Emissary logs an error and ignores host; here the record says what it means.
  if (m.hostname !== undefined && m.host !== undefined) problem('host', 'give hostname or host, not both (host is the older spelling of an exact hostname)');
  if (m.host_regex !== undefined && m.host === undefined) problem('host_regex', 'applies to host, which is not given');
  if (m.host_rewrite !== undefined && m.auto_host_rewrite !== undefined) problem('auto_host_rewrite', 'give host_rewrite or auto_host_rewrite, not both');
}
