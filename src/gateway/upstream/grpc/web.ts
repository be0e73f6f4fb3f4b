/**
 * @module gateway/upstream/grpc/web
 * gRPC-Web calls, translated to and from gRPC as Envoy's grpc_web filter
 * does when the Module's `enable_grpc_web` is on: which request is one
 * (its `Content-Type`), which answer it asks for (base64 when its `Accept`
 * is `application/grpc-web-text`), the content type of that answer, and
 * the trailer frame (flag 0x80, a 4-byte big-endian length, `key:value\r\n`
 * lines) that carries the call's trailers in the body.
 */
import type { Context } from 'koa';
import type { IncomingHttpHeaders } from 'node:http';

/** A gRPC-Web call: whether its messages come base64-encoded, and whether its answer goes so. */
export interface GrpcWebCall {
  /** `application/grpc-web-text`: the request's body is base64. */
  readonly textRequest: boolean;
  /** `Accept: application/grpc-web-text`: the answer's body goes base64. */
  readonly textAnswer: boolean;
}

/** Where the admission keeps the call's gRPC-Web form on `ctx.state`, when the Module enables it. */
export const GRPC_WEB = Symbol('gRPC-Web call');

const BINARY = new Set(['application/grpc-web', 'application/grpc-web+proto']);
const TEXT = new Set(['application/grpc-web-text', 'application/grpc-web-text+proto']);

const BINARY_CALL: GrpcWebCall = { textRequest: false, textAnswer: false };
const TEXT_CALL: GrpcWebCall = { textRequest: true, textAnswer: false };
const BINARY_CALL_TEXT_ANSWER: GrpcWebCall = { textRequest: false, textAnswer: true };
const TEXT_CALL_TEXT_ANSWER: GrpcWebCall = { textRequest: true, textAnswer: true };

/** The gRPC-Web form of a request, from the content types Envoy's filter reads; null for any other request. */
export function grpcWebCallOf(headers: IncomingHttpHeaders): GrpcWebCall | null {
  const type = headers['content-type'];
  if (type === undefined || type.length < 20 || type.charCodeAt(16) !== 45 /* - */) return null;
  const lower = type.toLowerCase();
  const textRequest = TEXT.has(lower);
  if (!textRequest && !BINARY.has(lower)) return null;
  const accept = headers.accept?.toLowerCase();
  const textAnswer = accept !== undefined && TEXT.has(accept);
  if (textRequest) return textAnswer ? TEXT_CALL_TEXT_ANSWER : TEXT_CALL;
  return textAnswer ? BINARY_CALL_TEXT_ANSWER : BINARY_CALL;
}

/** Keeps the gRPC-Web form of the request of `ctx` on it, when it is a gRPC-Web call: where gRPC-Web is enabled. */
export function markGrpcWeb(ctx: Context): void {
  const call = grpcWebCallOf(ctx.req.headers);
  if (call !== null) (ctx.state as Record<symbol, GrpcWebCall>)[GRPC_WEB] = call;
}

/** The gRPC-Web form the admission found for `ctx`; null when it is not a gRPC-Web call, or they are not enabled. */
export function grpcWebOf(ctx: Context): GrpcWebCall | null {
  return (ctx.state as Record<symbol, GrpcWebCall | undefined>)[GRPC_WEB] ?? null;
}

/** The content type of a gRPC-Web answer, as Envoy's filter writes it. */
export function grpcWebAnswerType(call: GrpcWebCall): string {
  return call.textAnswer ? 'application/grpc-web-text+proto' : 'application/grpc-web+proto';
}

/** Flag byte of a gRPC-Web trailer frame. */
const TRAILER_FLAG = 0x80;

/** The trailer frame of `trailers` (pseudo-headers left out): `key:value\r\n` each, keys in lower case. */
export function trailerFrame(trailers: Readonly<Record<string, string | readonly string[] | undefined>>): Buffer {
  let text = '';
  for (const name in trailers) {
    const value = trailers[name];
    if (value === undefined || name.charCodeAt(0) === 58) continue;
    const key = name.toLowerCase();
    if (typeof value === 'string') text += `${key}:${value}\r\n`;
    else for (const one of value) text += `${key}:${one}\r\n`;
  }
  const lines = Buffer.from(text, 'latin1');
  const frame = Buffer.allocUnsafe(5 + lines.length);
  frame[0] = TRAILER_FLAG;
  frame.writeUInt32BE(lines.length, 1);
  lines.copy(frame, 5);
  return frame;
}
