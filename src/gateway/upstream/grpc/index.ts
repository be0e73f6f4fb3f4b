/**
 * @module gateway/upstream/grpc
 * gRPC upstreams (a Mapping with `grpc: true`): calls proxied over HTTP/2,
 * h2c or h2 over TLS, on one connection per endpoint; gRPC-Web calls
 * translated to them.
 */
export { forwardGrpc } from './forward';
export { isProxiedGrpc } from './response-headers';
export { GRPC_WEB, grpcWebAnswerType, grpcWebCallOf, grpcWebOf, markGrpcWeb, type GrpcWebCall } from './web';
