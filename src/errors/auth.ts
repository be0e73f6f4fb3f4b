/**
 * @module errors/auth
 * The auth service's refusals (src/auth): credentials it cannot read or
 * that do not match, and a queue of password checks that is full. Each
 * carries the service's `WWW-Authenticate` challenge.
 */
import { defineErrors } from './define';

const CHALLENGED = 'with `WWW-Authenticate: Basic realm="..."`';

export const AUTH_ERRORS = defineErrors({
  CREDENTIALS_MISSING: { status: 401, detail: 'credentials are required', about: CHALLENGED },
  CREDENTIALS_TOO_LONG: { status: 401, detail: 'the Authorization header is too long', about: CHALLENGED },
  CREDENTIALS_NOT_BASIC: {
    status: 401,
    detail: 'the Authorization header must use the Basic scheme',
    about: CHALLENGED,
  },
  CREDENTIALS_BAD_BASE64: { status: 401, detail: 'the Basic credentials are not valid base64', about: CHALLENGED },
  CREDENTIALS_NOT_UTF8: { status: 401, detail: 'the Basic credentials are not valid UTF-8', about: CHALLENGED },
  CREDENTIALS_NO_COLON: { status: 401, detail: "the Basic credentials must be 'user:password'", about: CHALLENGED },
  CREDENTIALS_EMPTY_USER: { status: 401, detail: 'the Basic credentials have an empty user name', about: CHALLENGED },
  CREDENTIALS_REPEATED: {
    status: 401,
    detail: 'the request has more than one Authorization header',
    about: CHALLENGED,
  },
  CREDENTIALS_WRONG: { status: 401, detail: 'the user name or password is wrong', about: CHALLENGED },
  AUTH_BUSY: {
    status: 429,
    detail: 'too many password checks are waiting; try again in a second',
    about: `${CHALLENGED} and \`Retry-After: 1\``,
  },
});

/** The code of one of the auth service's refusals. */
export type AuthErrorCode = keyof typeof AUTH_ERRORS;
