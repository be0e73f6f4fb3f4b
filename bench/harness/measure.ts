/**
 * @module bench/harness/measure
 * The HTTP part of the benchmark: starts every deployment (pinned to CPU 0),
 * checks its answers, freezes it, then measures them in interleaved rounds,
 * one at a time with the others frozen, the load (wrk) pinned to CPU 1.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test/support/ports';
import { DEPLOYMENTS, DIST, UPSTREAM_KEY, type BuildContext, type DeploymentSpec } from './deployments';
import {
  cpuMicros,
  identify,
  processTree,
  requireTools,
  signalAll,
  startPinned,
  stopAll,
  track,
  waitUntilServing,
  type Pinned,
} from './processes';
import { ALICE, apiAnswer, CHECK_LIMIT, checkAnswers, checkLimit, MESSAGE_PATH } from './selfcheck';
import type { Settings } from './settings';
import { runWrk, type WrkResult } from './wrk';

export const SERVER_CPU = 0;
export const LOAD_CPU = 1;

/** One deployment in one round. */
export interface Sample {
  reqPerSec: number;
  /** CPU time of every process of the deployment (the upstream's included) per request at peak, µs. */
  cpuUs: number;
  /** The same without the upstream's: what the proxy alone spent. */
  ownCpuUs: number;
  p99PeakMs: number;
  p99HalfMs: number;
  /** What the paced run reached, as a share of the half it was paced at. */
  halfReached: number;
  socketErrors: number;
}

export interface Measured {
  spec: DeploymentSpec;
  samples: Sample[];
}

interface Running {
  spec: DeploymentSpec;
  port: number;
  processes: Pinned[];
}

const rootsOf = (r: Running) => r.processes.map((p) => p.child.pid!);

async function startDeployment(spec: DeploymentSpec, ctx: BuildContext, limit: number): Promise<Running> {
  const built = await spec.build(ctx, limit);
  const running: Running = { spec, port: built.port, processes: [] };
  try {
    // In order: what a process forwards to serves before it.
    for (const processSpec of built.processes) {
      const pinned = startPinned(processSpec, SERVER_CPU);
      running.processes.push(pinned);
      await waitUntilServing(pinned);
    }
  } catch (err) {
    await stopAll(running.processes);
    throw err;
  }
  track(identify(processTree(rootsOf(running))));
  return running;
}

/** Freezes (SIGSTOP) or thaws (SIGCONT) every process of `running`, their children included. */
function setFrozen(running: Running[], frozen: boolean): void {
  signalAll(identify(processTree(running.flatMap(rootsOf))), frozen ? 'SIGSTOP' : 'SIGCONT');
}

async function measureOne(target: Running, upstream: Running | undefined, settings: Settings): Promise<Sample> {
  const url = `http://127.0.0.1:${target.port}${MESSAGE_PATH}`;
  const load = {
    url,
    connections: settings.connections,
    cpu: LOAD_CPU,
    authorization: target.spec.auth ? ALICE : undefined,
  };
  // Errors while warming up are not counted: a proxy may find its kept-alive connections closed by an upstream that was frozen.
  await runWrk({ ...load, seconds: settings.warmup });
  const own = processTree(rootsOf(target));
  const all = upstream ? [...own, ...processTree(rootsOf(upstream))] : own;
  const [allBefore, ownBefore] = [cpuMicros(all), cpuMicros(own)];
  const peak = await runWrk({ ...load, seconds: settings.duration });
  const [allAfter, ownAfter] = [cpuMicros(all), cpuMicros(own)];
  const gone = [...target.processes, ...(upstream?.processes ?? [])].find(
    (p) => p.child.exitCode !== null || p.child.signalCode !== null,
  );
  if (gone) throw new Error(`${gone.spec.name} of ${target.spec.name} exited while measured: ${gone.stderr().trim()}`);
  if (peak.requests === 0) throw new Error(`${target.spec.name} answered no request in ${settings.duration} s`);
  const half = await runWrk({ ...load, seconds: settings.duration, rate: peak.reqPerSec / 2 });
  for (const [run, r] of [
    ['at peak', peak],
    ['at half rate', half],
  ] as [string, WrkResult][]) {
    if (r.statusErrors > 0)
      throw new Error(
        `${target.spec.name}: ${r.statusErrors} answers of status 400 or more ${run}: it must answer every request 200`,
      );
  }
  return {
    reqPerSec: peak.reqPerSec,
    cpuUs: (allAfter - allBefore) / peak.requests,
    ownCpuUs: (ownAfter - ownBefore) / peak.requests,
    p99PeakMs: peak.p99Ms,
    p99HalfMs: half.p99Ms,
    halfReached: half.reqPerSec / (peak.reqPerSec / 2),
    socketErrors: peak.socketErrors + half.socketErrors,
  };
}

