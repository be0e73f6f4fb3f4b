/**
 * @module gatehouse/additional-ports
 * The cleartext ports a Host asks for beside `PORT`
 * (`requestPolicy.insecure.additionalPort`, as Emissary opens them): each
 * is served as the cleartext port is, by the same server builder and the
 * same handler, so that a request there gets its Host's insecure action
 * (Redirect, Route or Reject) and every refusal, bound and drain of the
 * cleartext port. A port equal to the one `PORT` listens on is that
 * listener; -1 and no value open nothing.
 *
 * A reload opens the ports it brings before it closes those it drops: a
 * port that cannot be had is logged, and the ports open stay as they were
 * (the last good listener keeps serving) until a later reload or file
 * change tries again. At start, a port that cannot be had fails the start,
 * as any port does.
 */
import type http from 'node:http';
import { errorText } from '../files';
import type { HostRecord } from '../gateway/config/tls';
import { hostPort } from '../http';
import type { Logger } from '../telemetry';
import { listen, type ListenOptions, type RunningServer } from './serving/http-server';

export interface AdditionalPortsOptions {
  readonly host: string;
  readonly handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
  /** The Hosts of the configuration served now. */
  readonly hosts: () => readonly HostRecord[] | undefined;
  /** The port `PORT` listens on, once it does: a Host that names it opens nothing more. */
  readonly mainPort: () => number | undefined;
  /** Whether requests may switch protocols (WebSocket), as on the cleartext port. */
  readonly upgrades: () => boolean;
  readonly logger: Logger;
  /** The cleartext port's own settings, given to each port alike. */
  readonly listen: Pick<ListenOptions, 'keepAliveTimeoutMs' | 'onRejected' | 'http2' | 'http2Limits'>;
}

/** The cleartext ports Hosts ask for, opened and closed as the configuration says. */
export interface AdditionalPorts {
  /** Opens them at start: as apply(), but a port that cannot be had rejects, and what was opened is closed. */
  start(): Promise<void>;
  /** Opens and closes them as the configuration served now says, once started; never rejects (it logs). */
  apply(): Promise<void>;
  /** Resolves once every open and close asked for so far is done. */
  idle(): Promise<void>;
  /** The ports open now, in ascending order. */
  readonly ports: readonly number[];
  /** The servers open now, for a drain and a stop. */
  readonly servers: readonly RunningServer[];
  /** Closes every one, letting the requests under way finish within `graceMs`; nothing opens until the next start(). */
  close(graceMs?: number): Promise<void>;
}

/** Each port the Hosts ask for, other than `mainPort`, with the names of the Hosts that ask for it. */
export function wantedPorts(
  hosts: readonly HostRecord[] | undefined,
  mainPort: number | undefined,
): Map<number, string[]> {
  const wanted = new Map<number, string[]>();
  for (const host of hosts ?? []) {
    const port = host.requestPolicy.insecure.additionalPort;
    if (port === undefined || port === -1 || port === mainPort) continue;
    const names = wanted.get(port);
    if (names === undefined) wanted.set(port, [host.name]);
    else names.push(host.name);
  }
  return wanted;
}

export function createAdditionalPorts(options: AdditionalPortsOptions): AdditionalPorts {
  const { logger } = options;
  const open = new Map<number, RunningServer>();
  let upgrades = false;
  let started = false;
  let queue: Promise<void> = Promise.resolve();
  /** Ports a reload dropped, finishing their requests: a stop waits for them, the next reload does not. */
  const closing = new Set<Promise<void>>();

  async function openPort(port: number, hosts: readonly string[]): Promise<void> {
    const server = await listen(options.handler, { ...options.listen, host: options.host, port });
    server.acceptUpgrades(upgrades);
    open.set(port, server);
    logger.info({ url: `http://${hostPort(options.host, port)}`, hosts }, 'additional cleartext port open');
  }

  async function change(strict: boolean): Promise<void> {
    if (!started) return;
    upgrades = options.upgrades();
    const wanted = wantedPorts(options.hosts(), options.mainPort());
    let failed = false;
    const opened: number[] = [];
    for (const [port, hosts] of wanted) {
      if (open.has(port)) continue;
      try {
        await openPort(port, hosts);
        opened.push(port);
      } catch (err) {
        if (strict) {
          await Promise.all(opened.map((p) => open.get(p)!.close(0)));
          for (const p of opened) open.delete(p);
          throw new Error(`Host ${hosts.join(', ')}: requestPolicy.insecure.additionalPort: ${errorText(err)}`);
        }
        failed = true;
        logger.error(
          { port, hosts, err: errorText(err), kept: [...open.keys()].sort((a, b) => a - b) },
          'an additional cleartext port cannot be opened: the cleartext ports stay as they were until the next reload',
        );
      }
    }
    for (const server of open.values()) server.acceptUpgrades(upgrades);
    // The last good ports keep serving while a port the configuration asks for cannot be had.
    if (failed) return;
    const dropped = [...open].filter(([port]) => !wanted.has(port));
    for (const [port, server] of dropped) {
      open.delete(port);
      // It stops accepting at once; the requests under way on it finish meanwhile.
      const closed: Promise<void> = server.close().finally(() => closing.delete(closed));
      closing.add(closed);
      logger.info({ port }, 'additional cleartext port closed: no Host asks for it');
    }
  }

  const queued = (strict: boolean): Promise<void> => {
    const run = queue.then(() => change(strict));
    queue = run.catch(() => undefined);
    return run;
  };

  return {
    start() {
      started = true;
      return queued(true);
    },
    apply: () => queued(false),
    idle: () => queue,
    get ports() {
      return [...open.keys()].sort((a, b) => a - b);
    },
    get servers() {
      return [...open.values()];
    },
    async close(graceMs) {
      started = false;
      await queue;
      const servers = [...open.values()];
      open.clear();
      await Promise.all([...servers.map((server) => server.close(graceMs)), ...closing]);
    },
  };
}
