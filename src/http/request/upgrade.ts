/**
 * @module http/request/upgrade
 * A request that asks to switch its connection to another protocol (RFC 9110
 * §7.8), as the server hands it to the app: Node gives such a request no
 * response and takes its connection off HTTP, so the server answers it
 * through a response of its own on that connection, and marks the request
 * with the connection, for whatever may agree to the switch.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** The connection of a request that asks for an upgrade, as the server handed it over. */
export interface UpgradeHandover {
  /** The client's connection, no longer read as HTTP. */
  readonly socket: Duplex;
  /** What the client sent after the request head: the first bytes of the new protocol. */
  readonly head: Buffer;
}

const HANDOVER = Symbol('upgrade handover');

type Marked = IncomingMessage & { [HANDOVER]?: UpgradeHandover };

/** Marks `req` as a request whose connection may switch protocols. */
export function handOverUpgrade(req: IncomingMessage, handover: UpgradeHandover): void {
  (req as Marked)[HANDOVER] = handover;
}

/**
 * The connection of `req` when the server handed it over for an upgrade;
 * undefined for any other request, one that only names `Upgrade` among them
 * (served as plain HTTP: RFC 9110 §7.8 lets a server ignore it).
 */
export function upgradeHandover(req: IncomingMessage): UpgradeHandover | undefined {
  return (req as Marked)[HANDOVER];
}

/** The protocol a request asks to upgrade to, in lower case, as Mappings name it; '' for none. */
export function upgradeProtocol(req: IncomingMessage): string {
  const upgrade = req.headers.upgrade;
  return upgrade === undefined ? '' : upgrade.trim().toLowerCase();
}
