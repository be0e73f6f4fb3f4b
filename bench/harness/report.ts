/**
 * @module bench/harness/report
 * The tables of the HTTP part and the goals: figures are medians over the
 * rounds, ratios the median of the ratios of the same round (never a ratio
 * of medians: a round slowed by the machine slows both sides of its ratio).
 */
import { comparedWithGatehouse } from './deployments';
import type { Measured, Sample } from './measure';
import { median } from './stats';

/** A goal of the benchmark: met, not met, or not measured (a row left out). */
export interface Goal {
  title: string;
  /** The figures and what they must reach. */
  detail: string;
  met: boolean | undefined;
}

/** The median over the rounds of `pick(a) / pick(b)` in the same round. */
export function sameRoundRatio(a: Measured, b: Measured, pick: (s: Sample) => number): number {
  const rounds = Math.min(a.samples.length, b.samples.length);
  return median(Array.from({ length: rounds }, (_, i) => pick(a.samples[i]) / pick(b.samples[i])));
}

const of = (m: Measured, pick: (s: Sample) => number) => median(m.samples.map(pick));
const rps = (s: Sample) => s.reqPerSec;
const p99Half = (s: Sample) => s.p99HalfMs;
const fixed = (x: number, digits: number) => (Number.isNaN(x) ? '' : x.toFixed(digits));

