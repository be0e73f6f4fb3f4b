/**
 * @module errors/gateway
 * The gateway's own errors (src/gateway): a request it cannot route
 * safely (its target, Host, Connection, path and body), a route that a
 * spelling would change, its own paths, and the auth and rate-limit
 * stages. Its upstreams' are in errors/upstream.
 */
import { defineErrors } from './define';

export const GATEWAY_ERRORS = defineErrors({
  NO_CONFIGURATION: { status: 503, detail: 'no configuration is loaded' },
  NOT_READY: {
    status: 503,
    detail: 'not ready: {reason}',
    headers: { 'Cache-Control': 'no-store' },
    about: '`/gateway/v0/check_ready`',
  },

  TARGET_NOT_HTTP: { status: 400, detail: 'the request target must be an http or https URL' },
  TARGET_USER_INFO: { status: 400, detail: 'the request target may not carry user information' },
  TARGET_AUTHORITY_MALFORMED: { status: 400, detail: 'the authority of the request target is no host[:port]' },
  HOST_REPEATED: { status: 400, detail: 'the request has more than one Host header' },
  HOST_MALFORMED: {
    status: 400,
    detail: 'the Host (or the authority of the request target) is no host name or IP address with an optional port',
  },
  FORWARDED_HOST_MALFORMED: {
    status: 400,
    detail: 'the X-Forwarded-Host (or :authority) is no host name or IP address with an optional port',
  },
  HOST_NOT_SERVED: { status: 404, detail: 'no Host serves {host}', about: 'once the configuration has a Host' },
  INSECURE_REJECTED: {
    status: 403,
    detail: '{host} is served over HTTPS only',
    about: "a Host's `requestPolicy.insecure.action: Reject`, on a request that came over cleartext",
  },
  MISDIRECTED: {
    status: 421,
    detail: 'this connection was made for another name than {host}: open one that names it (SNI)',
    about:
      'a request on the HTTPS port whose host is served with a TLS context that asks for client certificates, versions or ciphers, on a connection made for another name',
  },
  CONNECTION_NAMES_TOO_MANY: { status: 400, detail: 'the Connection header names too many headers' },
  CONNECTION_NAMES_PROTECTED: { status: 400, detail: 'the Connection header may not name {name}' },

  PATH_NOT_ABSOLUTE: { status: 400, detail: 'the path must start with /' },
  PATH_DOT_PARAMETERS: { status: 400, detail: 'a dot segment may not carry ;parameters' },
  PATH_ABOVE_ROOT: { status: 400, detail: 'the path climbs above the root' },
  PATH_ESCAPE_MALFORMED: { status: 400, detail: 'the path has a malformed percent-escape' },
  PATH_ENCODED_SLASH: { status: 400, detail: 'an encoded slash or backslash is not allowed in the path' },
  PATH_ENCODED_NUL: { status: 400, detail: 'an encoded NUL (%00) is not allowed in the path' },
  PATH_ESCAPE_NOT_UTF8: {
    status: 400,
    detail: 'percent-escapes that are not UTF-8 (such as the overlong %C0%AE) are not allowed in the path',
    about: 'unless the Mapping has `allow_unsafe_path_escapes`, as the three below',
  },
  PATH_ESCAPE_DECODED_AGAIN: {
    status: 400,
    detail:
      'an encoded % before an encoded dot, slash, backslash, semicolon, NUL or %u escape is not allowed in the path',
  },
  PATH_ESCAPE_NOT_UTF8_AGAIN: {
    status: 400,
    detail: 'percent-escapes that are not UTF-8 once decoded again (such as %25C0%25AE) are not allowed in the path',
  },
  PATH_ESCAPE_FOLDS_TO_SEPARATOR: {
    status: 400,
    detail:
      'percent-escapes of a character that backends fold to a dot, slash or backslash (such as the fullwidth %EF%BC%8E) are not allowed in the path',
  },

  ROUTE_BY_PARAMETERS: {
    status: 400,
    detail: 'the ;parameters of the path would route it elsewhere than the path without them',
  },
  ROUTE_BY_METHOD_OVERRIDE: {
    status: 400,
    detail: 'the method override of the request would route it elsewhere than its method',
  },
  ROUTE_BY_QUERY_READING: {
    status: 400,
    detail:
      'the query gives an argument twice or in a spelling some backends read otherwise, and their readings would route the request apart',
  },
  ROUTE_BY_LETTER_FOLD: {
    status: 400,
    detail:
      'the path spells a letter of a prefix with a character that backends fold to it (ſ, K, ı, İ), which would route it elsewhere',
  },
  ROUTE_PATTERNS_URL_TOO_LONG: {
    status: 414,
    detail: "the path or query is too long to be matched against the routes' patterns (more than {budget} steps)",
    about: "the Mappings' patterns would read past what one request may make them read",
  },
  ROUTE_PATTERNS_HEADER_TOO_LONG: {
    status: 431,
    detail: "a header is too long to be matched against the routes' patterns (more than {budget} steps)",
    about: 'the host counts as a header',
  },

  BODY_DECODED_TOO_LARGE: { status: 413, detail: 'the request body, decoded, is larger than {limit} bytes' },

  ADDRESS_REFUSED: {
    status: 403,
    detail: 'requests from this address are not allowed',
    about: "the Module's `ip_allow` or `ip_deny`, held before auth",
  },
  AUTH_SERVICE_UNAVAILABLE: {
    status: 403,
    statusFrom: 'status_on_error',
    detail: 'the auth service is unavailable',
    about: 'unreachable, timed out or 5xx',
  },
  AUTH_BODY_TOO_LONG: {
    status: 413,
    detail: 'the request body is longer than the {maxBytes} bytes the auth service may be sent',
    about: '`include_body` without `allow_partial`',
  },
  RATE_LIMITED: { status: 429, about: 'with `Retry-After`, `RateLimit` and `RateLimit-Policy`' },
  RATE_LIMIT_SERVICE_FAILED: {
    status: 500,
    detail: 'the rate-limit service did not answer',
    about: 'with `failure_mode_deny`',
  },
});
