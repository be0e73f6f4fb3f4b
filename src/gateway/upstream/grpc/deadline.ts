/**
 * @module gateway/upstream/grpc/deadline
 * The deadline a gRPC client sends in `grpc-timeout` (gRPC over HTTP/2:
 * up to 8 digits and a unit, `H` `M` `S` `m` `u` `n`), read in
 * milliseconds.
 */

const TIMEOUT = /^([0-9]{1,8})([HMSmun])$/;
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/**
 * The milliseconds of a `grpc-timeout` value, at least 1 (a deadline under
 * a millisecond has all but passed); undefined when there is none or it is
 * malformed, which gRPC servers ignore too.
 */
export function grpcTimeoutMs(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TIMEOUT.exec(value);
  if (match === null) return undefined;
  return Math.max(1, Math.ceil(Number(match[1]) * UNIT_MS[match[2]]));
}