/** Columns padded, the first to the left. */
export function table(cells: string[][]): string {
  const widths = cells[0].map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  return cells
    .map((c) =>
      c
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The p99 at half rate, marked when the paced run fell short of half the peak in a round. */
function halfCell(m: Measured): string {
  const short = m.samples.some((s) => s.halfReached < 0.9);
  return `${fixed(of(m, p99Half), 1)}${short ? '*' : ''}`;
}

function groupTable(
  rows: Measured[],
  baseline: Measured | undefined,
  gatehouse: Measured | undefined,
  proxy: boolean,
): string {
  const head = ['deployment', 'req/s', proxy ? 'vs direct' : 'vs bare Koa', 'Gatehouse vs it', 'CPU µs/req'];
  if (proxy) head.push('proxy alone');
  head.push('p99 ms peak', 'p99 ms half', 'errors');
  const cells = [head];
  for (const m of rows) {
    const line = [
      m.spec.name,
      String(Math.round(of(m, rps))),
      baseline ? fixed(sameRoundRatio(m, baseline, rps), 2) : '',
      gatehouse && gatehouse !== m && comparedWithGatehouse(m.spec) ? fixed(sameRoundRatio(gatehouse, m, rps), 2) : '',
      fixed(
        of(m, (s) => s.cpuUs),
        1,
      ),
    ];
    if (proxy)
      line.push(
        m.spec.proxied
          ? fixed(
              of(m, (s) => s.ownCpuUs),
              1,
            )
          : '',
      );
    line.push(
      fixed(
        of(m, (s) => s.p99PeakMs),
        1,
      ),
      halfCell(m),
      String(m.samples.reduce((n, s) => n + s.socketErrors, 0)),
    );
    cells.push(line);
  }
  return table(cells);
}

/** The two tables: what the gateway does in-process against its peers, and the proxy hop. */
export function httpTables(measured: Measured[]): string {
  const byKey = (key: string) => measured.find((m) => m.spec.key === key);
  const sameJob = measured.filter((m) => m.spec.group === 'same-job');
  const proxy = measured.filter((m) => m.spec.group === 'proxy');
  const parts: string[] = [];
  if (sameJob.length) {
    parts.push(
      'GET /v1/messages/1, each deployment on CPU 0 alone (the others frozen), wrk on CPU 1. "Gatehouse vs it": Gatehouse (+ auth + rate limit) ÷ the row.',
      groupTable(sameJob, byKey('bare-koa'), byKey('gatehouse'), false),
    );
  }
  if (proxy.length) {
    parts.push(
      '',
      'Proxy hop to a remote upstream (the upstream on CPU 0 too): "Gatehouse vs it": Gatehouse proxying ÷ the row; CPU µs/req of the proxy and the upstream, and of the proxy alone.',
      groupTable(proxy, byKey('upstream'), byKey('gatehouse-proxy'), true),
    );
  }
  if (measured.some((m) => m.samples.some((s) => s.halfReached < 0.9))) {
    parts.push('* in a round, the paced run reached less than 90% of half the peak: its p99 is of a saturated server.');
  }
  return parts.join('\n');
}

/** A ratio goal between two rows; not measured when either is missing. */
function ratioGoal(
  a: Measured | undefined,
  b: Measured | undefined,
  pick: (s: Sample) => number,
  test: (r: number) => boolean,
): { ratio: number; met: boolean | undefined } {
  if (!a || !b) return { ratio: NaN, met: undefined };
  const ratio = sameRoundRatio(a, b, pick);
  return { ratio, met: test(ratio) };
}

const both = (a: boolean | undefined, b: boolean | undefined) =>
  a === undefined || b === undefined ? undefined : a && b;
const shown = (x: number) => (Number.isNaN(x) ? 'not measured' : x.toFixed(2));

/** Goals 1, 2 and 4 of the HTTP rows (3 is the gRPC part's). */
export function httpGoals(measured: Measured[]): Goal[] {
  const m = (key: string) => measured.find((x) => x.spec.key === key);
  const atLeast = (n: number) => (r: number) => r >= n;
  const atMost = (n: number) => (r: number) => r <= n;
  const koa = ratioGoal(m('gatehouse'), m('koa-stack'), rps, atLeast(1));
  const fastify = ratioGoal(m('gatehouse'), m('fastify'), rps, atLeast(0.8));
  const fastifyProxy = ratioGoal(m('gatehouse-proxy'), m('fastify-proxy'), rps, atLeast(1));
  const undici = ratioGoal(m('gatehouse-proxy'), m('undici'), rps, atLeast(0.8));
  // The peers answering what Gatehouse answers (a request id, RateLimit headers, the log's fields...): what the answer itself costs.
  const koaAnswer = ratioGoal(m('gatehouse'), m('koa-answer'), rps, atLeast(1));
  const undiciAnswer = ratioGoal(m('gatehouse-proxy'), m('undici-answer'), rps, atLeast(0.8));
  // On a machine shared with other work, CPU time per request varies less than req/s: the same ratio from it.
  const byCpu = (a: string, b: string) =>
    m(a) && m(b) ? shown(sameRoundRatio(m(b)!, m(a)!, (s) => s.cpuUs)) : 'not measured';
  const koaP99 = ratioGoal(m('gatehouse'), m('koa-stack'), p99Half, atMost(1));
  const proxyP99 = ratioGoal(m('gatehouse-proxy'), m('fastify-proxy'), p99Half, atMost(1));
  return [
    {
      title: '1. Gatehouse (auth + rate limit, in-process api) >= 1.0x the hand-written Koa stack with its pino log',
      detail: `${shown(koa.ratio)} (stretch: >= 0.8x the fastify stack: ${shown(fastify.ratio)}, ${fastify.met === undefined ? 'not measured' : fastify.met ? 'met' : 'not met'}); by CPU µs per request: ${byCpu('gatehouse', 'koa-stack')} and ${byCpu('gatehouse', 'fastify')}; vs the Koa stack answering as Gatehouse does: ${shown(koaAnswer.ratio)}`,
      met: koa.met,
    },
    {
      title: '2. Gatehouse proxy hop >= 1.0x @fastify/http-proxy and >= 0.8x node:http + undici',
      detail: `${shown(fastifyProxy.ratio)} and ${shown(undici.ratio)}; by CPU µs per request (upstream's included): ${byCpu('gatehouse-proxy', 'fastify-proxy')} and ${byCpu('gatehouse-proxy', 'undici')}; vs the undici forwarder answering as Gatehouse does: ${shown(undiciAnswer.ratio)}`,
      met: both(fastifyProxy.met, undici.met),
    },
    {
      title: "4. p99 at half of each one's peak no worse than the peer's (Gatehouse ÷ peer <= 1.0)",
      detail: `same job vs the hand-written Koa stack ${shown(koaP99.ratio)}; proxy vs @fastify/http-proxy ${shown(proxyP99.ratio)}`,
      met: both(koaP99.met, proxyP99.met),
    },
  ];
}

/** The goals as lines: met, NOT MET or not measured. */
export function formatGoals(goals: readonly Goal[]): string {
  const verdict = (g: Goal) => (g.met === undefined ? 'not measured' : g.met ? 'met' : 'NOT MET');
  return [...goals]
    .sort((a, b) => a.title.localeCompare(b.title))
    .map((g) => `${verdict(g).padEnd(12)} ${g.title}: ${g.detail}`)
    .join('\n');
}
