/**
 * @module test/support/tls-rig
 * A whole Gatehouse serving TLS for the tests, asked by real clients: a
 * config folder of its own (Secrets, Hosts, TLSContexts, Mappings), an
 * upstream that records what it is sent, and `openssl s_client` and `curl`
 * run against its ports.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createGatehouse, type Gatehouse, type GatehouseOptions } from '../../src/gatehouse';
import { createLogger } from '../../src/telemetry';
import { captureLog, type LogCapture } from './log-capture';

/** A Gatehouse started over a config folder of a test's own, with its HTTPS port. */
export interface TlsRig {
  readonly gatehouse: Gatehouse;
  readonly dir: string;
  readonly port: number;
  /** The HTTPS port, once open. */
  httpsPort(): number | undefined;
  readonly log: LogCapture;
  /** Writes a file of the folder as editors do: aside, then renamed over it. */
  write(name: string, text: string | Buffer): void;
  stop(): Promise<void>;
}

let written = 0;

/** Starts a Gatehouse over a new folder holding `files` (name to text). */
export async function startTlsRig(files: Record<string, string>, options: GatehouseOptions = {}): Promise<TlsRig> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-rig-'));
  const write = (name: string, text: string | Buffer) => {
    const aside = join(tmpdir(), `gatehouse-tls-write-${process.pid}-${written++}`);
    writeFileSync(aside, text);
    renameSync(aside, join(dir, name));
  };
  for (const [name, text] of Object.entries(files)) write(name, text);
  const log = captureLog();
  const gatehouse = await createGatehouse({
    configDir: dir,
    host: '127.0.0.1',
    port: 0,
    httpsPort: 0,
    grpcPort: false,
    watch: false,
    drainDelayMs: 0,
    bookingStore: 'memory',
    reloadDebounceMs: 50,
    logger: createLogger({ destination: log, level: 'info' }),
    ...options,
  });
  const listening = await gatehouse.start().catch(async (err: unknown) => {
    await gatehouse.stop();
    throw err;
  });
  let stopped = false;
  return {
    gatehouse,
    dir,
    port: listening.port,
    httpsPort: () => (stopped ? undefined : gatehouse.httpsPort()),
    log,
    write,
    async stop() {
      stopped = true;
      await gatehouse.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An upstream that answers 200 with the headers it was sent (JSON), and keeps the last ones. */
export interface RecordingUpstream {
  readonly address: string;
  last(): IncomingHttpHeaders | undefined;
  /** How many requests it was sent. */
  count(): number;
  close(): Promise<void>;
}

export async function recordingUpstream(): Promise<RecordingUpstream> {
  let last: IncomingHttpHeaders | undefined;
  let count = 0;
  const server = http.createServer((req, res) => {
    last = req.headers;
    count++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url, headers: req.headers }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    last: () => last,
    count: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** What `openssl s_client` said: the subject of the certificate served, and everything it printed. */
export interface SClientResult {
  readonly subject: string | undefined;
  readonly output: string;
}

/**
 * Runs `openssl s_client` against `port` with `args`, its input closed at
 * once; with `request`, a request is sent with `Connection: close`, and
 * s_client waits for the server to close, so that an alert the server
 * sends after the handshake (TLS 1.3's client certificate refusal) is read.
 */
export async function runSClient(port: number, args: readonly string[], request?: string): Promise<SClientResult> {
  const waits = request === undefined ? [] : ['-ign_eof'];
  const child = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, ...waits, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (request !== undefined) child.stdin.write(request);
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stdin.end();
  await once(child, 'close');
  const subject = /^subject=(.*)$/m.exec(output)?.[1];
  return { subject, output };
}

/** What `curl` said: the status (0 for none), the body, and its exit code. */
export interface CurlResult {
  readonly status: number;
  readonly body: string;
  readonly code: number;
  readonly stderr: string;
}

/** Runs `curl -s` with `args`; the status is written after the body. */
export async function runCurl(args: readonly string[]): Promise<CurlResult> {
  const marker = '\n--status--';
  try {
    const { stdout, stderr } = await promisify(execFile)('curl', ['-sS', '-w', `${marker}%{http_code}`, ...args], {
      encoding: 'utf8',
    });
    const at = stdout.lastIndexOf(marker);
    return { status: Number(stdout.slice(at + marker.length)), body: stdout.slice(0, at), code: 0, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    const stdout = e.stdout ?? '';
    const at = stdout.lastIndexOf(marker);
    return {
      status: at < 0 ? 0 : Number(stdout.slice(at + marker.length)),
      body: '',
      code: e.code ?? -1,
      stderr: e.stderr ?? '',
    };
  }
}
