/**
 * @module gateway/upstream/grpc/response-headers
 * The headers of an upstream's gRPC answer, put on the response: its
 * status and its fields, but for pseudo-headers and those of one
 * connection; gRPC-Web's content type for a gRPC-Web call; and the mark
 * that keeps the gateway from rendering a status of its own over an answer
 * the upstream gave.
 */
import type { Context } from 'koa';
import type { ServerResponse } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http2';
import { isHopByHop } from '../../../http';
import { grpcWebAnswerType, type GrpcWebCall } from './web';

/** Marks a response that carries an upstream's gRPC answer: the gateway renders no status of its own over it. */
export const PROXIED_GRPC = Symbol('proxied gRPC answer');

/** Whether `res` carries an upstream's gRPC answer. */
export function isProxiedGrpc(res: ServerResponse): boolean {
  return (res as ServerResponse & { [PROXIED_GRPC]?: boolean })[PROXIED_GRPC] === true;
}

/** Puts the upstream's answer `status` and `headers` on the response of `ctx`. */
export function answerHeadersCame(
  ctx: Context,
  status: number,
  headers: IncomingHttpHeaders,
  web: GrpcWebCall | null,
): void {
  const res = ctx.res as ServerResponse & { [PROXIED_GRPC]?: boolean };
  res[PROXIED_GRPC] = true;
  ctx.status = status;
  for (const name in headers) {
    if (name.charCodeAt(0) === 58 || isHopByHop(name)) continue;
    const value = headers[name];
    if (value !== undefined) res.setHeader(name, value);
  }
  if (web !== null) {
    res.setHeader('content-type', grpcWebAnswerType(web));
    res.removeHeader('content-length');
  }
}
