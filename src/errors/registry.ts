/**
 * @module errors/registry
 * The one registry of the errors a client can get from Gatehouse, by name:
 * each module's declarations (the files beside this one), gathered. A
 * name is a stable code: operators find it in the access log, and
 * docs/api.md lists every one with its status and detail.
 */
import { compileTemplate, type CompiledTemplate, type ErrorGroup } from './define';
import { API_ERRORS } from './api';
import { AUTH_ERRORS } from './auth';
import { BOOKINGS_ERRORS } from './bookings';
import { CORS_ERRORS } from './cors';
import { DIAG_ERRORS } from './diag';
import { GATEWAY_ERRORS } from './gateway';
import { HTTP_ERRORS } from './http';
import { SERVER_ERRORS } from './server';
import { UPSTREAM_ERRORS } from './upstream';

/** Every module's errors, in the order the reference lists them. */
export const ERROR_GROUPS = [
  { module: 'http', title: 'Every module: bodies, queries, representations', errors: HTTP_ERRORS },
  { module: 'server', title: 'The HTTP server, before the app', errors: SERVER_ERRORS },
  { module: 'gateway', title: 'The gateway: admission, routing, auth and rate limits', errors: GATEWAY_ERRORS },
  { module: 'cors', title: 'CORS', errors: CORS_ERRORS },
  { module: 'upstream', title: "The gateway's upstreams", errors: UPSTREAM_ERRORS },
  { module: 'auth', title: 'The auth service', errors: AUTH_ERRORS },
  { module: 'bookings', title: 'The booking services', errors: BOOKINGS_ERRORS },
  { module: 'api', title: 'The versioned API', errors: API_ERRORS },
  { module: 'diag', title: 'The diagnostic page', errors: DIAG_ERRORS },
] as const;

type Gathered<G> = (G extends { readonly errors: infer E } ? (errors: E) => void : never) extends (
  errors: infer All,
) => void
  ? All
  : never;

/** Every error, by its code. */
export const ERRORS = {} as Gathered<(typeof ERROR_GROUPS)[number]>;

/** The stable name of an error of the registry (`LIMIT_NOT_INTEGER`). */
export type ErrorCode = keyof typeof ERRORS;

const templates = new Map<string, CompiledTemplate>();
for (const { module, errors } of ERROR_GROUPS as readonly { module: string; errors: ErrorGroup }[]) {
  for (const [code, spec] of Object.entries(errors)) {
    if (Object.hasOwn(ERRORS, code)) throw new Error(`error ${code} of ${module} is declared twice`);
    (ERRORS as Record<string, unknown>)[code] = spec;
    if (spec.detail !== undefined) templates.set(code, compileTemplate(spec.detail));
  }
}
Object.freeze(ERRORS);

/** The detail template of `code`, split at its marks; undefined when its body has no detail. */
export function templateOf(code: ErrorCode): CompiledTemplate | undefined {
  return templates.get(code);
}
