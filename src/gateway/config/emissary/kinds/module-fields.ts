/**
 * @module gateway/config/emissary/kinds/module-fields
 * What becomes of each field of Emissary's ambassador Module that the
 * gateway does not apply: ignored, for a setting of how Envoy runs that has
 * its counterpart in the gateway's own options or behaviour, or refused,
 * for one whose absence a client or upstream would feel (an address
 * allowed that was to be denied, plain HTTP that was to be redirected).
 */

const LISTEN = 'ignored: the gateway listens where its --host and --port (HOST, PORT) say';
const HEADERS_SENT = 'ignored: header names are passed on as HTTP/1.1 reads them, in any case';

/** Fields ignored, with what the gateway does instead. */
export const IGNORED: Readonly<Record<string, string>> = {
  admin_port: LISTEN,
  diag_port: LISTEN,
  service_port: LISTEN,
  diagnostics:
    'ignored: the diag page (/gateway/v0/diag/) is served only where a Mapping routes to service diag, behind auth unless it bypasses it',
  liveness_probe: 'ignored: /gateway/v0/check_alive is always served',
  readiness_probe: 'ignored: /gateway/v0/check_ready is always served',
  envoy_log_path: 'ignored: the access log is one JSON line a request on stdout (LOG_LEVEL)',
  envoy_log_type: 'ignored: the access log is one JSON line a request on stdout (LOG_LEVEL)',
  envoy_log_format: 'ignored: the access log is one JSON line a request on stdout (LOG_LEVEL)',
  envoy_validation_timeout: 'ignored: a configuration is checked whole before it is applied',
  debug_mode: 'ignored: LOG_LEVEL=debug logs more',
  statsd: 'ignored: metrics are served for Prometheus at /gateway/v0/metrics',
  prune_unreachable_routes: 'ignored: routes are chosen by their hostname, with no Host resources to prune by',
  regex_type: 'ignored: patterns are RE2, as Emissary 3 reads them whatever it says',
  server_name: 'ignored: the gateway adds no Server header',
  proper_case: HEADERS_SENT,
  header_case_overrides: HEADERS_SENT,
  allow_chunked_length:
    'ignored: a request with both Content-Length and Transfer-Encoding is refused, as Emissary refuses it by default',
  buffer_limit_bytes: 'ignored: bodies are streamed; bodyLimit (1 MiB) bounds a request body',
  buffer: 'ignored: bodies are streamed; bodyLimit (1 MiB) bounds a request body, with a 413 past it',
  gzip: 'ignored: responses are passed on as the upstream encoded them',
  max_request_headers_kb: "ignored: Node's limit on a request's headers applies (a 431 past it)",
  listener_idle_timeout_ms: 'ignored: the keepAliveTimeoutMs option (65 s) sets how long an idle connection is kept',
  enable_http10: 'ignored: HTTP/1.0 requests are served',
  headers_with_underscores_action:
    "ignored: headers with underscores are passed on (Emissary's default), but a lookalike spelling (X_Forwarded_For) of a header the gateway reads or writes is dropped",
  merge_slashes: 'ignored: duplicate slashes are always merged before matching',
  reject_requests_with_escaped_slashes: 'ignored: an escaped slash (%2F) or backslash in a path is always a 400',
  strip_matching_host_port: "ignored: a Host's port is not held against a hostname unless the hostname names one",
  preserve_external_request_id:
    "ignored: a request id is the access log's; X-Request-Id is passed on as the client sent it",
  use_remote_address:
    'ignored: the client is the peer, or, with the trustProxy option, the address the proxy in front wrote last in X-Forwarded-For',
  xff_num_trusted_hops: 'ignored: X-Forwarded-For is trusted only with the trustProxy option (one hop)',
  enable_ipv4: 'ignored at true, its default',
  enable_ipv6: 'ignored at false, its default',
  resolver: 'ignored at kubernetes-service, its default',
  grpc_stats: 'ignored: gRPC calls are counted as requests, by Mapping, in the Prometheus metrics',
};

/** Fields refused whatever their value, with why. */
export const REFUSED: Readonly<Record<string, string>> = {
  lua_scripts: 'not supported: there is no Envoy to run Lua scripts',

  auth_enabled: 'not supported: an AuthService applies to every Mapping that does not bypass_auth',
};

/** Fields refused when true, and fine when false (their default). */
export const REFUSED_WHEN_TRUE: Readonly<Record<string, string>> = {
  x_forwarded_proto_redirect:
    "not supported: a Host's requestPolicy.insecure.action: Redirect redirects plain HTTP to HTTPS; remove the field",
  use_proxy_proto: 'not supported: the PROXY protocol is not read, and a request that starts with it is refused',
  enable_grpc_http11_bridge: 'not supported: HTTP/1.1 calls are not bridged to gRPC; gRPC clients call over HTTP/2',
};

/**
 * Module fields that are every Mapping's default in Emissary (a Mapping
 * without its own takes the Module's), with the value that changes nothing.
 */
export const UPSTREAM_DEFAULTS: Readonly<Record<string, unknown>> = {
  retry_policy: undefined,
  circuit_breakers: undefined,
  load_balancer: undefined,
  keepalive: undefined,
  cluster_idle_timeout_ms: undefined,
  cluster_max_connection_lifetime_ms: undefined,
  resolver: 'kubernetes-service',
  enable_ipv4: true,
  enable_ipv6: false,
};

/** The Mapping fields the Module's `defaults` give, as Emissary 3 reads them (its `httpmapping` class, then the top level). */
export const DEFAULTABLE: readonly string[] = [
  'add_request_headers',
  'add_response_headers',
  'remove_request_headers',
  'remove_response_headers',
];
