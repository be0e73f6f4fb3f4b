/**
 * @module cli/grpc-log
 * grpc-js writes its own log lines to stderr (`E No address added out of
 * total 1 resolved` before a port in use is reported). The command owns the
 * process, so those lines go to the process log instead: stderr keeps the one
 * message a command that cannot run ends with, and LOG_LEVEL applies to them.
 */
import { onGrpcJsLoaded } from '../platform';
import type { Logger } from '../telemetry';

/** Sends grpc-js's log lines to `logger`, tagged `module: grpc`, for the rest of the process, from when grpc-js is loaded. */
export function logGrpcThrough(logger: Logger): void {
  const log = logger.child({ module: 'grpc' });
  onGrpcJsLoaded((grpc) =>
    grpc.setLogger({
      error: (message: unknown, ...rest: unknown[]) => log.warn([message, ...rest].join(' ')),
      info: (message: unknown, ...rest: unknown[]) => log.info([message, ...rest].join(' ')),
      debug: (message: unknown, ...rest: unknown[]) => log.debug([message, ...rest].join(' ')),
    }),
  );
}
