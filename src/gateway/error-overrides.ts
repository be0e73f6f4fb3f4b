/**
 * @module gateway/error-overrides
 * `error_response_overrides` at work: an answer whose status one names,
 * the upstream's or the gateway's own (a refusal of the auth service, a
 * 429, a 404 no route takes), gets that body instead, its commands filled
 * in for the request as Envoy fills them; its other headers stay, but for
 * those that described the old body. A Mapping's list replaces the
 * Module's; with `bypass_error_response_overrides` it has none.
 */
import type { Context } from 'koa';
import { hostname } from 'node:os';
import type { Readable } from 'node:stream';
import { hostPort, unmappedAddress } from '../http';
import { FORMAT_COMMAND, type ErrorOverrideRecord } from './config/error-overrides';
import { clientAddress, trustedClientAddress } from './request/headers/forwarded';

/** One override, ready to render. */
interface CompiledOverride {
  readonly contentType: string;
  /** Text with commands, or a JSON object whose values hold them. */
  readonly text?: string;
  readonly json?: readonly (readonly [string, string])[];
}

/** The overrides of a route (or the Module's), by status. */
export type ErrorOverrides = ReadonlyMap<number, CompiledOverride>;

/** What the request is, for the commands of a body: the Mapping's name and its upstream's cluster, when it has them. */
export interface AnswerSource {
  readonly route?: string;
  readonly cluster?: string;
}

/** Headers of the replaced answer that described its body. */
const BODY_HEADERS = [
  'content-length',
  'content-encoding',
  'content-range',
  'content-md5',
  'etag',
  'last-modified',
  'transfer-encoding',
];

/** Commands whose value Envoy types as a number in a JSON body. */
const NUMERIC = new Set(['RESPONSE_CODE', 'DOWNSTREAM_LOCAL_PORT']);

/** Compiles a list of overrides; null for none. */
export function compileErrorOverrides(list: readonly ErrorOverrideRecord[] | undefined): ErrorOverrides | null {
  if (list === undefined || list.length === 0) return null;
  const map = new Map<number, CompiledOverride>();
  for (const { on_status_code: status, body } of list) {
    if (body.json_format !== undefined) {
      // Envoy keeps a JSON format as a protobuf Struct, whose keys it writes in order of their names.
      const sorted = Object.entries(body.json_format).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      map.set(status, { contentType: body.content_type ?? 'application/json', json: sorted });
    } else {
      const text = body.text_format ?? body.text_format_source ?? '';
      map.set(status, { contentType: body.content_type ?? 'text/plain', text });
    }
  }
  return map;
}

function headerText(value: string | number | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(',') : String(value);
}

/** A request header as `%REQ(name)%` reads it: the pseudo-headers as Envoy names them. */
function requestHeader(ctx: Context, name: string): string | undefined {
  if (name === ':path') return ctx.originalUrl;
  if (name === ':method') return ctx.method;
  if (name === ':scheme') return ctx.protocol;
  return headerText(ctx.req.headers[name === ':authority' ? 'host' : name]);
}

/** A header command's value: the first of its names (`a?b`) that the request or the answer has. */
function headerValue(ctx: Context, command: string, arg: string): string | undefined {
  for (const name of arg.toLowerCase().split('?')) {
    const value = command === 'REQ' ? requestHeader(ctx, name) : headerText(ctx.res.getHeader(name));
    if (value !== undefined) return value;
  }
  return undefined;
}

/** One command's value, or undefined when the request has none (Envoy writes `-`). */
function commandValue(
  ctx: Context,
  status: number,
  from: AnswerSource,
  name: string,
  arg?: string,
): string | undefined {
  const socket = ctx.req.socket;
  switch (name) {
    case 'REQ':
    case 'RESP':
      return headerValue(ctx, name, arg ?? '');
    case 'RESPONSE_CODE':
      return String(status);
    case 'PROTOCOL':
      return ctx.req.httpVersionMajor === 2 ? 'HTTP/2' : `HTTP/${ctx.req.httpVersion}`;
    case 'UPSTREAM_CLUSTER':
      return from.cluster;
    case 'ROUTE_NAME':
      return from.route;
    case 'HOSTNAME':
      return hostname();
    case 'START_TIME':
      return new Date().toISOString();
    // The client as the gateway trusts it (behind a trusted proxy, the one it names), as Envoy's remote address.
    case 'DOWNSTREAM_REMOTE_ADDRESS':
      return hostPort(trustedClientAddress(ctx), socket.remotePort ?? 0);
    case 'DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT':
      return trustedClientAddress(ctx);
    case 'DOWNSTREAM_DIRECT_REMOTE_ADDRESS':
      return hostPort(clientAddress(ctx), socket.remotePort ?? 0);
    case 'DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT':
      return clientAddress(ctx);
    case 'DOWNSTREAM_LOCAL_ADDRESS':
      return hostPort(unmappedAddress(socket.localAddress ?? ''), socket.localPort ?? 0);
    case 'DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT':
      return unmappedAddress(socket.localAddress ?? '');
    case 'DOWNSTREAM_LOCAL_PORT':
      return String(socket.localPort ?? 0);
    default:
      return undefined;
  }
}

/** A format with its commands filled in, as Envoy fills them: `-` for what the request does not have, cut to a `:length`. */
function fill(format: string, ctx: Context, status: number, from: AnswerSource): string {
  return format.replace(
    FORMAT_COMMAND,
    (_written: string, name: string | undefined, arg: string | undefined, length: string | undefined) => {
      if (name === undefined) return '%';
      const value = commandValue(ctx, status, from, name, arg) ?? '-';
      return length === undefined ? value : value.slice(0, Number(length));
    },
  );
}

function render(override: CompiledOverride, ctx: Context, status: number, from: AnswerSource): string {
  if (override.text !== undefined) return fill(override.text, ctx, status, from);
  const out: Record<string, unknown> = {};
  for (const [key, value] of override.json!) {
    // A value that is one numeric command alone is a number, as Envoy types it in a JSON body.
    const alone = /^%([A-Z_]+)%$/.exec(value)?.[1];
    out[key] =
      alone !== undefined && NUMERIC.has(alone)
        ? Number(fill(value, ctx, status, from))
        : fill(value, ctx, status, from);
  }
  return `${JSON.stringify(out)}\n`;
}

function isStream(body: unknown): body is Readable {
  return body !== null && typeof body === 'object' && typeof (body as Readable).pipe === 'function';
}

/**
 * Replaces the body of an answer whose status `overrides` names, unless it
 * is already on its way (sent, or a connection switched to another protocol).
 */
export function applyErrorOverrides(ctx: Context, overrides: ErrorOverrides, from: AnswerSource): void {
  const res = ctx.res;
  if (res.headersSent || ctx.respond === false) return;
  const status = ctx.status;
  const override = overrides.get(status);
  if (override === undefined) return;
  const old: unknown = ctx.body;
  // The upstream's own body is not read: the answer it belongs to is replaced.
  if (isStream(old)) old.destroy();
  for (const name of BODY_HEADERS) res.removeHeader(name);
  ctx.body = render(override, ctx, status, from);
  // Koa's body setter may set a 200 on a body given to an error status: the status stands.
  ctx.status = status;
  // Set as written: Envoy adds no charset to the content_type it is given.
  res.setHeader('Content-Type', override.contentType);
}
