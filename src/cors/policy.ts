/**
 * @module cors/policy
 * One CORS policy (Emissary's spelling) turned into an @koa/cors middleware:
 * exact origins or `*`, the origin echoed only when allowed, never `*` with
 * credentials, and the headers clients of this gateway need always exposed.
 */
import cors from '@koa/cors';
import type { Context, Middleware, Next } from 'koa';
import { HttpError } from '../http';
import type { CorsPolicy } from './schema';

/**
 * Response headers a browser script may always read: pagination links, the
 * rate-limit answer and where a created resource is.
 */
export const ALWAYS_EXPOSED_HEADERS: readonly string[] = [
  'Link',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'Location',
];

/** A policy with its lists split and its origins in the form browsers send. */
interface ResolvedPolicy {
  anyOrigin: boolean;
  origins: ReadonlySet<string>;
  credentials: boolean;
  methods?: string;
  headers?: string;
  exposed: string;
  maxAge?: string;
}

/** `a, b` or `[a, b]` → `[a, b]`; Emissary takes both spellings. */
function list(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const items = Array.isArray(value) ? value : value.split(',');
  return items.map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * Whether a policy lends a user's credentials to every origin: `*` among
 * its origins with `credentials: true`, which names each asking origin back
 * (a browser refuses `*` with credentials).
 */
export function lendsCredentialsToAnyOrigin(policy: CorsPolicy): boolean {
  return policy.credentials === true && list(policy.origins).includes('*');
}

function resolve(policy: CorsPolicy): { resolved?: ResolvedPolicy; problems: string[] } {
  const problems: string[] = [];
  const origins = new Set<string>();
  let anyOrigin = false;
  const configured = list(policy.origins);
  if (configured.length === 0) problems.push('origins: at least one origin, or *, is needed');
  for (const origin of configured) {
    if (origin === '*') {
      anyOrigin = true;
    } else if (origin === 'null') {
      origins.add(origin);
    } else {
      // The serialised origin: lower-case scheme and host, no default port, no path.
      let url: URL | undefined;
      try {
        url = new URL(origin);
      } catch {
        url = undefined;
      }
      if (!url || url.origin === 'null' || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
        problems.push(`origins: '${origin}' is not an origin (scheme://host[:port]) or *`);
      } else {
        origins.add(url.origin);
      }
    }
  }
  let maxAge: string | undefined;
  if (policy.max_age !== undefined) {
    maxAge = String(policy.max_age).trim();
    if (!/^[0-9]+$/.test(maxAge)) problems.push(`max_age: '${policy.max_age}' is not a number of seconds`);
  }
  const methods = list(policy.methods).map((m) => m.toUpperCase());
  const headers = list(policy.headers);
  const exposed: string[] = [];
  const seen = new Set<string>();
  for (const h of [...ALWAYS_EXPOSED_HEADERS, ...list(policy.exposed_headers)]) {
    if (seen.has(h.toLowerCase())) continue;
    seen.add(h.toLowerCase());
    exposed.push(h);
  }
  if (problems.length) return { problems };
  return {
    problems,
    resolved: {
      anyOrigin,
      origins,
      credentials: policy.credentials === true,
      methods: methods.length ? methods.join(',') : undefined,
      headers: headers.length ? headers.join(',') : undefined,
      exposed: exposed.join(','),
      maxAge,
    },
  };
}

/**
 * What is wrong with a policy, for the config loader: an empty list when it
 * can be applied.
 */
export function corsPolicyProblems(policy: CorsPolicy): string[] {
  return resolve(policy).problems;
}

/** Whether the request is a CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method`. */
export function isPreflight(ctx: Context): boolean {
  return ctx.method === 'OPTIONS' && ctx.get('Origin') !== '' && ctx.get('Access-Control-Request-Method') !== '';
}

/**
 * The middleware of one policy. It answers preflights itself (204 for an
 * allowed origin, 403 for another), so it runs before auth; other requests go
 * on, with the CORS headers when their origin is allowed, on errors too.
 * `methods` defaults to @koa/cors's (GET, HEAD, PUT, POST, DELETE, PATCH);
 * without `headers`, a preflight's requested headers are allowed.
 * Throws for a policy it cannot apply (see {@link corsPolicyProblems}).
 */
export function corsMiddleware(policy: CorsPolicy): Middleware {
  const { resolved, problems } = resolve(policy);
  if (!resolved) throw new Error(`invalid CORS policy: ${problems.join('; ')}`);
  const { anyOrigin, origins, credentials } = resolved;

  /** The Access-Control-Allow-Origin value for this request; '' when it gets none. */
  function allowOrigin(ctx: Context): string {
    const origin = ctx.get('Origin');
    if (origin === '') return '';
    // `*` is not valid with credentials: browsers need the origin itself then.
    if (anyOrigin) return credentials ? origin : '*';
    return origins.has(origin) ? origin : '';
  }

  const options: cors.Options = {
    origin: allowOrigin,
    credentials,
    exposeHeaders: resolved.exposed,
    keepHeadersOnError: true,
  };
  // @koa/cors spreads its options over its defaults: an undefined would erase one.
  if (resolved.methods) options.allowMethods = resolved.methods;
  if (resolved.headers) options.allowHeaders = resolved.headers;
  if (resolved.maxAge) options.maxAge = resolved.maxAge;
  const handle: (ctx: Context, next: Next) => Promise<void> = cors(options);

  return function applyCors(ctx, next) {
    if (isPreflight(ctx) && allowOrigin(ctx) === '') {
      throw HttpError.of('CORS_ORIGIN_NOT_ALLOWED', { origin: ctx.get('Origin') });
    }
    return handle(ctx, next);
  };
}
