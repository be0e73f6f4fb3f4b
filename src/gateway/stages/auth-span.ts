/**
 * @module gateway/stages/auth-span
 * The auth check of a traced request as a span of its trace: a call to the
 * remote auth service (which is sent it as its parent), or the in-process
 * service's work, a credential found in its cache or checked with bcrypt.
 * It says how the check ended; never what the credentials were.
 */
import type { AuthOutcome } from '../events';
import type { ChildSpan, RequestTrace } from '../../tracing';

/** Opens the span of one check; `service` is the auth service's address as shown (no credentials), or undefined in process. */
export function openAuthSpan(trace: RequestTrace, service: string | undefined): ChildSpan {
  const span = trace.child('auth', service === undefined ? 'internal' : 'client');
  if (span.recording && service !== undefined) span.set('server.address', service);
  return span;
}

/**
 * Ends a check's span: how it ended, the status the service answered, and
 * for a service in process whether the decision was known at once (a
 * credential verified a moment ago, a malformed header) or waited for bcrypt.
 */
export function closeAuthSpan(
  span: ChildSpan | null,
  outcome: AuthOutcome,
  status: number | undefined,
  immediate?: boolean,
): void {
  if (span === null) return;
  span.set('gatehouse.auth.outcome', outcome);
  if (status !== undefined) span.set('http.response.status_code', status);
  if (immediate !== undefined) span.set('gatehouse.auth.cached', immediate);
  if (outcome === 'error') span.fail(status === undefined ? 'unavailable' : String(status));
  span.end();
}
