/**
 * @module auth/basic
 * Reading HTTP Basic credentials (RFC 7617) from an `Authorization` header,
 * strictly: anything that is not exactly one well-formed Basic credential is
 * refused with a reason that never repeats the header.
 */
import { isUtf8 } from 'node:buffer';
import type { AuthErrorCode } from '../errors';
import { repeatedHeader } from '../http';

/** Above this many characters an `Authorization` header is refused unread. */
export const DEFAULT_MAX_HEADER_LENGTH = 4096;

/** Why credentials could not be read; safe to show to the client. */
export type CredentialsProblem =
  'missing' | 'too-long' | 'not-basic' | 'bad-base64' | 'not-utf8' | 'no-colon' | 'empty-user' | 'repeated';

/** Basic credentials, or why there are none. */
export type ParsedCredentials = { user: string; password: string } | { problem: CredentialsProblem };

/** The 401 for each problem: its detail says what is wrong, never what was sent. */
export const PROBLEM_ERROR: Readonly<Record<CredentialsProblem | 'invalid', AuthErrorCode>> = {
  missing: 'CREDENTIALS_MISSING',
  'too-long': 'CREDENTIALS_TOO_LONG',
  'not-basic': 'CREDENTIALS_NOT_BASIC',
  'bad-base64': 'CREDENTIALS_BAD_BASE64',
  'not-utf8': 'CREDENTIALS_NOT_UTF8',
  'no-colon': 'CREDENTIALS_NO_COLON',
  'empty-user': 'CREDENTIALS_EMPTY_USER',
  repeated: 'CREDENTIALS_REPEATED',
  invalid: 'CREDENTIALS_WRONG',
};

const TOKEN68 = /^[A-Za-z0-9+/]+={0,2}$/;

function isBase64(token: string): boolean {
  if (!TOKEN68.test(token)) return false;
  const padded = token.endsWith('=');
  // Padding only completes a 4-character group; an unpadded token never leaves a single character.
  return padded ? token.length % 4 === 0 : token.length % 4 !== 1;
}

/**
 * Reads Basic credentials from an `Authorization` header value. The scheme is
 * case-insensitive; the user name is everything before the first colon.
 */
export function parseBasic(
  header: string | string[] | undefined,
  maxLength = DEFAULT_MAX_HEADER_LENGTH,
): ParsedCredentials {
  if (header === undefined || header === '') return { problem: 'missing' };
  // Two Authorization headers are ambiguous; refuse rather than pick one.
  if (typeof header !== 'string') return { problem: 'repeated' };
  if (header.length > maxLength) return { problem: 'too-long' };

  const value = header.trim();
  const space = value.indexOf(' ');
  if (space === -1 && value.toLowerCase() === 'basic') return { problem: 'bad-base64' };
  if (space !== 5 || value.slice(0, 5).toLowerCase() !== 'basic') return { problem: 'not-basic' };
  const token = value.slice(6).trimStart();
  if (!isBase64(token)) return { problem: 'bad-base64' };

  const bytes = Buffer.from(token, 'base64');
  if (!isUtf8(bytes)) return { problem: 'not-utf8' };
  const decoded = bytes.toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return { problem: 'no-colon' };
  if (colon === 0) return { problem: 'empty-user' };
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Every `Authorization` value of a request when it has more than one, from
 * its raw headers (Node keeps only the first in `req.headers`); undefined for
 * the usual single header. Two are ambiguous, and {@link parseBasic} refuses
 * the list, rather than let the first one win.
 */
export function repeatedAuthorization(rawHeaders: readonly string[]): string[] | undefined {
  return repeatedHeader(rawHeaders, 'authorization');
}
