/**
 * @module gateway/config/headers
 * The header fields of a Mapping, as Emissary spells them:
 * `add_request_headers` / `add_response_headers` (a value, or `{value,
 * append}` with `append` true by default), `remove_request_headers` /
 * `remove_response_headers` (a name or a list), and `headers` to match (an
 * exact value, or `true` for any). Every wrong entry is reported at its own
 * field path; names come out lower-case. A value may hold the Envoy
 * variables Emissary documents (`%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%`,
 * `%PROTOCOL%`); any other is refused rather than sent as it is written.
 * `%%` is a literal `%`, as in Envoy.
 */
import { z } from 'zod';
import { dataRecord } from '../../files';
import { isHopByHop } from '../../http';

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value Node will send: no line breaks or other control characters. */
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

const HOST =
  "may not be edited: the upstream is sent its own Host and X-Forwarded-Host carries the client's (Envoy refuses host edits too)";
const HOP_BY_HOP = 'is a hop-by-hop header: it describes one connection and is never passed on';
const FRAMING = 'describes how the body is framed; the gateway sets it from the body it sends';

/** Why no edit may touch a header (lower-case name): Host, the body's framing, a hop-by-hop header; undefined when one may. */
function uneditable(lower: string): string | undefined {
  if (lower === 'host') return HOST;
  if (lower === 'transfer-encoding' || lower === 'content-length') return FRAMING;
  return isHopByHop(lower) ? HOP_BY_HOP : undefined;
}

/**
 * Envoy's variables that Emissary documents for header values, filled in per
 * request: the client's address (with and without its port) and the protocol.
 */
export const HEADER_VARIABLES = [
  'DOWNSTREAM_REMOTE_ADDRESS',
  'DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT',
  'PROTOCOL',
] as const;

/** An Envoy variable in a value, `%NAME%` or `%NAME(args)%`, or `%%`, Envoy's literal `%`, read left to right. */
const VARIABLE = /%%|%([A-Z][A-Z0-9_]*)(?:\([^)%]*\))?%/g;

/** Why a value's Envoy variables cannot be filled in, or undefined when they all can (or there are none). */
function variablesProblem(value: string): string | undefined {
  if (!value.includes('%')) return undefined;
  for (const [written, name] of value.matchAll(VARIABLE)) {
    if (name === undefined) continue;
    if (!(HEADER_VARIABLES as readonly string[]).includes(name) || written !== `%${name}%`) {
      return `uses Envoy's ${written}, which the gateway does not fill in; it knows ${HEADER_VARIABLES.map((v) => `%${v}%`).join(', ')}`;
    }
  }
  return undefined;
}

