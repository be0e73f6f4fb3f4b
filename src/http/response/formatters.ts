/**
 * @module http/response/formatters
 * The registry of representations: a formatter per media type, chosen from
 * `Accept` with negotiator. JSON is the default.
 */
import Negotiator from 'negotiator';
import type { Context } from 'koa';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';

/** Turns a response body into one media type. */
export interface Formatter {
  /** The media type it writes, e.g. `application/json`. */
  readonly type: string;
  /**
   * The whole `Content-Type` header it answers with, when it knows it
   * (`application/json; charset=utf-8`): set as it is, it spares the lookup
   * Koa makes from `type`. Without it, Koa derives the header from `type`.
   */
  readonly contentType?: string;
  format(body: unknown): string;
}

/** A set of formatters and the negotiation over them. */
export interface FormatterRegistry {
  /** The media types in order of preference; the first is the default. */
  readonly types: readonly string[];
  get(type: string): Formatter | undefined;
  /**
   * The formatter the request's `Accept` asks for: the default when there is no
   * `Accept`, `undefined` when nothing registered is acceptable.
   */
  select(req: IncomingMessage): Formatter | undefined;
}

export const jsonFormatter: Formatter = {
  type: 'application/json',
  contentType: 'application/json; charset=utf-8',
  format: (body) => JSON.stringify(body),
};

/** What begins every XML body: the declaration, which names the encoding. */
export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

export const xmlFormatter: Formatter = {
  type: 'application/xml',
  // The XML declaration names the encoding.
  contentType: 'application/xml',
  format: (body) => `${XML_DECLARATION}${xmlElement(Array.isArray(body) ? 'items' : 'response', body)}`,
};

/**
 * Sets `body`, written by `formatter`, as the response body with its
 * `Content-Type`.
 */
export function setFormattedBody(ctx: Context, formatter: Formatter, body: unknown): void {
  setWrittenBody(ctx, formatter, formatter.format(body));
}

/**
 * Sets `written`, a body `formatter` wrote (whole, or as a stream of its
 * text), as the response body with the formatter's `Content-Type`.
 */
export function setWrittenBody(ctx: Context, formatter: Formatter, written: string | Readable): void {
  // A Content-Type set first spares Koa guessing one for the string body;
  // set on the response itself, it spares ctx.set's arrays on every answer.
  // Koa already set JSON's for an object body: not set (and checked) twice.
  const res = ctx.res;
  const type = formatter.contentType;
  if (type !== undefined && !res.headersSent && res.getHeader('content-type') !== type)
    res.setHeader('Content-Type', type);
  // Koa keeps a status the handler set; an implicit one becomes 200.
  ctx.body = written;
  if (formatter.contentType === undefined) ctx.type = formatter.type;
}

const CHARSET = /;\s*charset\s*=/i;

/**
 * The media type a formatter is negotiated as, with the parameters it is sent
 * with, so that an Accept range with parameters (`application/json;
 * charset=utf-8`) matches: negotiator matches a range's parameters only
 * against the offered type's. Koa sends every string body in UTF-8, so a
 * type that names no charset is offered as UTF-8.
 */
function negotiatedType(formatter: Formatter): string {
  const type = formatter.contentType ?? formatter.type;
  return CHARSET.test(type) ? type : `${type}; charset=utf-8`;
}

/** Builds a registry; the first formatter is the default representation. */
export function createFormatterRegistry(
  formatters: readonly Formatter[] = [jsonFormatter, xmlFormatter],
): FormatterRegistry {
  if (formatters.length === 0) throw new Error('a formatter registry needs at least one formatter');
  const byType = new Map(formatters.map((f) => [f.type, f]));
  const types = formatters.map((f) => f.type);
  const offered = formatters.map(negotiatedType);
  const byOffered = new Map(formatters.map((f, i) => [offered[i], f]));
  const fallback = formatters[0];
  return {
    types,
    get: (type) => byType.get(type),
    select(req) {
      const accept = req.headers.accept;
      // The common cases skip negotiator: no header, or a client that takes anything.
      if (accept === undefined || accept === '' || accept === '*/*') return fallback;
      const chosen = new Negotiator(req).mediaType(offered);
      return chosen === undefined ? undefined : byOffered.get(chosen);
    },
  };
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

// Characters outside XML 1.0's Char production (controls, lone surrogates,
// U+FFFE/U+FFFF) make the whole document unreadable, so they are left out.
const NOT_XML_CHAR =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function xmlText(value: string): string {
  return value.replace(NOT_XML_CHAR, '').replace(/[&<>"']/g, (c) => XML_ESCAPES[c]);
}

/** The XML element name of a key: what XML does not allow in a name becomes `_`. */
function xmlName(key: string): string {
  const name = key.replace(/[^A-Za-z0-9_.-]/g, '_');
  return /^[A-Za-z_]/.test(name) ? name : `_${name}`;
}

/** `value` as the element `name` of {@link xmlFormatter}'s bodies: an object's fields and a list's items as elements within it. */
export function xmlElement(name: string, value: unknown): string {
  const tag = xmlName(name);
  if (value === null || value === undefined) return `<${tag}/>`;
  if (Array.isArray(value)) return `<${tag}>${value.map((v) => xmlElement('item', v)).join('')}</${tag}>`;
  if (typeof value === 'object') {
    const inner = Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => xmlElement(k, v))
      .join('');
    return `<${tag}>${inner}</${tag}>`;
  }
  return `<${tag}>${xmlText(scalarText(value) ?? '')}</${tag}>`;
}

/** A string, number, boolean or bigint as text; `undefined` for anything else, which has no text of its own. */
export function scalarText(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    default:
      return undefined;
  }
}
