/**
 * @module gateway/grpc-reply
 * The gateway's own answers to a gRPC call, as gRPC statuses: a call the
 * gateway refuses or cannot forward (no route, no credentials, denied, over
 * a limit, upstream unreachable or too slow) gets a trailers-only answer
 * whose `grpc-status` is the one Envoy gives the same answer, and whose
 * `grpc-message` is the error body's detail (or the text an auth or
 * rate-limit service wrote, as Envoy sends it). An answer the upstream gave
 * is passed on as it is. A gRPC-Web call gets the same answer with
 * gRPC-Web's content type, its status in the headers, as Envoy's grpc_web
 * filter leaves a trailers-only answer.
 */
import type { Context } from 'koa';
import { answerGrpcStatus, grpcStatusOfHttp, GrpcStatus, statusLine } from '../http';
import { grpcWebAnswerType, isProxiedGrpc, type GrpcWebCall } from './upstream/grpc';

/** How the gateway's statuses read as gRPC ones where Envoy departs from its plain mapping. */
export interface GrpcReplyOptions {
  /** The RateLimitService's `grpc.use_resource_exhausted_code`: over a limit is RESOURCE_EXHAUSTED, not UNAVAILABLE. */
  readonly resourceExhausted: boolean;
  /** The call's gRPC-Web form, when it is a gRPC-Web call and they are enabled. */
  readonly web?: GrpcWebCall | null;
}

/** The longest error body read for its message. */
const MAX_BODY = 4096;

/** What the answer's body says, in one line: the error body's detail, else its message; a text body as it is; else the status line. */
function messageOf(ctx: Context, status: number): string {
  const body: unknown = ctx.body;
  const type = ctx.response.get('Content-Type');
  if ((Buffer.isBuffer(body) || typeof body === 'string') && body.length > 0 && body.length <= MAX_BODY) {
    const text = body.toString();
    if (type.includes('json')) {
      try {
        const parsed = JSON.parse(text) as { detail?: unknown; message?: unknown };
        if (typeof parsed.detail === 'string') return parsed.detail;
        if (typeof parsed.message === 'string') return parsed.message;
      } catch {
        // Not the gateway's error body: the status line says it.
      }
    } else if (type.startsWith('text/')) {
      // What an auth or rate-limit service wrote (raw_body), as Envoy sends it in grpc-message.
      return text.trim().replace(/\s+/g, ' ');
    }
  }
  return statusLine(status);
}

/**
 * Turns the gateway's own answer to a gRPC call, if it is an error, into the
 * gRPC status Envoy would give; whether it did.
 */
export function answerAsGrpc(ctx: Context, options: GrpcReplyOptions): boolean {
  const res = ctx.res;
  if (res.headersSent || isProxiedGrpc(res)) return false;
  const status = ctx.status;
  if (status < 400) return false;
  let code = grpcStatusOfHttp(status);
  // Envoy's router answers a timeout DEADLINE_EXCEEDED, and its rate-limit filter as its service asks.
  if (status === 504) code = GrpcStatus.DEADLINE_EXCEEDED;
  else if (status === 429 && options.resourceExhausted) code = GrpcStatus.RESOURCE_EXHAUSTED;
  const web = options.web;
  answerGrpcStatus(ctx, code, messageOf(ctx, status), web == null ? undefined : grpcWebAnswerType(web));
  return true;
}

/**
 * Reads what a refused call has already sent, so that its stream ends
 * before the answer does: an answer that ends a stream whose request is
 * unread resets it (RST_STREAM NO_ERROR), and grpc-js on Node 22 and later
 * may then report INTERNAL in place of the status it was sent. Only what
 * has come is read (one turn of the event loop): a client that goes on
 * sending is reset as before.
 */
export async function readArrivedCall(req: Context['req']): Promise<void> {
  if (req.readableEnded) return;
  req.resume();
  await new Promise<void>((resolve) => {
    const done = () => {
      clearImmediate(turn);
      req.off('end', done);
      resolve();
    };
    const turn = setImmediate(done);
    req.once('end', done);
  });
}
