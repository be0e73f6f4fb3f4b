/**
 * @module ratelimit/grpc/health
 * The standard gRPC health service (`grpc.health.v1.Health`: Check, Watch,
 * List) over a table of service statuses that the server updates.
 */
import type * as grpc from '@grpc/grpc-js';
import { grpcJs } from '../../platform';
import { HEALTH_SERVICE, rateLimitProtos } from './protos';

export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

interface CheckRequest {
  service: string;
}
interface CheckResponse {
  status: ServingStatus;
}

export interface HealthRegistry {
  /** Sets a service's status ("" is the server as a whole) and tells its watchers. */
  setStatus(service: string, status: ServingStatus): void;
  /** Current status, or undefined for an unknown service. */
  getStatus(service: string): ServingStatus | undefined;
  /** Services with a Watch stream open: a closed stream leaves nothing behind, whatever name it watched. */
  readonly watchedServices: number;
  /** Everything NOT_SERVING, every Watch stream told so and kept open: a shutdown is coming. */
  drain(): void;
  /** Everything NOT_SERVING, then every Watch stream ended: lets a graceful shutdown finish. */
  shutdown(): void;
  addToServer(server: grpc.Server): void;
}

/** The longest service name an answer repeats: a name of 60 KB would come back whole in grpc-message. */
const MAX_ECHOED_NAME = 100;

/** `name`, cut to {@link MAX_ECHOED_NAME} characters with an ellipsis. */
function shortened(name: string): string {
  return name.length <= MAX_ECHOED_NAME ? name : `${name.slice(0, MAX_ECHOED_NAME)}…`;
}

/** A health registry; every named service starts SERVING. */
export function createHealthRegistry(services: readonly string[]): HealthRegistry {
  const statuses = new Map<string, ServingStatus>(services.map((s) => [s, 'SERVING']));
  const watchers = new Map<string, Set<grpc.ServerWritableStream<CheckRequest, CheckResponse>>>();

  function setStatus(service: string, status: ServingStatus): void {
    statuses.set(service, status);
    for (const call of watchers.get(service) ?? []) call.write({ status });
  }

  function drain(): void {
    for (const service of statuses.keys()) setStatus(service, 'NOT_SERVING');
  }

  const implementation: grpc.UntypedServiceImplementation = {
    Check(call: grpc.ServerUnaryCall<CheckRequest, CheckResponse>, callback: grpc.sendUnaryData<CheckResponse>) {
      const status = statuses.get(call.request.service ?? '');
      if (status === undefined)
        callback({
          code: grpcJs().status.NOT_FOUND,
          details: `unknown service '${shortened(call.request.service ?? '')}'`,
        });
      else callback(null, { status });
    },
    Watch(call: grpc.ServerWritableStream<CheckRequest, CheckResponse>) {
      const service = call.request.service ?? '';
      let set = watchers.get(service);
      if (!set) watchers.set(service, (set = new Set()));
      set.add(call);
      // A client may watch any name: an empty set left in the map would keep each one for good.
      const forget = () => {
        if (set.delete(call) && set.size === 0 && watchers.get(service) === set) watchers.delete(service);
      };
      call.on('cancelled', forget);
      call.on('close', forget);
      call.write({ status: statuses.get(service) ?? 'SERVICE_UNKNOWN' });
    },
    List(_call: grpc.ServerUnaryCall<object, object>, callback: grpc.sendUnaryData<object>) {
      const out: Record<string, CheckResponse> = {};
      for (const [name, status] of statuses) out[name] = { status };
      callback(null, { statuses: out });
    },
  };

  return {
    setStatus,
    getStatus: (service) => statuses.get(service),
    get watchedServices() {
      return watchers.size;
    },
    drain,
    shutdown() {
      drain();
      for (const set of watchers.values()) for (const call of set) call.end();
      watchers.clear();
    },
    addToServer(server) {
      server.addService(rateLimitProtos()[HEALTH_SERVICE] as grpc.ServiceDefinition, implementation);
    },
  };
}
