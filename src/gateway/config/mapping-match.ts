/**
 * @module gateway/config/mapping-match
 * The Mapping fields, as Emissary spells them, that choose requests beyond a
 * path prefix, a method, exact headers and a host glob, that share traffic
 * among Mappings, and that answer with a redirect instead of a service:
 * `prefix_regex`, `prefix_exact`, `method_regex`, `regex_headers`, `host`
 * with `host_regex`, `query_parameters`, `regex_query_parameters`,
 * `regex_rewrite`, `weight`, and `host_redirect` with `path_redirect`,
 * `prefix_redirect`, `regex_redirect` and `redirect_response_code`.
 *
 * Every pattern is read here as RE2 reads it, so that one RE2 refuses (a
 * lookahead, a backreference) is a problem of its field when the record
 * loads; the size of each compiled program is held against the Module's
 * `regex_max_size` when the configuration is built.
 */
import { z } from 'zod';
import { dataRecord } from '../../files';
import { formatHostPattern, parseHostPattern } from '../match/host-match';
import { regexSyntaxProblem } from '../match/regex';
import { readSubstitution } from '../match/substitution';
import { matchedNameProblem } from './headers';

type Ctx = z.core.$RefinementCtx;

function issue(ctx: Ctx, path: PropertyKey[], message: string, input?: unknown): void {
  ctx.issues.push({ code: 'custom', message, input, path });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a mapping' : `a ${typeof value}`;
}

/** `{<name>: <pattern>}`; header names (`headers: true`) are compared in lower case, and come out so. */
function patternMap(headers: boolean) {
  return dataRecord(z.string(), z.unknown()).transform((map, ctx) => {
    const out: Record<string, string> = {};
    for (const [written, raw] of Object.entries(map)) {
      const name = headers ? written.toLowerCase() : written;
      const nameProblem = headers ? matchedNameProblem(written) : undefined;
      if (nameProblem !== undefined) issue(ctx, [written], nameProblem, raw);
      else if (headers && name === 'host') {
        issue(
          ctx,
          [written],
          "would be held against the Host as the client spelt it: write host with host_regex: true, held against the host's normal form",
          raw,
        );
      } else if (Object.prototype.hasOwnProperty.call(out, name))
        issue(ctx, [written], 'is given twice (header names are case-insensitive)', raw);
      else if (typeof raw !== 'string')
        issue(ctx, [written], `must be a string (a regular expression), got ${describe(raw)}`, raw);
      else {
        const problem = regexSyntaxProblem(raw);
        if (problem === undefined) out[name] = raw;
        else issue(ctx, [written], problem, raw);
      }
    }
    return out;
  });
}

/** What a `query_parameters` entry asks of an argument: this exact (decoded) value, or (`true`) any value. */
export type QueryValue = string | true;

const queryParameters = dataRecord(z.string().min(1), z.unknown()).transform((map, ctx) => {
  const out: Record<string, QueryValue> = {};
  for (const [name, raw] of Object.entries(map)) {
    if (raw === true || typeof raw === 'string') out[name] = raw;
    else {
      const hint =
        typeof raw === 'number' || raw === false
          ? ': quote the value, as YAML reads an unquoted number or false as no string'
          : '';
      issue(ctx, [name], `must be a string (the exact value) or true (any value), got ${describe(raw)}${hint}`, raw);
    }
  }
  return out;
});

/** `{pattern, substitution}` of `regex_rewrite` and `regex_redirect`, the substitution's groups checked against the pattern's. */
const regexSubstitution = z
  .strictObject({ pattern: z.string().min(1), substitution: z.string() })
  .superRefine((rewrite, ctx) => {
    const read = readSubstitution(rewrite, Infinity);
    if ('field' in read) issue(ctx, [read.field], read.message);
  });

