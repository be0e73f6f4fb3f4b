/**
 * @module errors/diag
 * The diagnostic page's errors (src/diag): a `json` argument it cannot read.
 */
import { defineErrors } from './define';

export const DIAG_ERRORS = defineErrors({
  DIAG_JSON_INVALID: { status: 400, detail: 'json must be true, 1 or empty (JSON), or false or 0 (the page)' },
});
