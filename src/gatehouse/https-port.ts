/**
 * @module gatehouse/https-port
 * The HTTPS port beside the cleartext one (`httpsPort`, 8443 by default,
 * Emissary's): opened as soon as the configuration served has a
 * certificate (a Host with one, or a TLSContext with `hosts`), each new
 * connection given the certificate of the name it asks for; switched to a
 * new configuration's certificates as it is applied, connections already
 * open keeping theirs; closed, gracefully, once no certificate is left.
 * `--tls-cert`'s certificate is the one served for a name no certificate
 * covers, when no Host serves every name.
 */
import type http from 'node:http';
import type { Server } from 'node:tls';
import { errorText } from '../files';
import { watchCertificateFiles } from './certificate-files';
import type { FolderWatcher } from './folder/watch';
import type { GatewayTls } from '../gateway';
import { hostPort } from '../http';
import type { CertificateExpiry, Logger, Metrics } from '../telemetry';
import {
  certificateChooser,
  HTTP1_PROTOCOLS,
  describeCertificate,
  readCertificates,
  servedContext,
  type ServedContext,
  type ServingCertificates,
} from '../tls';
import { listen, type ListenOptions, type RunningServer } from './serving/http-server';
import { readTlsFiles, type TlsFiles } from './serving/tls-files';

export interface HttpsPortOptions {
  readonly host: string;
  /** The port; false opens none. */
  readonly port: number | false;
  readonly handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
  /** What the configuration served now gives. */
  readonly tls: () => GatewayTls | undefined;
  /** `--tls-cert` and `--tls-key`, served for a name no certificate covers. */
  readonly fallback?: TlsFiles;
  readonly fileSizeLimit: number;
  readonly logger: Logger;
  /** Whether requests may switch protocols (WebSocket), as on the cleartext port. */
  readonly upgrades: () => boolean;
  readonly listen: Pick<ListenOptions, 'keepAliveTimeoutMs' | 'onRejected' | 'http2' | 'http2Limits'>;
  /** Where the expiry of every certificate in service is told. */
  readonly metrics: Pick<Metrics, 'recordCertificates'>;
}

/** The HTTPS port of a Gatehouse. */
export interface HttpsPort {
  /**
   * Opens, switches or closes the port as the configuration served now
   * says, once started; never rejects for a port in use (it logs). Tells
   * the metrics of the certificates in service.
   */
  apply(): Promise<void>;
  /** Calls `onChange` when a certificate file of the configuration served now changes. */
  watchFiles(onChange: () => void): FolderWatcher;
  /** Reads `--tls-cert`'s files again (they changed), and serves them from now on. */
  reloadFallback(): void;
  /** The port it listens on, while it does. */
  readonly port: number | undefined;
  readonly server: RunningServer | undefined;
  /** Opens it at start: as apply(), but a port that cannot be had rejects. */
  start(): Promise<void>;
}

/** `--tls-cert`'s pair as a certificate served for no name of its own. */
function fallbackContext(files: TlsFiles, fileSizeLimit: number): ServedContext {
  const { cert, key } = readTlsFiles(files, fileSizeLimit);
  const chain = readCertificates(cert).map(describeCertificate);
  return servedContext({
    origin: '--tls-cert',
    names: [],
    pair: { cert, key, chain },
    settings: { clientCertificates: 'none' },
  });
}

export function createHttpsPort(options: HttpsPortOptions): HttpsPort {
  // ALPN offers h2 first where HTTP/2 is served, as on the other ports.
  const chooser = certificateChooser(options.listen.http2 === false ? HTTP1_PROTOCOLS : ['h2', ...HTTP1_PROTOCOLS]);
  const { logger } = options;
  let server: RunningServer | undefined;
  let fallback = options.fallback && fallbackContext(options.fallback, options.fileSizeLimit);
  let queue: Promise<void> = Promise.resolve();
  let started = false;

  /** Every certificate in service, `--tls-cert`'s included. */
  function inService(): CertificateExpiry[] {
    const leaf = fallback?.entry.pair.chain[0];
    return [
      ...(leaf !== undefined && options.fallback !== undefined
        ? [
            {
              source: options.fallback.cert,
              role: 'serves',
              subject: leaf.subject,
              validTo: leaf.validTo.toISOString(),
            },
          ]
        : []),
      ...(options.tls()?.inService ?? []),
    ];
  }

  function serving(): ServingCertificates | undefined {
    const store = options.tls()?.certificates;
    return store ? { store, ...(fallback !== undefined ? { fallback } : {}) } : undefined;
  }

  async function change(strict: boolean): Promise<void> {
    options.metrics.recordCertificates(inService());
    const now = serving();
    if (options.port === false || !started) return;
    if (now === undefined) {
      if (server === undefined) return;
      const closing = server;
      server = undefined;
      logger.info({ port: closing.port }, 'HTTPS port closed: no Host or TLSContext has a certificate');
      await closing.close();
      return;
    }
    if (server !== undefined) {
      chooser.use(server.server as Server, now);
      server.acceptUpgrades(options.upgrades());
      return;
    }
    try {
      server = await listen(options.handler, {
        ...options.listen,
        host: options.host,
        port: options.port,
        secure: chooser.serverOptions(now),
      });
    } catch (err) {
      if (strict) throw err;
      logger.error({ err: errorText(err) }, 'the HTTPS port cannot be opened; the next reload tries again');
      return;
    }
    server.acceptUpgrades(options.upgrades());
    server.server.on('secureConnection', chooser.enforce);
    logger.info(
      { url: `https://${hostPort(options.host, server.port)}`, certificates: now.store.size },
      'HTTPS port open',
    );
  }

  const queued = (strict: boolean): Promise<void> => {
    const run = queue.then(() => change(strict));
    queue = run.catch(() => undefined);
    return run;
  };

  options.metrics.recordCertificates(inService());
  return {
    apply: () => queued(false),
    start() {
      started = true;
      return queued(true);
    },
    watchFiles: (onChange) => watchCertificateFiles(() => options.tls()?.files ?? [], onChange),
    reloadFallback() {
      if (options.fallback === undefined) return;
      fallback = fallbackContext(options.fallback, options.fileSizeLimit);
      void queued(false);
    },
    get port() {
      return server?.port;
    },
    get server() {
      return server;
    },
  };
}
