/**
 * @module auth/decisions
 * The answers of the auth service: a user let through, with the header that
 * names them to the backend, and the refusals, each body written once for
 * every request it answers.
 */
import { ERRORS, errorBody, type AuthErrorCode } from '../errors';
import { PROBLEM_ERROR, type CredentialsProblem } from './basic';
import type { UserEntry } from './passwords/htpasswd';
import type { AuthDecision } from './types';

/**
 * The header the user's name travels in, as the name's UTF-8 bytes: Node and
 * undici write a header value one byte per character and throw on anything
 * above U+00FF, so a name is turned into that byte string once, here.
 */
export const USER_HEADER = 'x-travel-user';

/** `name`'s UTF-8 bytes, one character each: the same string for an ASCII name. */
function headerValue(name: string): string {
  return Buffer.from(name, 'utf8').toString('latin1');
}

function quoted(value: string): string {
  if (/[\x00-\x1f\x7f]/.test(value)) throw new Error('the realm must not contain control characters');
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}

/** The `WWW-Authenticate` value that asks for credentials of `realm`; throws on a control character in it. */
export function basicChallenge(realm: string): string {
  return `Basic realm=${quoted(realm)}`;
}

/** The decision that refuses with `error` and `headers`, its body written once for every request it answers. */
function refusal(error: AuthErrorCode, headers: Record<string, string>): AuthDecision {
  const { status, detail } = ERRORS[error];
  return Object.freeze({
    status,
    headers: Object.freeze({ ...headers, 'content-type': 'application/json' }),
    body: JSON.stringify(errorBody(status, detail)),
    detail,
    error,
  });
}

/** The refusals under one challenge, made once. */
export interface Refusals {
  /** The refusal of credentials that are missing, malformed or wrong. */
  readonly deny: (problem: CredentialsProblem | 'invalid') => AuthDecision;
  /** The refusal of credentials not checked yet because the bcrypt threads have no room: 429, `Retry-After: 1`. */
  readonly busy: AuthDecision;
}

/** The refusals that carry `challenge`. */
export function createRefusals(challenge: string): Refusals {
  const denials = new Map<CredentialsProblem | 'invalid', AuthDecision>();
  for (const [problem, error] of Object.entries(PROBLEM_ERROR))
    denials.set(problem as CredentialsProblem | 'invalid', refusal(error, { 'www-authenticate': challenge }));
  return {
    deny: (problem) => denials.get(problem)!,
    // The challenge stays: the credentials were not refused, only not checked yet.
    busy: refusal('AUTH_BUSY', { 'www-authenticate': challenge, 'retry-after': '1' }),
  };
}

/** The decision that lets `entry`'s user through, naming them in {@link USER_HEADER}. */
export function allowUser(entry: UserEntry): AuthDecision {
  return Object.freeze({
    status: 200,
    headers: Object.freeze({ [USER_HEADER]: headerValue(entry.user), 'content-type': 'application/json' }),
    body: JSON.stringify({ user: entry.user }),
    user: entry.user,
  });
}
