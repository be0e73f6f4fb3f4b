/**
 * @module gateway/stages/auth-breaker
 * An AuthService's `circuit_breakers`, as Envoy's breakers bound the calls
 * to the auth service's cluster: a check past them is not made, and counts
 * as the service failing (`status_on_error`, or `failure_mode_allow`).
 * gRPC checks share connections, so `max_requests` bounds them; HTTP checks
 * take a connection each, so `max_connections` and `max_pending_requests`
 * bound them too. Without the field, no check is refused.
 */
import type { AuthServiceRecord } from '../config/schema';

/** Envoy's default thresholds. */
const ENVOY_DEFAULT = 1024;

/** The checks under way, and whether one more may start. */
export interface CheckGate {
  /** Counts a check in when one more is allowed; false when the breakers are open. */
  enter(): boolean;
  leave(): void;
}

/** The gate of `record`'s breakers (those of the default priority, which every check has); null without them. */
export function checkGate(record: AuthServiceRecord): CheckGate | null {
  const breaker = record.circuit_breakers?.find((b) => b.priority === 'default');
  if (breaker === undefined) return null;
  const requests = breaker.max_requests ?? ENVOY_DEFAULT;
  const limit =
    record.proto === 'grpc'
      ? requests
      : Math.min(
          requests,
          (breaker.max_connections ?? ENVOY_DEFAULT) + (breaker.max_pending_requests ?? ENVOY_DEFAULT),
        );
  let underWay = 0;
  return {
    enter() {
      if (underWay >= limit) return false;
      underWay++;
      return true;
    },
    leave() {
      underWay--;
    },
  };
}

/** The error a check past the breakers fails with. */
export function breakersOpen(): Error {
  return new Error('the circuit_breakers of the auth service are open: too many checks under way');
}