/** Starts, checks and measures the deployments of `settings.rows`. */
export async function runHttpBench(settings: Settings): Promise<Measured[]> {
  const specs = DEPLOYMENTS.filter((d) => settings.rows.includes(d.key));
  const tools = ['taskset', 'wrk'];
  if (specs.some((d) => d.key === 'seed' || d.key === 'nginx')) tools.push('nginx');
  if (specs.some((d) => d.key === 'haproxy')) tools.push('haproxy');
  requireTools(tools);

  const root = mkdtempSync(join(os.tmpdir(), 'gatehouse-bench-'));
  if (settings.accessLog !== '/dev/null') mkdirSync(settings.accessLog, { recursive: true });
  const upstreamPort = await freePort();
  const contextOf = (name: string): BuildContext => ({
    dir: join(root, name),
    logOf: (process) =>
      settings.accessLog === '/dev/null'
        ? '/dev/null'
        : join(settings.accessLog, `${name}.${process.replace(/\W+/g, '-')}.log`),
    upstreamPort,
    baselineDist: settings.baseline && join(settings.baseline, 'dist'),
  });
  const running: Running[] = [];
  try {
    for (const spec of specs) {
      process.stderr.write(`starting and checking ${spec.name}\n`);
      if (spec.limited) {
        const small = await startDeployment(spec, contextOf(`${spec.key}-limit-check`), CHECK_LIMIT);
        try {
          await checkLimit(spec, small.port);
        } finally {
          await stopAll(small.processes);
        }
      }
      const r = await startDeployment(spec, contextOf(spec.key), settings.limit);
      running.push(r);
      const answerHost = `127.0.0.1:${spec.group === 'proxy' ? upstreamPort : r.port}`;
      await checkAnswers(spec, r.port, await apiAnswer(DIST, answerHost));
      // The upstream serves every proxy's check; it is frozen with the rest once all have passed.
      if (spec.key !== UPSTREAM_KEY) setFrozen([r], true);
    }
    setFrozen(running, true);

    const upstream = running.find((r) => r.spec.key === UPSTREAM_KEY);
    const samples = new Map<string, Sample[]>(running.map((r) => [r.spec.key, []]));
    for (let round = 0; round < settings.rounds; round++) {
      // Each round starts one further along, so that no deployment always follows the same one.
      const order = running.map((_, i) => running[(i + round) % running.length]);
      for (const target of order) {
        const thawed = target.spec.proxied && upstream ? [target, upstream] : [target];
        setFrozen(thawed, false);
        try {
          const sample = await measureOne(target, target.spec.proxied ? upstream : undefined, settings);
          samples.get(target.spec.key)!.push(sample);
          process.stderr.write(
            `  round ${round + 1}/${settings.rounds} ${target.spec.name}: ${Math.round(sample.reqPerSec)} req/s, ${sample.cpuUs.toFixed(1)} µs CPU/req, p99 ${sample.p99PeakMs.toFixed(1)} ms at peak, ${sample.p99HalfMs.toFixed(1)} ms at half; load average ${os.loadavg()[0].toFixed(1)}\n`,
          );
        } finally {
          setFrozen(thawed, true);
        }
      }
    }
    return running.map((r) => ({ spec: r.spec, samples: samples.get(r.spec.key)! }));
  } finally {
    await stopAll(running.flatMap((r) => r.processes));
    rmSync(root, { recursive: true, force: true });
  }
}
