/**
 * @module http/response/grpc-status
 * gRPC's statuses as an HTTP answer carries them: which request is a gRPC
 * call, the status Envoy gives an HTTP status of its own answers
 * (`Grpc::Utility::httpToGrpcStatus`), and the trailers-only answer that
 * carries one (HTTP 200, `content-type: application/grpc`, `grpc-status`,
 * `grpc-message`, no body), as gRPC over HTTP/2 defines it.
 */
import type { Context } from 'koa';
import type { IncomingHttpHeaders } from 'node:http';

/** gRPC's status codes that the gateway answers with itself. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/**
 * Whether a request is a gRPC call: `application/grpc`, or
 * `application/grpc+<codec>`, as Envoy reads it. gRPC-Web's types are not:
 * they are gRPC calls only where gRPC-Web is enabled.
 */
export function isGrpcRequest(headers: IncomingHttpHeaders): boolean {
  const type = headers['content-type'];
  if (type === undefined || type.length < 16 || type.slice(0, 16).toLowerCase() !== 'application/grpc') return false;
  return type.length === 16 || type.charCodeAt(16) === 43; /* + */
}

/** The gRPC status of an HTTP status, as Envoy maps the statuses of its own answers. */
export function grpcStatusOfHttp(status: number): number {
  switch (status) {
    case 400:
      return GrpcStatus.INTERNAL;
    case 401:
      return GrpcStatus.UNAUTHENTICATED;
    case 403:
      return GrpcStatus.PERMISSION_DENIED;
    case 404:
      return GrpcStatus.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcStatus.UNAVAILABLE;
    default:
      return GrpcStatus.UNKNOWN;
  }
}

/** `grpc-message` as gRPC writes it: UTF-8, every byte outside printable ASCII, and `%`, percent-encoded. */
export function encodeGrpcMessage(message: string): string {
  if (!/[^\x20-\x24\x26-\x7e]/.test(message)) return message;
  let out = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const EMPTY = Buffer.alloc(0);

/**
 * Answers `ctx` with a trailers-only gRPC answer: HTTP 200 whose headers end
 * the stream and carry the status. The headers of the body it replaces go;
 * the others (rate-limit headers, CORS, `WWW-Authenticate`) stay.
 * `contentType` is gRPC-Web's for a gRPC-Web call, which reads the status
 * in these headers too.
 */
export function answerGrpcStatus(ctx: Context, code: number, message: string, contentType = 'application/grpc'): void {
  const res = ctx.res;
  if (res.headersSent) return;
  for (const name of res.getHeaderNames()) if (name.startsWith('content-') || name === 'vary') res.removeHeader(name);
  ctx.status = 200;
  ctx.body = EMPTY;
  res.removeHeader('content-length');
  res.setHeader('content-type', contentType);
  res.setHeader('grpc-status', String(code));
  if (message !== '') res.setHeader('grpc-message', encodeGrpcMessage(message));
}