/** Request headers the gateway writes itself after the edits, and so may not be added. */
const SET_BY_GATEWAY = new Set(['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'forwarded']);

/** A header a Mapping adds: its value, and whether it joins the values already there (`append`) or replaces them. */
export interface AddedHeader {
  readonly value: string;
  readonly append: boolean;
}

type Ctx = z.core.$RefinementCtx;

function issue(ctx: Ctx, input: unknown, path: PropertyKey[], message: string): void {
  ctx.issues.push({ code: 'custom', message, input, path });
}

/** Why a header name cannot be edited, or undefined when it can. */
function nameProblem(name: string, adding: boolean, request: boolean): string | undefined {
  if (name.startsWith(':')) return 'is a pseudo-header; it may not be edited (as in Envoy)';
  if (!HEADER_NAME.test(name)) return 'must be an HTTP header name';
  const lower = name.toLowerCase();
  const why = uneditable(lower);
  if (why !== undefined) return why;
  if (adding && request && SET_BY_GATEWAY.has(lower))
    return "is set by the gateway (from the client's own with trustProxy); it may only be removed";
  return undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a mapping' : `a ${typeof value}`;
}

/** A number or boolean as the text it was written as (`8`, `true`), as Emissary sends it; a number that is not finite is refused. */
function scalarValue(raw: number | boolean, ctx: Ctx, at: PropertyKey[], append: boolean): AddedHeader | undefined {
  if (typeof raw === 'number' && !Number.isFinite(raw)) {
    issue(ctx, raw, at, 'must be a string or a finite number');
    return undefined;
  }
  return { value: String(raw), append };
}

/** One added header's value: a string, a number or boolean (as its text), or `{value, append}`. */
function addedValue(raw: unknown, ctx: Ctx, at: PropertyKey[]): AddedHeader | undefined {
  if (typeof raw === 'string') {
    const problem = HEADER_VALUE.test(raw)
      ? variablesProblem(raw)
      : 'must be a header value: no line breaks or control characters';
    if (problem === undefined) return { value: raw, append: true };
    issue(ctx, raw, at, problem);
    return undefined;
  }
  // YAML reads an unquoted 8 or true as no string; Emissary sends them as written.
  if (typeof raw === 'number' || typeof raw === 'boolean') return scalarValue(raw, ctx, at, true);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    issue(ctx, raw, at, `must be a string or {value, append}, got ${describe(raw)}`);
    return undefined;
  }
  const entry = raw as Record<string, unknown>;
  let ok = true;
  for (const key of Object.keys(entry)) {
    if (key !== 'value' && key !== 'append') {
      issue(ctx, raw, [...at, key], 'unknown field (expected value and append)');
      ok = false;
    }
  }
  const { append } = entry;
  let value = entry.value;
  if (typeof value === 'number' || typeof value === 'boolean')
    value = scalarValue(value, ctx, [...at, 'value'], true)?.value;
  if (value === undefined && entry.value !== undefined) ok = false;
  else if (value === undefined) {
    issue(ctx, raw, [...at, 'value'], 'required (a string)');
    ok = false;
  } else if (typeof value !== 'string') {
    issue(ctx, raw, [...at, 'value'], `must be a string, got ${describe(value)}`);
    ok = false;
  } else {
    const problem = HEADER_VALUE.test(value)
      ? variablesProblem(value)
      : 'must be a header value: no line breaks or control characters';
    if (problem !== undefined) {
      issue(ctx, raw, [...at, 'value'], problem);
      ok = false;
    }
  }
  if (append !== undefined && typeof append !== 'boolean') {
    issue(ctx, raw, [...at, 'append'], `must be true or false, got ${describe(append)}`);
    ok = false;
  }
  return ok ? { value: value as string, append: append !== false } : undefined;
}

/** `add_request_headers` (request: true) or `add_response_headers`: `{<name>: <value> | {value, append}}`. */
export function addedHeadersSchema(request: boolean) {
  return dataRecord(z.string(), z.unknown()).transform((map, ctx) => {
    const out: Record<string, AddedHeader> = {};
    for (const [name, raw] of Object.entries(map)) {
      const problem = nameProblem(name, true, request);
      if (problem !== undefined) {
        issue(ctx, raw, [name], problem);
        continue;
      }
      const lower = name.toLowerCase();
      if (Object.prototype.hasOwnProperty.call(out, lower)) {
        issue(ctx, raw, [name], 'is given twice (header names are case-insensitive)');
        continue;
      }
      const added = addedValue(raw, ctx, [name]);
      if (added !== undefined) out[lower] = added;
    }
    return out;
  });
}

/** `remove_request_headers` (request: true) or `remove_response_headers`: a name or a list of names. */
export function removedHeadersSchema(request: boolean) {
  return z.unknown().transform((raw, ctx) => {
    const list = typeof raw === 'string' ? [raw] : raw;
    if (!Array.isArray(list)) {
      issue(ctx, raw, [], `must be a header name or a list of them, got ${describe(raw)}`);
      return [];
    }
    const out: string[] = [];
    list.forEach((name: unknown, i) => {
      const at = typeof raw === 'string' ? [] : [i];
      if (typeof name !== 'string') {
        issue(ctx, name, at, `must be a header name, got ${describe(name)}`);
        return;
      }
      const problem = nameProblem(name, false, request);
      if (problem !== undefined) issue(ctx, name, at, `'${name}' ${problem}`);
      else if (!out.includes(name.toLowerCase())) out.push(name.toLowerCase());
    });
    return out;
  });
}

/** The pseudo-headers a Mapping may match, as Envoy's header matchers read them. */
const MATCHED_PSEUDO_HEADERS = [':authority', ':method', ':path', ':scheme'];

/** Why a name cannot be matched in `headers` or `regex_headers`, or undefined when it can: a header, or a request's pseudo-header. */
export function matchedNameProblem(name: string): string | undefined {
  if (name.startsWith(':')) {
    if (MATCHED_PSEUDO_HEADERS.includes(name.toLowerCase())) return undefined;
    return `is no pseudo-header of a request: ${MATCHED_PSEUDO_HEADERS.join(', ')}`;
  }
  return HEADER_NAME.test(name) ? undefined : 'must be an HTTP header name';
}

/** What a `headers` entry asks of a request header: this exact value, or (`true`) any value. */
export type HeaderCondition = string | true;

/** `headers`: `{<name>: <exact value> | true}`. */
export const matchedHeadersSchema = dataRecord(z.string(), z.unknown()).transform((map, ctx) => {
  const out: Record<string, HeaderCondition> = {};
  for (const [name, raw] of Object.entries(map)) {
    const problem = matchedNameProblem(name);
    if (problem !== undefined) issue(ctx, raw, [name], problem);
    else if (Object.prototype.hasOwnProperty.call(out, name.toLowerCase()))
      issue(ctx, raw, [name], 'is given twice (header names are case-insensitive)');
    else if (raw === true || typeof raw === 'string') out[name.toLowerCase()] = raw;
    else issue(ctx, raw, [name], `must be a string (the exact value) or true (any value), got ${describe(raw)}`);
  }
  return out;
});
