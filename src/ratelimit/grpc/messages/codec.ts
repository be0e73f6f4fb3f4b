/**
 * @module ratelimit/grpc/messages/codec
 * Translation between the protos' messages (snake_case, as proto-loader gives
 * them) and the service's typed camelCase face: requests sent and answers
 * read by the client; answers the server's encoder leaves to proto-loader.
 * The server reads requests itself (./request-decoder).
 */
import type { CurrentLimit, DescriptorEntry, DescriptorStatus, RateLimitRequest, RateLimitResponse } from '../../types';
import { fromProtoStruct, toProtoStruct, type ProtoStruct } from './struct';
import { isRateLimitUnit } from '../../limits/units';

/** A `google.protobuf.Duration` as proto-loader gives it (longs as numbers). */
export interface ProtoDuration {
  seconds: number;
  nanos: number;
}

export interface ProtoDescriptor {
  entries: DescriptorEntry[];
  limit?: { requests_per_unit: number; unit: string } | null;
  hits_addend?: { value: number } | null;
}

export interface ProtoRequest {
  domain: string;
  descriptors: ProtoDescriptor[];
  hits_addend: number;
}

export interface ProtoRateLimit {
  name?: string;
  requests_per_unit: number;
  unit: string;
}

export interface ProtoStatus {
  code: string;
  current_limit: ProtoRateLimit | null;
  limit_remaining: number;
  duration_until_reset?: ProtoDuration | null;
}

export interface ProtoResponse {
  overall_code: string;
  statuses: ProtoStatus[];
  /** envoy v3 */
  response_headers_to_add?: { key: string; value: string }[];
  /** pb.lyft.ratelimit */
  headers?: { key: string; value: string }[];
  /** envoy v3 */
  dynamic_metadata?: ProtoStruct | null;
  /** envoy v3 */
  request_headers_to_add?: { key: string; value: string }[];
  /** envoy v3 */
  raw_body?: Buffer | Uint8Array;
}

/** The whole seconds of a duration of `ms` milliseconds (fractions of a millisecond dropped). */
export function durationSeconds(ms: number): number {
  return Math.floor(Math.floor(ms) / 1000);
}

/** The nanoseconds past {@link durationSeconds} of a duration of `ms` milliseconds. */
export function durationNanos(ms: number): number {
  return (Math.floor(ms) % 1000) * 1_000_000;
}

export function durationFromMs(ms: number): ProtoDuration {
  return { seconds: durationSeconds(ms), nanos: durationNanos(ms) };
}

export function msFromDuration(d: ProtoDuration): number {
  return Number(d.seconds) * 1000 + Math.floor(Number(d.nanos) / 1_000_000);
}

/** A request to send, from the typed face. */
export function requestToProto(request: RateLimitRequest): ProtoRequest {
  return {
    domain: request.domain,
    hits_addend: request.hitsAddend ?? 0,
    descriptors: request.descriptors.map((d) => ({
      entries: d.entries,
      limit: d.limit ? { requests_per_unit: d.limit.requestsPerUnit, unit: d.limit.unit } : null,
      hits_addend: d.hitsAddend === undefined ? null : { value: d.hitsAddend },
    })),
  };
}

function limitToProto(limit: CurrentLimit): ProtoRateLimit {
  return limit.name === undefined
    ? { requests_per_unit: limit.requestsPerUnit, unit: limit.unit }
    : { name: limit.name, requests_per_unit: limit.requestsPerUnit, unit: limit.unit };
}

/** An answer to send; carries the fields of both services (each keeps its own). */
export function responseToProto(response: RateLimitResponse): ProtoResponse {
  const statuses = new Array<ProtoStatus>(response.statuses.length);
  for (let i = 0; i < statuses.length; i++) {
    const s = response.statuses[i];
    statuses[i] = {
      code: s.code,
      current_limit: s.currentLimit ? limitToProto(s.currentLimit) : null,
      limit_remaining: s.limitRemaining,
      duration_until_reset: s.durationUntilResetMs === undefined ? null : durationFromMs(s.durationUntilResetMs),
    };
  }
  const headers = response.responseHeadersToAdd ?? [];
  const out: ProtoResponse = {
    overall_code: response.overallCode,
    statuses,
    response_headers_to_add: headers,
    headers,
  };
  if (response.dynamicMetadata) out.dynamic_metadata = toProtoStruct(response.dynamicMetadata);
  return out;
}

/** A received answer, for the typed face. An UNKNOWN code reads as OK, as Envoy reads it. */
export function responseFromProto(msg: ProtoResponse): RateLimitResponse {
  const statuses: DescriptorStatus[] = (msg.statuses ?? []).map((s) => {
    const status: DescriptorStatus = {
      code: s.code === 'OVER_LIMIT' ? 'OVER_LIMIT' : 'OK',
      limitRemaining: s.limit_remaining,
    };
    const limit = s.current_limit;
    if (limit && isRateLimitUnit(limit.unit)) {
      status.currentLimit = limit.name
        ? { name: limit.name, requestsPerUnit: limit.requests_per_unit, unit: limit.unit }
        : { requestsPerUnit: limit.requests_per_unit, unit: limit.unit };
    }
    if (s.duration_until_reset) status.durationUntilResetMs = msFromDuration(s.duration_until_reset);
    return status;
  });
  const response: RateLimitResponse = {
    overallCode: msg.overall_code === 'OVER_LIMIT' ? 'OVER_LIMIT' : 'OK',
    statuses,
  };
  const headers = msg.response_headers_to_add ?? msg.headers;
  if (headers?.length) response.responseHeadersToAdd = headers.map((h) => ({ key: h.key, value: h.value }));
  if (msg.dynamic_metadata) response.dynamicMetadata = fromProtoStruct(msg.dynamic_metadata);
  const added = msg.request_headers_to_add;
  if (added?.length) response.requestHeadersToAdd = added.map((h) => ({ key: h.key, value: h.value }));
  if (msg.raw_body && msg.raw_body.length > 0) response.rawBody = Buffer.from(msg.raw_body);
  return response;
}
