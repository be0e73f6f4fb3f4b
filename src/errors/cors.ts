/**
 * @module errors/cors
 * The CORS policy's errors (src/cors): a preflight from an origin the
 * policy does not allow.
 */
import { defineErrors } from './define';

export const CORS_ERRORS = defineErrors({
  CORS_ORIGIN_NOT_ALLOWED: {
    status: 403,
    detail: 'the origin {origin} is not allowed',
    headers: { Vary: 'Origin' },
    about: 'a preflight',
  },
});
