/**
 * @module gateway/request/framing
 * The admission steps that refuse a request whose framing the gateway cannot
 * vouch for (../../admit runs them in their place): one pipelined behind an
 * upgrade, more header lines than were parsed, a transfer coding it cannot
 * pass on. After each, nothing more is read on that connection.
 */
import type { Context } from 'koa';
import { headerCountRefusal, transferCodingRefusal } from '../../http';

/**
 * Upgrades are served as plain HTTP (RFC 9110 §7.8) unless a route tunnels
 * them. Node's parser drops whatever the client sent right behind such a
 * request, so a request pipelined after it would wait for ever: the answer
 * closes the connection instead.
 */
export function refusePipelinedAfterUpgrade(ctx: Context): void {
  if (ctx.req.headers.upgrade !== undefined) ctx.res.shouldKeepAlive = false;
}

/** The fields past the parser's count framed the body unseen: 431, and nothing after it on the connection is read. */
export function refuseHeaderOverflow(ctx: Context): void {
  const tooMany = headerCountRefusal(ctx.req.rawHeaders);
  if (tooMany === undefined) return;
  ctx.res.shouldKeepAlive = false;
  throw tooMany;
}

/**
 * A body whose framing or coding the gateway cannot vouch for reaches no
 * module or upstream (400, 501), and nothing after it on that connection is read.
 */
export function refuseUnvouchedBody(ctx: Context): void {
  const req = ctx.req;
  if (req.headers['transfer-encoding'] === undefined) return;
  const refusal = transferCodingRefusal(req);
  if (refusal === undefined) return;
  ctx.res.shouldKeepAlive = false;
  throw refusal;
}
