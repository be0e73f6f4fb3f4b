/**
 * @module auth/app
 * The HTTP face of an authenticator: a Koa app answering any method on any
 * path with the decision of `authenticate()`, in the representation the
 * client accepts.
 */
import type Koa from 'koa';
import {
  createFormatterRegistry,
  createServiceApp,
  headerName,
  HttpError,
  setFormattedBody,
  type FormatterRegistry,
} from '../http';
import { repeatedAuthorization } from './basic';
import type { AuthDecision, Authenticator } from './types';

/**
 * The project's registry, except that a request whose `Accept` matches nothing
 * still gets JSON: a gateway may forward any client's `Accept`, and an auth
 * decision must never become a 406.
 */
function lenientFormatters(): FormatterRegistry {
  const strict = createFormatterRegistry();
  const fallback = strict.get(strict.types[0])!;
  return { types: strict.types, get: (type) => strict.get(type), select: (req) => strict.select(req) ?? fallback };
}

/**
 * Why `decision` refuses, so the HTTP face can write it in the negotiated
 * type: its `detail`, else that of its JSON body (an authenticator that does
 * not set one).
 */
function detailOf(decision: AuthDecision): string | undefined {
  if (decision.detail !== undefined) return decision.detail;
  if (typeof decision.body !== 'string' || !decision.body.startsWith('{')) return undefined;
  try {
    const detail = (JSON.parse(decision.body) as { detail?: unknown }).detail;
    return typeof detail === 'string' ? detail : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The user a 200 names: the decision's `user`, else from its JSON body when
 * it has one, which holds the name itself rather than the header's UTF-8 bytes.
 */
function userOf(decision: AuthDecision): string | undefined {
  if (decision.user !== undefined) return decision.user;
  if (typeof decision.body === 'string' && decision.body.startsWith('{')) {
    try {
      const user = (JSON.parse(decision.body) as { user?: unknown }).user;
      if (typeof user === 'string') return user;
    } catch {
      // Not JSON after all: the header says who it is.
    }
  }
  const header = decision.headers['x-travel-user'];
  return typeof header === 'string' ? header : undefined;
}

/**
 * A Koa app over `authenticator`: 200 with `X-Travel-User` and `{user}` when
 * the credentials match, the decision's error status (401 and
 * `WWW-Authenticate`) with the project's error body otherwise.
 */
export function createAuthApp(authenticator: Authenticator): Koa {
  const formatters = lenientFormatters();
  const app = createServiceApp({ formatters });
  app.use(async (ctx) => {
    const repeated = ctx.headers.authorization === undefined ? undefined : repeatedAuthorization(ctx.req.rawHeaders);
    const asked =
      repeated === undefined ? ctx.headers : { ...ctx.headers, authorization: repeated as unknown as string };
    const decision = await authenticator.authenticate({
      method: ctx.method,
      url: ctx.url,
      headers: asked,
      connection: ctx.req.socket,
    });
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(decision.headers)) {
      if (name !== 'content-type' && name !== 'content-length') headers[headerName(name)] = value;
    }
    if (decision.status >= 400) {
      const single: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers))
        single[name] = Array.isArray(value) ? value.join(', ') : value;
      if (decision.error !== undefined) throw HttpError.of(decision.error, { headers: single });
      // Another authenticator's refusal, of its own status and words: answered as it decided.
      throw new HttpError(decision.status, detailOf(decision), { headers: single });
    }
    ctx.set(headers);
    ctx.status = decision.status;
    const user = decision.status === 200 ? userOf(decision) : undefined;
    if (user !== undefined) {
      setFormattedBody(ctx, formatters.select(ctx.req)!, { user });
      // Node sends the head along with a string body in the body's encoding,
      // UTF-8, which would encode the user header's bytes a second time; with
      // a Buffer body the head goes byte for byte.
      ctx.body = Buffer.from(ctx.body as string);
    } else if (decision.body !== undefined) ctx.body = decision.body;
  });
  return app;
}