/** A path a redirect names: it starts with `/`; `query` allows a `?query` after it. */
function redirectPath(query: boolean) {
  return z
    .string()
    .startsWith('/', 'must start with /')
    .refine(
      (p) => !/[#\s\x00-\x1f\x7f]/.test(p) && (query || !p.includes('?')),
      query ? 'must be a path, with an optional ?query, without # or spaces' : 'must be a path, without ?, # or spaces',
    );
}

/** The redirect statuses Emissary (and Envoy's RedirectAction) offer. */
const REDIRECT_CODES = [301, 302, 303, 307, 308] as const;

/** The fields, spread into the Mapping schema. */
export const matchMappingFields = {
  /** `true`: `prefix` is an RE2 pattern the whole normalised path must match. */
  prefix_regex: z.boolean().optional(),
  /** `true`: `prefix` is the whole path, not a prefix of it. */
  prefix_exact: z.boolean().optional(),
  /** `true`: `method` is an RE2 pattern the whole method must match. */
  method_regex: z.boolean().optional(),
  /** `true`: `host` is an RE2 pattern the request's host (lower case, without port) must match whole. */
  host_regex: z.boolean().optional(),
  /** Headers whose whole value must match a pattern: `{<name>: <pattern>}`. */
  regex_headers: patternMap(true).optional(),
  /** Query arguments the request must carry: an exact value, or `true` for any. */
  query_parameters: queryParameters.optional(),
  /** Query arguments whose whole value must match a pattern. */
  regex_query_parameters: patternMap(false).optional(),
  /** Replaces, in the forwarded path, every match of `pattern` by `substitution` (`\1`...); `rewrite` is then not applied. */
  regex_rewrite: regexSubstitution.optional(),
  /** The share (0 to 100) of the requests of its match that the Mapping takes from the others with the same match. */
  weight: z
    .number()
    .int('must be a whole number from 0 to 100')
    .min(0, 'must be a whole number from 0 to 100')
    .max(100, 'must be a whole number from 0 to 100')
    .optional(),
  /** `true`: the Mapping answers with a redirect to the host `service` names. */
  host_redirect: z.boolean().optional(),
  /** The redirect's path (and query, when it gives one) instead of the request's. */
  path_redirect: redirectPath(true).optional(),
  /** What replaces the matched prefix in the redirect's path. */
  prefix_redirect: redirectPath(false).optional(),
  /** Replaces, in the redirect's path, every match of `pattern` by `substitution`. */
  regex_redirect: regexSubstitution.optional(),
  /** 301 (the default), 302, 303, 307 or 308. */
  redirect_response_code: z
    .number()
    .refine(
      (c): c is (typeof REDIRECT_CODES)[number] => (REDIRECT_CODES as readonly number[]).includes(c),
      `must be one of ${REDIRECT_CODES.join(', ')}`,
    )
    .optional(),
};

/** What the checks read of a Mapping. */
interface MatchFields {
  prefix: string;
  service: string;
  method?: string;
  host?: string;
  case_sensitive: boolean;
  prefix_regex?: boolean;
  prefix_exact?: boolean;
  method_regex?: boolean;
  host_regex?: boolean;
  regex_rewrite?: unknown;
  host_rewrite?: string;
  allow_upgrade?: unknown;
  use_websocket?: boolean;
  weight?: number;
  host_redirect?: boolean;
  path_redirect?: string;
  prefix_redirect?: string;
  regex_redirect?: unknown;
  redirect_response_code?: number;
}

/** The host a redirect sends the client to, as `service` names it: `[http(s)://]host[:port]`. */
export const REDIRECT_SERVICE =
  /^(?:(https?):\/\/)?((?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?)\/?$/i;

/** `prefix`, `method` and `host`, read as patterns or as a path, a method and a host name. */
function patternFieldChecks(m: MatchFields, ctx: Ctx): void {
  if (m.prefix_regex === true) {
    const problem = regexSyntaxProblem(m.prefix);
    if (problem !== undefined) issue(ctx, ['prefix'], problem);
    const beyond = /[^\x00-\x7f]/u.exec(m.prefix)?.[0];
    if (beyond !== undefined) {
      const escaped = [...Buffer.from(beyond, 'utf8')]
        .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
        .join('');
      issue(ctx, ['prefix'], `holds '${beyond}', which a normalised path never does: it holds ${escaped} instead`);
    }
    if (m.prefix_exact === true) issue(ctx, ['prefix_exact'], 'give prefix_regex or prefix_exact, not both');
    if (!m.case_sensitive)
      issue(
        ctx,
        ['case_sensitive'],
        'does not apply to prefix_regex (as in Envoy): start the pattern with (?i) to match in any case',
      );
  } else if (!m.prefix.startsWith('/')) issue(ctx, ['prefix'], 'must start with /');
  else if (/[?#]/.test(m.prefix)) issue(ctx, ['prefix'], 'must be a path, without ? or #');

  if (m.method !== undefined) {
    if (m.method_regex === true) {
      const problem = regexSyntaxProblem(m.method);
      if (problem !== undefined) issue(ctx, ['method'], problem);
    } else if (!/^[A-Za-z]+$/.test(m.method)) issue(ctx, ['method'], 'must be an HTTP method');
  } else if (m.method_regex !== undefined) issue(ctx, ['method_regex'], 'applies to method, which is not given');

  if (m.host !== undefined) {
    if (m.host_regex === true) {
      const problem = regexSyntaxProblem(m.host);
      if (problem !== undefined) issue(ctx, ['host'], problem);
    } else {
      const parsed = parseHostPattern(m.host, false);
      if (typeof parsed === 'string') issue(ctx, ['host'], parsed);
    }
  } else if (m.host_regex !== undefined) issue(ctx, ['host_regex'], 'applies to host, which is not given');
}

/** A redirect's fields together: a redirect to a host, or none of them. */
function redirectChecks(m: MatchFields, ctx: Ctx): void {
  const targets = (['path_redirect', 'prefix_redirect', 'regex_redirect'] as const).filter((f) => m[f] !== undefined);
  if (m.host_redirect !== true) {
    for (const field of [
      ...targets,
      ...(m.redirect_response_code !== undefined ? ['redirect_response_code' as const] : []),
    ]) {
      issue(ctx, [field], 'applies with host_redirect: true, which is not set');
    }
    return;
  }
  if (!REDIRECT_SERVICE.test(m.service)) {
    issue(
      ctx,
      ['service'],
      `'${m.service}' is not where a redirect (host_redirect: true) sends the client: a host name or address, with an optional :port, after an optional http:// or https://; write the path in path_redirect or prefix_redirect`,
    );
  }
  for (const extra of targets.slice(1))
    issue(
      ctx,
      [extra],
      `give one of path_redirect, prefix_redirect and regex_redirect, not ${targets[0]} and ${extra}`,
    );
  const unused = {
    regex_rewrite: m.regex_rewrite,
    host_rewrite: m.host_rewrite,
    allow_upgrade: m.allow_upgrade,
    use_websocket: m.use_websocket,
    weight: m.weight,
  };
  for (const [field, value] of Object.entries(unused)) {
    if (value !== undefined)
      issue(
        ctx,
        [field],
        'does not apply to a redirect (host_redirect: true), which the gateway answers without calling a service',
      );
  }
}

/** What no single field can say is wrong with a Mapping's match, rewrite and redirect fields. */
export function mappingMatchChecks(m: MatchFields, ctx: Ctx): void {
  patternFieldChecks(m, ctx);
  redirectChecks(m, ctx);
}

/** The Mapping with `method` in upper case and an exact `host` in its normal form, unless they are patterns. */
export function normaliseMatchFields<
  M extends { method?: string; host?: string; method_regex?: boolean; host_regex?: boolean },
>(m: M): M {
  if (m.method !== undefined && m.method_regex !== true) m.method = m.method.toUpperCase();
  if (m.host !== undefined && m.host_regex !== true) {
    const parsed = parseHostPattern(m.host, false);
    if (typeof parsed !== 'string') m.host = formatHostPattern(parsed);
  }
  return m;
}
