/**
 * @module ports/listen-at
 * Where a server listens and how, in one place: every listening socket of
 * the process (the HTTP port, the gRPC port, a port bound ahead) is opened
 * from a {@link ListenAt} through {@link listenOptions}, so that a way of
 * listening (several sockets on one port) is added once for all of them.
 */
import type net from 'node:net';

/** An address to listen on. */
export interface ListenAt {
  /** An IP address or host name; empty for every interface. */
  readonly host: string;
  /** The port; 0 for one the system chooses. */
  readonly port: number;
  /**
   * Listen beside other sockets of this machine on the same port, the
   * kernel sharing the connections out among them (`SO_REUSEPORT`), as
   * each worker of a gateway does. Node 22.12 and later (23.1 on the 23
   * line), on Linux and the BSDs.
   */
  readonly reusePort?: boolean;
}

/** Whether Node `version` (`22.12.0`) listens with `reusePort`. */
export function supportsReusePort(version: string = process.versions.node): boolean {
  const [major, minor] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/** The options of `server.listen()` for `at`; throws when it asks for what this Node cannot do. */
export function listenOptions(at: ListenAt): net.ListenOptions {
  const options: net.ListenOptions & { reusePort?: boolean } = { host: at.host || undefined, port: at.port };
  if (at.reusePort) {
    if (!supportsReusePort()) {
      throw new Error(`listening with reusePort needs Node 22.12 or later; this is Node ${process.versions.node}`);
    }
    options.reusePort = true;
  }
  return options;
}
