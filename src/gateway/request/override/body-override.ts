/**
 * @module gateway/request/override/body-override
 * A method override in the body of a POST. Rails (Rack::MethodOverride, in
 * every Rails app), Laravel, Symfony and Spring's HiddenHttpMethodFilter take
 * `_method` from a form body (`application/x-www-form-urlencoded` or
 * `multipart/form-data`, Rack from any multipart type and from a body
 * without a Content-Type), and Laravel and Express's method-override from
 * a JSON body too: a POST with `_method=DELETE` in its body, sent to a
 * Mapping for POST that bypasses auth, was a DELETE to them. The gateway
 * reads such a body only where it matters: a POST of one of those types
 * for a path some route of which asks for a method (see ../../gateway); as
 * backends decode it (./body-text); names and values read as the query's
 * are (./method-override).
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { RouteTable } from '../../match/route-table';
import { peekBody } from '../../stages/auth-body';
import { bodyTexts, decodedBody } from './body-text';
import { overriddenMethods } from './method-override';

type BodyKind = 'form' | 'multipart' | 'json';

/** Where PHP ends a Content-Type's media type (Rack ends it at `;` or `,`, Spring at `;`). */
const MEDIA_TYPE_END = /[;,\s]/;

/**
 * The kind of body a backend reads an override from, by its Content-Type, as
 * the most lenient of them reads it; undefined for others. Rack reads the
 * body of a POST without a Content-Type as a form, and Laravel takes for
 * JSON any Content-Type that holds `/json` or `+json`, its parameters
 * included (`text/json`, `text/plain; x=/json`).
 */
export function overrideBodyKind(contentType: string | undefined): BodyKind | undefined {
  const lower = contentType?.trim().toLowerCase() ?? '';
  if (lower === '') return 'form';
  const end = lower.search(MEDIA_TYPE_END);
  const type = end === -1 ? lower : lower.slice(0, end);
  if (type === 'application/x-www-form-urlencoded') return 'form';
  // PHP reads multipart/form-data; Rack any multipart type with a boundary (mixed, related).
  if (type.startsWith('multipart/')) return 'multipart';
  if (lower.includes('/json') || lower.includes('+json')) return 'json';
  return undefined;
}

/** A name and value as one argument of a query, for ./method-override to read as it reads the query's. */
function argument(name: string, value: string): string {
  return `${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
}

/**
 * Every boundary a backend may take a multipart Content-Type to give: PHP
 * takes what follows the first `=` after the first `boundary` anywhere in
 * it (`xboundary=A`), Rack the last `boundary=`, others the parameter.
 */
function boundariesOf(contentType: string): string[] {
  const found = new Set<string>();
  const lower = contentType.toLowerCase();
  for (let at = lower.indexOf('boundary'); at !== -1; at = lower.indexOf('boundary', at + 1)) {
    const equals = contentType.indexOf('=', at);
    if (equals === -1) break;
    const rest = contentType.slice(equals + 1).trimStart();
    const value = rest.startsWith('"')
      ? rest.slice(1, rest.indexOf('"', 1) === -1 ? undefined : rest.indexOf('"', 1))
      : rest.split(/[;,]/, 1)[0].trim();
    if (value !== '') found.add(value);
  }
  return [...found];
}

/** The fields of a multipart body, each as a query argument (its `name` or `name*` and its content), by every boundary it may have. */
function multipartArguments(body: string, contentType: string): string[] {
  return boundariesOf(contentType).flatMap((boundary) => multipartFields(body, boundary));
}

/** The fields of a multipart body split at `boundary`. */
function multipartFields(body: string, boundary: string): string[] {
  const found: string[] = [];
  for (const part of body.split(`--${boundary}`)) {
    const headEnd = part.indexOf('\r\n\r\n');
    const bareEnd = part.indexOf('\n\n');
    const end = headEnd !== -1 ? headEnd : bareEnd;
    if (end === -1) continue;
    const head = part.slice(0, end);
    const value = part.slice(end + (headEnd !== -1 ? 4 : 2)).replace(/\r?\n$/, '');
    // Every name the part gives itself: name="_method", name=_method, name*=UTF-8''_method.
    for (const match of head.matchAll(/[;\s]name\*?\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/gi)) {
      const name = (match[1] ?? match[2]).replace(/^[\w-]*'[^']*'/, '');
      found.push(argument(name, value));
    }
  }
  return found;
}

/** The top-level string fields of a JSON object, each as a query argument. */
function jsonArguments(body: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return [];
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const found: string[] = [];
  for (const [name, field] of Object.entries(value)) {
    for (const item of Array.isArray(field) ? field : [field])
      if (typeof item === 'string') found.push(argument(name, item));
  }
  return found;
}

/**
 * The methods a body of `contentType` names in `_method` or another
 * override's name, upper case; undefined when it names none.
 */
export function bodyOverrides(contentType: string | undefined, body: Buffer): string[] | undefined {
  const kind = overrideBodyKind(contentType);
  if (kind === undefined || body.length === 0) return undefined;
  const named: string[] = [];
  // In UTF-8, and in the charset the type names, as a backend may decode it.
  for (const text of bodyTexts(body, contentType)) {
    const found =
      kind === 'form' ? [text] : kind === 'multipart' ? multipartArguments(text, contentType!) : jsonArguments(text);
    if (found.length > 0) named.push(...(overriddenMethods({}, found.join('&')) ?? []));
  }
  return named.length === 0 ? undefined : named;
}

/** What a request was routed by, as `RouteTable.matchAlike` takes it. */
export interface RoutedBy {
  path: string;
  plain: string;
  method: string;
  headers: IncomingHttpHeaders;
  host: string | undefined;
  query: string;
  scheme: string;
}

/**
 * Whether a request's body may name a method override that backends obey: a
 * POST of a type they read one from. Any other request's body is never read
 * for it, and costs this comparison alone, with no promise to await.
 */
export function bodyMayOverride(method: string, headers: IncomingHttpHeaders): boolean {
  return method === 'POST' && overrideBodyKind(headers['content-type']) !== undefined;
}

/**
 * Throws the 400 of `RouteTable.matchAlike` for a POST whose body names an
 * override that would route it elsewhere than POST (one {@link
 * bodyMayOverride} lets through). Reads the body (at most `maxBytes`, and
 * puts it back for whoever reads it next) only on a route where the method
 * decides.
 */
export async function refuseBodyOverride(
  req: IncomingMessage,
  table: Pick<RouteTable<unknown>, 'matchAlike' | 'methodMayDecide'>,
  by: RoutedBy,
  maxBytes: number,
): Promise<void> {
  if (!table.methodMayDecide(by.path) && (by.plain === by.path || !table.methodMayDecide(by.plain))) return;
  const { bytes } = await peekBody(req, maxBytes);
  // As a backend that undoes its Content-Encoding reads it.
  const named = bodyOverrides(by.headers['content-type'], decodedBody(bytes, by.headers['content-encoding'], maxBytes));
  if (named !== undefined)
    table.matchAlike(by.path, by.plain, by.method, by.headers, by.host, named, by.query, by.scheme);
}
