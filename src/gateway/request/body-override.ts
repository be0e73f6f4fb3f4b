/**
 * @module gateway/request/body-override
 * A method override in the body of a POST. Rails (Rack::MethodOverride, in
 * every Rails app), Laravel, Symfony and Spring's HiddenHttpMethodFilter take
 * `_method` from a form body (`application/x-www-form-urlencoded` or
 * `multipart/form-data`, and Rack from a body without a Content-Type), and
 * Laravel from a JSON body too: a POST with
 * `_method=DELETE` in its body, sent to a Mapping for POST that bypasses
 * auth, was a DELETE to them. The gateway reads such a body only where it
 * matters: a POST of one of those types to a route that another method
 * would not reach alike (see ../gateway); names and values are read as the
 * query's are (./method-override).
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { RouteTable } from '../route-table';
import { peekBody } from '../stages/auth-body';
import { overriddenMethods } from './method-override';

/** The methods a backend may take an override to: those Rack accepts, which cover the others'. */
export const OVERRIDE_METHODS: readonly string[] = ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'LINK', 'UNLINK'];

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
  if (type === 'multipart/form-data') return 'multipart';
  if (lower.includes('/json') || lower.includes('+json')) return 'json';
  return undefined;
}

/** A name and value as one argument of a query, for ./method-override to read as it reads the query's. */
function argument(name: string, value: string): string {
  return `${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
}

/** The boundary parameter of a multipart Content-Type, quoted or not. */
function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/** The fields of a multipart body, each as a query argument: its `name` (or `name*`) and its content. */
function multipartArguments(body: string, contentType: string): string[] {
  const boundary = boundaryOf(contentType);
  if (boundary === undefined) return [];
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
    for (const item of Array.isArray(field) ? field : [field]) if (typeof item === 'string') found.push(argument(name, item));
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
  const text = body.toString('utf8');
  if (kind === 'form') return overriddenMethods({}, text);
  const found = kind === 'multipart' ? multipartArguments(text, contentType!) : jsonArguments(text);
  return found.length === 0 ? undefined : overriddenMethods({}, found.join('&'));
}

/** What a request was routed by, as `RouteTable.matchAlike` takes it. */
export interface RoutedBy {
  path: string;
  plain: string;
  method: string;
  headers: IncomingHttpHeaders;
  host: string | undefined;
  query: string;
}

/** Whether some method a backend may take an override to would route the request elsewhere. */
function methodDecides(table: Pick<RouteTable<unknown>, 'matchAlike'>, by: RoutedBy): boolean {
  try {
    table.matchAlike(by.path, by.plain, by.method, by.headers, by.host, OVERRIDE_METHODS, by.query);
    return false;
  } catch {
    return true;
  }
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
export async function refuseBodyOverride(req: IncomingMessage, table: Pick<RouteTable<unknown>, 'matchAlike'>, by: RoutedBy, maxBytes: number): Promise<void> {
  if (!methodDecides(table, by)) return;
  const { bytes } = await peekBody(req, maxBytes);
  const named = bodyOverrides(by.headers['content-type'], bytes);
  if (named !== undefined) table.matchAlike(by.path, by.plain, by.method, by.headers, by.host, named, by.query);
}
