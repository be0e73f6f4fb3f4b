/**
 * @module errors/http
 * The errors of the conventions every module shares (src/http): statuses
 * with nothing more to say, request bodies, header counts and transfer
 * codings, representations, and the query arguments of collections.
 */
import { defineErrors } from './define';

export const HTTP_ERRORS = defineErrors({
  NOT_FOUND: { status: 404 },
  METHOD_NOT_ALLOWED: { status: 405, about: '`Allow` names the methods the path serves' },
  NOT_ACCEPTABLE: { status: 406, detail: 'supported types: {types}' },
  INTERNAL_ERROR: {
    status: 500,
    about: 'an exception nothing expected: the body says nothing of it, the log has it as `unexpected error`',
  },

  BODY_REQUIRED: { status: 400, detail: 'a JSON request body is required' },
  BODY_NOT_JSON: { status: 415, detail: 'the request body must be application/json' },
  BODY_CHARSET_UNSUPPORTED: { status: 415, detail: "charset '{charset}' is not supported: JSON is sent in UTF-8" },
  BODY_ENCODING_UNSUPPORTED: { status: 415, detail: "content encoding '{encoding}' is not supported" },
  BODY_TOO_LARGE: { status: 413, detail: 'the request body is larger than {limit} bytes' },
  BODY_UNREADABLE: { status: 400, detail: 'the request body could not be read' },
  BODY_TOO_DEEP: { status: 400, detail: 'the request body nests arrays and objects deeper than {maxDepth} levels' },
  BODY_INVALID_JSON: { status: 400, detail: 'the request body is not valid JSON' },

  TOO_MANY_HEADERS: { status: 431, detail: 'a request may carry at most {max} header fields' },
  TRANSFER_ENCODING_IN_HTTP_1_0: { status: 400, detail: 'an HTTP/1.0 request may not have a Transfer-Encoding' },
  TRANSFER_CODING_UNSUPPORTED: {
    status: 501,
    detail: 'the request body is in a transfer coding other than chunked, which the gateway does not decode',
  },

  QUERY_ARGUMENT_REPEATED: { status: 400, detail: '{name} must be given once' },
  QUERY_ARGUMENT_UNKNOWN: { status: 400, detail: "unknown query argument '{name}'" },
  OFFSET_NOT_INTEGER: { status: 400, detail: 'offset must be a non-negative integer' },
  OFFSET_TOO_LARGE: { status: 400, detail: 'offset is too large' },
  LIMIT_NOT_INTEGER: { status: 400, detail: 'limit must be a positive integer' },
  FIELDS_MALFORMED: { status: 400, detail: 'fields must be a comma-separated list of field names' },
  FIELD_UNKNOWN: { status: 400, detail: "fields: unknown field '{field}'; known fields: {known}" },
  FILTER_UNKNOWN: { status: 400, detail: "unknown query argument '{name}'; filterable fields: {filterable}" },
  FILTER_VALUE_INVALID: {
    status: 400,
    detail: '{name} must be {expected}',
    about:
      '`expected` is what the field holds: `an integer from 1 to 5`, `a UUID`, `a date (YYYY-MM-DD)`, `one of ...`',
  },
});
