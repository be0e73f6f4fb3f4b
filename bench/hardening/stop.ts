/**
 * @module bench/hardening/stop
 * A SIGTERM under load: clients go on sending over HTTP/1.1 (keep-alive,
 * connecting again after each `Connection: close`, as a load balancer's
 * pool does) and HTTP/2 (eight streams a connection, a new connection after
 * a GOAWAY) until the gateway has exited. Every failure is sorted by what
 * the gateway had taken: a request on a connection it had answered on, or
 * a stream its GOAWAY named, must never fail; a connection still in the
 * kernel's queue as the port closed is reset by the kernel, and a stream
 * opened past the GOAWAY is refused (`REFUSED_STREAM`), which clients retry.
 */
import { once } from 'node:events';
import http from 'node:http';
import http2 from 'node:http2';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway } from './gateway';

const PATH = '/gateway/v0/check_alive';

/** What the clients saw through the stop. */
export interface StopUnderLoad {
  answered: { http1: number; http2: number };
  /** Failures the gateway is answerable for: must be empty. */
  lost: Record<string, number>;
  /** Failures of what the gateway had not taken yet. */
  notTaken: Record<string, number>;
  exitCode: number | null;
}

/** Starts a gateway, loads it for `beforeMs`, sends SIGTERM, and loads it until it has exited. */
export async function stopUnderLoad(dist: string, beforeMs = 3000): Promise<StopUnderLoad> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-stop-'));
  const gateway = await startGateway(dist, join(__dirname, '..', '..', 'config'), join(dir, 'data'));
  const result: StopUnderLoad = { answered: { http1: 0, http2: 0 }, lost: {}, notTaken: {}, exitCode: null };
  const count = (into: Record<string, number>, what: string) => (into[what] = (into[what] ?? 0) + 1);
  let running = true;
  try {
    if (gateway.url === undefined) throw new Error(`the gateway did not start:\n${gateway.log()}`);
    const port = Number(new URL(gateway.url).port);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
    const http1 = () => {
      if (!running) return;
      const req = http.get({ host: '127.0.0.1', port, path: PATH, agent }, (res) => {
        res.resume();
        res.on('end', () => (result.answered.http1++, http1()));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        count(
          req.reusedSocket ? result.lost : result.notTaken,
          `http1 ${req.reusedSocket ? 'answered' : 'new'} connection ${err.code}`,
        );
        setTimeout(http1, 20);
      });
    };
    const http2Connection = () => {
      if (!running) return;
      const session = http2.connect(`http://127.0.0.1:${port}`);
      let lastStream = Infinity;
      let taken = false;
      session.on('remoteSettings', () => (taken = true));
      session.on('goaway', (_code, lastStreamId) => (lastStream = lastStreamId));
      session.on('error', (err: NodeJS.ErrnoException) =>
        count(taken ? result.lost : result.notTaken, `http2 ${taken ? 'taken' : 'new'} connection ${err.code}`),
      );
      session.once('close', () => setTimeout(http2Connection, 20));
      const stream = () => {
        if (!running || session.closed || session.destroyed || lastStream !== Infinity) return;
        const req = session.request({ ':path': PATH });
        req.resume();
        req.on('end', () => (result.answered.http2++, stream()));
        req.on('error', () => {
          const named = req.id !== undefined && req.id <= lastStream;
          const refused = req.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM;
          count(taken && named && !refused ? result.lost : result.notTaken, `http2 stream rst ${req.rstCode}`);
        });
      };
      session.on('connect', () => Array.from({ length: 8 }, stream));
    };
    Array.from({ length: 32 }, http1);
    Array.from({ length: 8 }, http2Connection);
    await new Promise((resolve) => setTimeout(resolve, beforeMs));
    const exited = once(gateway.child, 'exit');
    gateway.child.kill('SIGTERM');
    [result.exitCode] = (await exited) as [number | null];
    running = false;
    agent.destroy();
    return result;
  } finally {
    running = false;
    await gateway.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
