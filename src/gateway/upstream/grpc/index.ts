/**
 * @module gateway/upstream/grpc
 * gRPC upstreams (a Mapping with `grpc: true`): calls proxied over HTTP/2,
 * h2c or h2 over TLS, on one connection per endpoint.
 */
export { forwardGrpc } from './forward';
export { PROXIED_GRPC } from './call';
