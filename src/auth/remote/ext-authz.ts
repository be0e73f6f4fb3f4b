/**
 * @module auth/remote/ext-authz
 * `Check` over gRPC: asks an auth service that speaks Envoy's external
 * authorization API (`envoy.service.auth.v3.Authorization`), as Envoy and
 * Emissary ask an AuthService with `proto: grpc`, through one channel per
 * service, with a deadline on every call; and reads its answer into what
 * the gateway does with it.
 */
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { grpcJs } from '../../platform';
import type * as protoLoader from '@grpc/proto-loader';
import { isHostPort, redactAddress } from '../../http';
import { RemoteAuthError } from './client';

/** The service and method Envoy's ext_authz calls. */
export const EXT_AUTHZ_METHOD = '/envoy.service.auth.v3.Authorization/Check';

const PROTO_DIR = path.resolve(__dirname, '../../../proto');

/** A peer's address, as the check request names the client and the gateway. */
export interface PeerAddress {
  readonly address: string;
  readonly port: number;
}

/** What one check request says of the request: Envoy's `AttributeContext`, as plain fields. */
export interface ExtAuthzCheck {
  readonly source: PeerAddress;
  readonly destination: PeerAddress;
  readonly id: string;
  readonly method: string;
  /** Lower-case names, repeated values joined by `,`, the pseudo-headers among them. */
  readonly headers: Record<string, string>;
  /** The path with its query, as Envoy's `:path`. */
  readonly path: string;
  readonly host: string;
  readonly scheme: string;
  /** The body's length, or -1 when unknown. */
  readonly size: number;
  /** `HTTP/1.1`, `HTTP/1.0` or `HTTP/2`. */
  readonly protocol: string;
  /** The body (or its first bytes), as UTF-8, when the AuthService asks for it. */
  readonly body?: string;
  /** The Mapping's `auth_context_extensions`. */
  readonly contextExtensions?: Readonly<Record<string, string>>;
}

/** A header the answer sets: `append` adds the value to those there, else it replaces them. */
export interface HeaderMutation {
  readonly name: string;
  readonly value: string;
  readonly append: boolean;
}

/** The service lets the request on, with these edits. */
export interface ExtAuthzAllowed {
  readonly allowed: true;
  readonly headers: readonly HeaderMutation[];
  readonly headersToRemove: readonly string[];
  readonly responseHeaders: readonly HeaderMutation[];
  readonly queryToSet: readonly (readonly [string, string])[];
  readonly queryToRemove: readonly string[];
}

/** The service refuses the request: the client gets this answer. */
export interface ExtAuthzDenied {
  readonly allowed: false;
  readonly status: number;
  readonly headers: readonly HeaderMutation[];
  readonly body: string;
}

export type ExtAuthzAnswer = ExtAuthzAllowed | ExtAuthzDenied;

export interface ExtAuthzClientOptions {
  /** The deadline of each call. Default 5000 ms. */
  timeoutMs?: number;
  /**
   * How the channel is secured. Default: plaintext, or TLS checked against
   * the system's certificate authorities for an `https://` address or `tls`.
   * A TLSContext's own credentials are given here.
   */
  credentials?: grpc.ChannelCredentials;
  /** TLS with the system's certificate authorities, when `credentials` does not say. */
  tls?: boolean;
  /** The name sent as SNI and checked in the service's certificate, instead of its host's (a TLSContext's `sni`). */
  servername?: string;
}

/** Metadata sent with a call, as headers are written: lower-case names, a list one entry a value. */
export type CallMetadata = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface ExtAuthzClient {
  /** The address called, for messages. */
  readonly target: string;
  /** Asks the service; `metadata` (lower-case names, a list one entry a value) goes with the call, as the trace context does. */
  check(request: ExtAuthzCheck, metadata?: CallMetadata): Promise<ExtAuthzAnswer>;
  close(): void;
}

interface ProtoHeaderOption {
  header?: { key?: string; value?: string } | null;
  append?: { value?: boolean } | null;
}

interface ProtoCheckResponse {
  status?: { code?: number } | null;
  denied_response?: { status?: { code?: number } | null; headers?: ProtoHeaderOption[]; body?: string } | null;
  ok_response?: {
    headers?: ProtoHeaderOption[];
    headers_to_remove?: string[];
    response_headers_to_add?: ProtoHeaderOption[];
    query_parameters_to_set?: { key?: string; value?: string }[];
    query_parameters_to_remove?: string[];
  } | null;
}

let method: protoLoader.MethodDefinition<object, object> | undefined;

/** The `Check` method, its codec read once per process. */
function checkMethod(): protoLoader.MethodDefinition<object, object> {
  if (method === undefined) {
    const { loadSync } = require('@grpc/proto-loader') as typeof protoLoader;
    const defs = loadSync('envoy/service/auth/v3/external_auth.proto', {
      keepCase: true,
      longs: Number,
      enums: String,
      defaults: false,
      oneofs: true,
      includeDirs: [PROTO_DIR],
    });
    const service = defs['envoy.service.auth.v3.Authorization'] as protoLoader.ServiceDefinition;
    method = service.Check;
  }
  return method;
}

/**
 * The gRPC target of an auth service address and whether it asks for TLS:
 * `host:port`, `[v6]:port`, or either behind `grpc://`, `http://` or
 * `https://`. Throws for anything else, which would fail every call.
 */
