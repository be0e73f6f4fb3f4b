/**
 * @module gateway/stages/grpc-tls
 * A gRPC service (an AuthService with `proto: grpc`, a RateLimitService)
 * called as the TLSContext its `tls` names says: the context's authorities
 * (the system's without `ca_secret`), client certificate, protocol versions
 * and ciphers as grpc-js channel credentials, and its `sni` as the name
 * sent and checked in the service's certificate.
 */
import { createSecureContext } from 'node:tls';
import type * as grpc from '@grpc/grpc-js';
import { grpcJs } from '../../platform';
import { connectOptions, type UpstreamTls } from '../../tls';

/** How a channel to the service is secured. */
export interface GrpcChannelTls {
  readonly credentials: grpc.ChannelCredentials;
  /** The name sent as SNI and checked in the service's certificate, instead of its host's. */
  readonly servername?: string;
}

/** The channel's TLS as `upstream` asks for it; undefined without one. */
export function grpcChannelTls(upstream: UpstreamTls | undefined): GrpcChannelTls | undefined {
  if (upstream === undefined) return undefined;
  // A secure context carries what createSsl cannot: the versions, ciphers and curves of the context.
  const credentials = grpcJs().credentials.createFromSecureContext(createSecureContext(connectOptions(upstream)));
  return upstream.servername === undefined ? { credentials } : { credentials, servername: upstream.servername };
}
