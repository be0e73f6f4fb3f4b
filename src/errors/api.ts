/**
 * @module errors/api
 * The versioned API's errors (src/api): a path without a version, and a
 * message or account that is not there.
 */
import { defineErrors } from './define';

export const API_ERRORS = defineErrors({
  API_VERSION_MISSING: { status: 404, detail: 'the path must start with an API version: {versions}' },
  MESSAGE_NOT_FOUND: { status: 404, detail: 'no message has this id' },
  ACCOUNT_NOT_FOUND: { status: 404, detail: 'no account has this id' },
});
