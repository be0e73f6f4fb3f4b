/**
 * @module gatehouse/options/declarations-grpc
 * The options of the gRPC rate-limit service's port, declared as every
 * option is (./declaration), and taken into the one list of options
 * (./declarations): how large a message, how many connections, how long a
 * request, how many entries a descriptor.
 */
import { option, type ServeOnly } from './declaration';
import { integer, milliseconds } from './kinds';

/** `serve` takes these options only for the module that serves gRPC. */
const GRPC: ServeOnly = { modules: ['ratelimit'], others: 'serves HTTP' };

export const GRPC_SERVICE_OPTIONS = {
  grpcMaxMessageBytes: option({
    kind: integer(1, undefined, 'bytes'),
    flag: '--grpc-max-message-bytes',
    env: 'GRPC_MAX_MESSAGE_BYTES',
    default: 64 * 1024,
    help: 'the largest rate-limit request (any gRPC message) read',
    commands: ['start', 'serve'],
    serveOnly: GRPC,
  }),
  grpcMaxConnections: option({
    kind: integer(1),
    flag: '--grpc-max-connections',
    env: 'GRPC_MAX_CONNECTIONS',
    default: 4096,
    help: 'the most connections open at once on the gRPC port; one more is closed as it comes',
    more: '([rate-limits.md](rate-limits.md#the-grpc-service))',
    commands: ['start', 'serve'],
    serveOnly: GRPC,
  }),
  grpcRequestTimeoutMs: option({
    kind: milliseconds(1),
    flag: '--grpc-request-timeout-ms',
    env: 'GRPC_REQUEST_TIMEOUT_MS',
    default: 10_000,
    help: "how long a rate-limit call's request may take to arrive whole, else DEADLINE_EXCEEDED, nothing counted",
    commands: ['start', 'serve'],
    serveOnly: GRPC,
  }),
  maxDescriptorEntries: option({
    kind: integer(1),
    flag: '--max-descriptor-entries',
    env: 'MAX_DESCRIPTOR_ENTRIES',
    default: 64,
    help: 'the most entries one rate-limit descriptor may carry',
    commands: ['start', 'serve'],
    serveOnly: GRPC,
  }),
};
