/**
 * @module gateway/request/headers/header-edits
 * A Mapping's header edits, compiled once per configuration into lists, and
 * applied to each request and response with a loop over them: the removals
 * first, then the additions, as Envoy applies `request_headers_to_remove`
 * and `request_headers_to_add`.
 *
 * An added header with `append` (the default, as in Emissary) joins the
 * values already there: request headers as one comma-separated line (`; `
 * for `Cookie`), response headers as one more line of the same name (so
 * `Set-Cookie` works). Without `append` it replaces them. An empty value adds
 * nothing, as in Envoy. A value with Envoy variables (`%PROTOCOL%`, the
 * client's address) is filled in per request; any other value is used as it
 * is, but for `%%`, which is one `%` as in Envoy.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { headerName, hostPort, protocolOf, unmappedAddress } from '../../../http';
import type { AddedHeader, MappingRecord } from '../../config/schema';

/** One header to add, ready to apply. */
export interface HeaderAddition {
  /** Lower case for a request header, as it is written ({@link headerName}) for a response header. */
  readonly name: string;
  readonly value: string;
  readonly append: boolean;
  /** What joins it to a request header's value already there. */
  readonly separator: string;
  /** Whether `value` holds Envoy variables to fill in for each request. */
  readonly variables: boolean;
}

/**
 * The variables the config accepts (see `config/headers`), and `%%`, Envoy's
 * literal `%`, read left to right as Envoy reads them: `%%PROTOCOL%%` is
 * the text `%PROTOCOL%`.
 */
const VARIABLES = /%%|%(DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT|DOWNSTREAM_REMOTE_ADDRESS|PROTOCOL)%/g;

/** Whether a value holds a variable, not only `%%`. */
function hasVariables(value: string): boolean {
  for (const match of value.matchAll(VARIABLES)) if (match[1] !== undefined) return true;
  return false;
}

/** A value with its variables filled in from the client's connection, as Envoy writes them. */
function filled(value: string, socket: Socket | null, req: IncomingMessage): string {
  return value.replace(VARIABLES, (_all, name: string | undefined) => {
    if (name === undefined) return '%';
    if (name === 'PROTOCOL') return protocolOf(req);
    const ip = unmappedAddress(socket?.remoteAddress ?? '');
    if (name === 'DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT' || ip === '') return ip;
    return hostPort(ip, socket?.remotePort ?? 0);
  });
}

/** A route's header edits, as lists. */
export interface HeaderEdits {
  readonly addRequestHeaders: readonly HeaderAddition[];
  readonly removeRequestHeaders: readonly string[];
  readonly addResponseHeaders: readonly HeaderAddition[];
  readonly removeResponseHeaders: readonly string[];
}

function additions(map: Readonly<Record<string, AddedHeader>>): HeaderAddition[] {
  const list: HeaderAddition[] = [];
  for (const [name, { value, append }] of Object.entries(map)) {
    if (value === '') continue;
    const variables = hasVariables(value);
    // Without variables, only `%%` is left to read: once, here.
    list.push({
      name,
      value: variables ? value : value.replace(VARIABLES, '%'),
      append,
      separator: name === 'cookie' ? '; ' : ', ',
      variables,
    });
  }
  return list;
}

/** The edits of a validated Mapping. */
export function compileHeaderEdits(mapping: MappingRecord): HeaderEdits {
  return {
    addRequestHeaders: additions(mapping.add_request_headers),
    removeRequestHeaders: mapping.remove_request_headers,
    addResponseHeaders: additions(mapping.add_response_headers).map((added) => ({
      ...added,
      name: headerName(added.name),
    })),
    removeResponseHeaders: mapping.remove_response_headers,
  };
}

/** Edits the headers of the request about to be forwarded (in-process or remote). */
export function applyRequestEdits(req: IncomingMessage, edits: HeaderEdits): void {
  const headers = req.headers;
  const remove = edits.removeRequestHeaders;
  for (let i = 0; i < remove.length; i++) delete headers[remove[i]];
  const add = edits.addRequestHeaders;
  for (let i = 0; i < add.length; i++) {
    const name = add[i].name;
    const value = add[i].variables ? filled(add[i].value, req.socket, req) : add[i].value;
    if (value === '') continue;
    const prior = headers[name];
    if (prior === undefined || !add[i].append) headers[name] = value;
    else if (Array.isArray(prior)) headers[name] = [...prior, value];
    else headers[name] = prior + add[i].separator + value;
  }
}

/** Edits the headers of the response about to be sent; nothing once they are sent. */
export function applyResponseEdits(res: ServerResponse, edits: HeaderEdits): void {
  if (res.headersSent) return;
  const remove = edits.removeResponseHeaders;
  for (let i = 0; i < remove.length; i++) res.removeHeader(remove[i]);
  const add = edits.addResponseHeaders;
  for (let i = 0; i < add.length; i++) {
    const name = add[i].name;
    const value = add[i].variables ? filled(add[i].value, res.socket, res.req) : add[i].value;
    if (value === '') continue;
    const prior = add[i].append ? res.getHeader(name) : undefined;
    if (prior === undefined) res.setHeader(name, value);
    else res.setHeader(name, Array.isArray(prior) ? [...prior, value] : [String(prior), value]);
  }
}
