/**
 * @module gateway/stages/auth-headers
 * Which headers pass between a request, an HTTP auth service and the
 * client, as Emissary has them: those the service always sees, those of its
 * answer that always go on, those that never do (framing, Host), and how an
 * answer's header is set on the response as it came.
 */
import type { Context } from 'koa';
import { FRAMING_HEADERS, headerName } from '../../http';

/**
 * Request headers the auth service always sees, besides
 * `allowed_request_headers` and `X-Forwarded-*`: Emissary's list, `Host` (as
 * Envoy sends it), and `Accept`, so that a refusal can be written in a type
 * the client reads.
 */
export const ALWAYS_SENT = ['accept', 'authorization', 'cookie', 'from', 'host', 'proxy-authorization', 'user-agent'];
/** Forwarding headers the gateway writes for the auth service itself. */
export const FORWARDED = new Set(['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']);
/**
 * Headers of the auth service's answer that always go on, besides
 * `allowed_authorization_headers`, as Emissary has them: onto the routed
 * request after a 200 (over the client's own), to the client otherwise.
 */
export const ALWAYS_COPIED = ['authorization', 'location', 'proxy-authenticate', 'set-cookie', 'www-authenticate'];
/** Headers of a refusal that reach the client besides those. */
export const ALSO_RETURNED = ['retry-after', 'content-type', 'vary'];
/** Framing, connection and Host are the gateway's, whatever the record names: a 200's would cut the client's body short. */
export const NEVER_COPIED = new Set([...FRAMING_HEADERS, 'host']);
/** About the body they come with: a 200's stay off the routed request, which keeps the client's; a refusal's go with it. */
export const BODY_HEADERS = ['content-type', 'content-encoding'];

/** Names in lower case, each once. */
export function unique(names: readonly string[]): string[] {
  return [...new Set(names.map((n) => n.toLowerCase()))];
}

/** Repeated values as one, joined as HTTP joins them. */
export function single(value: string | string[]): string {
  return typeof value === 'string' ? value : value.join(', ');
}

/**
 * Sets a header of the auth service's answer on the response as it came:
 * Koa's ctx.set fails (a 500) on a repeated header it takes for single-valued.
 */
export function setAnswerHeader(ctx: Context, name: string, value: string | string[] | undefined): void {
  if (value !== undefined && !ctx.res.headersSent) ctx.res.setHeader(headerName(name), value);
}