export function extAuthzTarget(address: string): { target: string; tls: boolean } {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(address)?.[1].toLowerCase();
  const bare = address.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/$/, '');
  if ((scheme !== undefined && !['grpc', 'http', 'https'].includes(scheme)) || !isHostPort(bare)) {
    throw new Error(
      `'${redactAddress(address)}' is not the address of a gRPC auth service: host:port, [v6]:port, or either behind grpc://, http:// or https://`,
    );
  }
  return { target: bare, tls: scheme === 'https' };
}

function socketAddress(peer: PeerAddress): object {
  return { socket_address: { address: peer.address, port_value: peer.port } };
}

/** The check request as the proto codec takes it. */
function checkRequest(check: ExtAuthzCheck, nowMs: number): object {
  const http: Record<string, unknown> = {
    id: check.id,
    method: check.method,
    headers: check.headers,
    path: check.path,
    host: check.host,
    scheme: check.scheme,
    size: check.size,
    protocol: check.protocol,
  };
  if (check.body !== undefined) http.body = check.body;
  return {
    attributes: {
      source: { address: socketAddress(check.source) },
      destination: { address: socketAddress(check.destination) },
      request: { time: { seconds: Math.floor(nowMs / 1000), nanos: (nowMs % 1000) * 1e6 }, http },
      context_extensions: check.contextExtensions ?? {},
    },
  };
}

const NONE: readonly never[] = [];

/**
 * Header options as Envoy's ext_authz of Emissary 3 reads them: `append:
 * true` adds to the value there, anything else replaces it; an option
 * without a name is skipped.
 */
function mutations(options: ProtoHeaderOption[] | undefined): readonly HeaderMutation[] {
  if (options === undefined || options.length === 0) return NONE;
  const out: HeaderMutation[] = [];
  for (const option of options) {
    const name = option.header?.key?.toLowerCase();
    if (!name) continue;
    out.push({ name, value: option.header?.value ?? '', append: option.append?.value === true });
  }
  return out;
}

/** Reads an answer: OK (code 0) lets the request on, any other code refuses it, with 403 unless it names a status. */
export function readCheckResponse(answer: ProtoCheckResponse): ExtAuthzAnswer {
  if ((answer.status?.code ?? 0) === 0) {
    const ok = answer.ok_response;
    return {
      allowed: true,
      headers: mutations(ok?.headers),
      headersToRemove: ok?.headers_to_remove?.map((n) => n.toLowerCase()) ?? NONE,
      responseHeaders: mutations(ok?.response_headers_to_add),
      queryToSet:
        ok?.query_parameters_to_set?.filter((p) => p.key).map((p) => [p.key!, p.value ?? ''] as const) ?? NONE,
      queryToRemove: ok?.query_parameters_to_remove ?? NONE,
    };
  }
  const denied = answer.denied_response;
  const code = denied?.status?.code ?? 0;
  return {
    allowed: false,
    // Envoy answers 403 for a refusal that names no status, or one that is no HTTP status.
    status: code >= 200 && code <= 599 ? code : 403,
    headers: mutations(denied?.headers),
    body: denied?.body ?? '',
  };
}

/**
 * A client of the ext_authz service at `address`: one channel, reused by
 * every check; each call has `timeoutMs` as its deadline. `check` rejects
 * with a {@link RemoteAuthError} when there is no answer in time or the
 * call fails.
 */
export function createExtAuthzClient(address: string, options: ExtAuthzClientOptions = {}): ExtAuthzClient {
  const { target, tls } = extAuthzTarget(address);
  const timeoutMs = options.timeoutMs ?? 5000;
  const check = checkMethod();
  const credentials =
    options.credentials ??
    (tls || options.tls ? grpcJs().credentials.createSsl() : grpcJs().credentials.createInsecure());
  const servername = options.servername;
  const client = new (grpcJs().Client)(target, credentials, {
    ...(servername === undefined
      ? {}
      : { 'grpc.ssl_target_name_override': servername, 'grpc.default_authority': servername }),
    'grpc.enable_retries': 0,
    // As the rate-limit client: a service that comes back is asked again within a quarter second.
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 250,
  });
  client.getChannel().getConnectivityState(true);
  const serialize = check.requestSerialize as (value: object) => Buffer;
  const deserialize = check.responseDeserialize as (value: Buffer) => ProtoCheckResponse;

  return {
    target,
    check(request: ExtAuthzCheck, metadata?: CallMetadata): Promise<ExtAuthzAnswer> {
      const now = Date.now();
      const sent = new (grpcJs().Metadata)();
      if (metadata !== undefined)
        for (const name in metadata) {
          const value = metadata[name];
          if (typeof value === 'string') sent.set(name, value);
          else if (value !== undefined) for (const one of value) sent.add(name, one);
        }
      return new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          EXT_AUTHZ_METHOD,
          serialize,
          deserialize,
          checkRequest(request, now),
          sent,
          { deadline: now + timeoutMs },
          (err, value) => {
            if (err === null && value !== undefined) resolve(readCheckResponse(value));
            else if (err?.code === grpcJs().status.DEADLINE_EXCEEDED)
              reject(
                new RemoteAuthError(
                  'timeout',
                  `the auth service at ${target} did not answer within ${timeoutMs} ms`,
                  err,
                ),
              );
            else
              reject(
                new RemoteAuthError(
                  'unreachable',
                  `the auth service at ${target} failed the check (${err?.details ?? 'no answer'})`,
                  err,
                ),
              );
          },
        );
      });
    },
    close: () => client.close(),
  };
}
