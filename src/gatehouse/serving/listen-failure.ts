/**
 * @module gatehouse/serving/listen-failure
 * Why a server could not listen, in words an operator acts on: which
 * address, and what is wrong with it, rather than a system call's error
 * code. What is wrong with a TLS file is told where the files are read
 * (./tls-files).
 */
import { hostPort } from '../../http';

/** What the system's error codes mean for an address to listen on. */
const LISTEN_REASONS: Record<string, string> = {
  EADDRINUSE: 'the address is already in use (another process listens on that port)',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EPERM: 'permission denied',
  EADDRNOTAVAIL: 'no network interface of this machine has that address',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve (the resolver did not answer)',
  EAFNOSUPPORT: 'this machine does not support that address family',
};

/**
 * The error to report for a server that could not listen on `host:port`.
 * `what` names the server (`HTTP`, `gRPC`). grpc-js reports a bind failure
 * with the system's message inside its own; the code is read from either.
 */
export function listenFailure(err: unknown, what: string, host: string, port: number): Error {
  const e = err as NodeJS.ErrnoException | undefined;
  const message = e?.message ?? String(err);
  const code = typeof e?.code === 'string' ? e.code : /\b(E[A-Z_]{3,})\b/.exec(message)?.[1];
  const reason = (code && LISTEN_REASONS[code]) ?? message;
  return new Error(`cannot listen for ${what} on ${hostPort(host, port)}: ${reason}`);
}
