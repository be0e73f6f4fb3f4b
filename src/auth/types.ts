/**
 * @module auth/types
 * The typed, in-process face of an auth service, which the gateway calls
 * directly for the built-in service and over HTTP for a remote one.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthErrorCode } from '../errors';

/** What the gateway asks: the original request, with its body only when the record says so. */
export interface AuthRequest {
  method: string;
  /** Path and query string, as the auth service is to see them. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The request body, or its first `include_body.max_bytes`; absent when none is sent. */
  body?: Buffer;
  /**
   * The connection the request came on (its socket), for a service in the
   * same process to remember what it worked out for the requests before it
   * on that connection. Never sent anywhere.
   */
  connection?: object;
}

/** The auth service's answer: 200 lets the request through. */
export interface AuthDecision {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string | string[]>;
  body?: string | Buffer;
  /**
   * Why a refusal refuses, as the `detail` of its error body: an in-process
   * caller can then write the body in the representation the client asked
   * for. The body stays as it is for callers over HTTP.
   */
  detail?: string;
  /**
   * The registry's code of a refusal that is one of its errors, for an
   * in-process caller to raise it by name (and log it so).
   */
  error?: AuthErrorCode;
  /**
   * Who a 200 lets through, as a string: the `X-Travel-User` header carries
   * the name's UTF-8 bytes, which an HTTP face must not encode again.
   */
  user?: string;
}

/** Anything that can decide on a request. */
export interface Authenticator {
  authenticate(request: AuthRequest): Promise<AuthDecision>;
  /**
   * The decision when it is known without waiting (a malformed header, a
   * credential verified a moment ago), else undefined: then ask
   * `authenticate`. Optional: an in-process caller uses it to skip the
   * promise of every request.
   */
  authenticateNow?(request: AuthRequest): AuthDecision | undefined;
  /**
   * The only request headers (lower-case) it ever reads, when it says so: the
   * gateway then asks in-process with those alone, and builds no
   * `X-Forwarded-*` for it. Absent: it gets every header the stage may send.
   */
  readonly requestHeaders?: readonly string[];
}
