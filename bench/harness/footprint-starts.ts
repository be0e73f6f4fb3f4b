/**
 * @module bench/harness/footprint-starts
 * One start of a server, as bench/footprint.ts measures it: spawned pinned,
 * timed to its first answer (and to bookings ready), its resident memory
 * read idle and after a user's traffic, and stopped gracefully, so that the
 * next start on its folder opens a database closed cleanly.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { basic } from '../../test/support/credentials';
import { cpuMicros, processTree, startPinned, type ProcessSpec } from './processes';

const ALICE = basic('alice', 'wonderland');
const HOTEL = { hotel_id: 'b1240207-0df8-456d-9ee3-752904b6062b', check_in: '2099-12-20', nights: 2 };

/** What one start measured. */
export interface Start {
  /** ms from spawn to the first answer. */
  answerMs: number;
  /** CPU ms its process tree (every thread) had used by then: less at the mercy of a busy machine than the time. */
  answerCpuMs: number;
  /** ms from spawn to check_ready 200 (the bookings can answer). */
  readyMs: number;
  /** Resident MB of the process tree once ready, before any traffic. */
  idleMb: number;
  /** Resident MB of the process tree after the traffic. */
  rssMb: number;
  /** What `beside` measured after the traffic (PostgreSQL's memory), when given. */
  besideMb?: number;
}

/** A free port, for a server that cannot be asked which one it took. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** Resolves the ms from `since` to the first answer `status` of `path`, asked again at once after each failure. */
async function firstAnswer(port: number, path: string, status: number, since: number, exited: () => boolean) {
  for (;;) {
    if (exited()) throw new Error(`the server on port ${port} exited before ${path} answered ${status}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      if (res.status === status) return performance.now() - since;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Traffic a user of the demo makes: messages, and bookings listed, made and read. */
async function traffic(port: number): Promise<void> {
  const url = `http://127.0.0.1:${port}`;
  const auth = { Authorization: ALICE };
  const one = async (i: number) => {
    const answers: Response[] = [];
    answers.push(await fetch(`${url}/v1/messages/${1 + (i % 3)}`));
    answers.push(await fetch(`${url}/v1/hotels/bookings/`, { headers: auth }));
    if (i % 4 === 0) {
      const made = await fetch(`${url}/v1/hotels/bookings/`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify(HOTEL),
      });
      answers.push(made);
      const { id } = (await made.clone().json()) as { id: string };
      answers.push(await fetch(`${url}/v1/hotels/bookings/${id}`, { headers: auth }));
    }
    for (const res of answers) {
      await res.arrayBuffer();
      if (res.status >= 300) throw new Error(`${res.url} answered ${res.status} during the traffic`);
    }
  };
  // 200 rounds of a user's requests, 8 users at a time.
  for (let i = 0; i < 200; i += 8) await Promise.all(Array.from({ length: 8 }, (_, j) => one(i + j)));
}

/** The sum of a field of /proc/<pid>/`file` (kB) over `pid` and every process under it, in MB. */
function treeSumMb(pid: number, file: string, field: RegExp): number {
  let kb = 0;
  for (const p of processTree([pid])) {
    try {
      kb += Number(field.exec(readFileSync(`/proc/${p}/${file}`, 'utf8'))?.[1] ?? 0);
    } catch {
      // Gone meanwhile.
    }
  }
  return kb / 1024;
}

/** The resident memory of `pid` and every process under it, in MB. */
export function treeRssMb(pid: number): number {
  return treeSumMb(pid, 'status', /^VmRSS:\s+(\d+)/m);
}

/**
 * The proportional set size of `pid` and every process under it, in MB:
 * memory that several of them share (PostgreSQL's shared buffers) counted
 * once, where a sum of their resident sizes counts it in each. Reading
 * another user's needs root (the benchmark's PostgreSQL runs as `postgres`).
 */
export function treePssMb(pid: number): number {
  return treeSumMb(pid, 'smaps_rollup', /^Pss:\s+(\d+)/m);
}

/**
 * Starts `spec` pinned to `cpu`, times its start, makes the traffic (unless
 * bare), reads its memory (and `beside()`'s after the traffic) and stops it.
 */
export async function measureStart(
  spec: ProcessSpec,
  cpu: number,
  gateway: boolean,
  beside?: () => number,
): Promise<Start> {
  const since = performance.now();
  const server = startPinned(spec, cpu);
  let exited = false;
  server.child.once('exit', () => (exited = true));
  try {
    const answerMs = await firstAnswer(spec.port, '/v1/messages/1', 200, since, () => exited);
    const answerCpuMs = cpuMicros(processTree([server.child.pid!])) / 1000;
    const readyMs = gateway ? await firstAnswer(spec.port, '/gateway/v0/check_ready', 200, since, () => exited) : NaN;
    // What the start left behind, and then the traffic, once the collections that follow each are done.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 1000));
    await settle();
    const idleMb = treeRssMb(server.child.pid!);
    if (gateway) {
      await traffic(spec.port);
      await settle();
    }
    return {
      answerMs,
      answerCpuMs,
      readyMs,
      idleMb,
      rssMb: gateway ? treeRssMb(server.child.pid!) : idleMb,
      ...(beside ? { besideMb: beside() } : {}),
    };
  } catch (err) {
    throw new Error(`${spec.name}: ${(err as Error).message}\n${server.stderr()}`);
  } finally {
    // A graceful stop, so that the next start on the folder opens a database closed cleanly, as a restart does.
    if (!exited) {
      const gone = new Promise((resolve) => server.child.once('exit', resolve));
      server.child.kill('SIGTERM');
      const killer = setTimeout(() => server.child.kill('SIGKILL'), 30_000);
      await gone;
      clearTimeout(killer);
    }
  }
}
