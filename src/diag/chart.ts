/**
 * @module diag/chart
 * The traffic of the last minutes drawn by the page itself, as inline SVG
 * (no script, no resource from elsewhere): one row of bars a route, each
 * bar a minute, its 4xx and 5xx answers in their colours on top of the
 * others. Each row has its own scale, its busiest minute full height, so
 * that a burst of errors on a quiet route shows as well as on a busy one;
 * the counts beside it say how many.
 */
import { escapeHtml, none } from './html';
import type { DiagTraffic, DiagTrafficSeries } from './types';

const BAR = 8;
const GAP = 2;
const HEIGHT = 24;

function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

/** `12:03` (UTC) of the minute `i` after `since`. */
function minuteText(since: number, i: number): string {
  return new Date(since + i * 60_000).toISOString().slice(11, 16);
}

/** The bars of one series, its busiest minute full height. */
function bars(series: DiagTrafficSeries, since: number, label: string): string {
  const n = series.requests.length;
  const max = Math.max(0, ...series.requests);
  const width = n * (BAR + GAP) - GAP;
  const scale = max > 0 ? HEIGHT / max : 0;
  const rects: string[] = [];
  for (let i = 0; i < n; i++) {
    const requests = series.requests[i];
    const x = i * (BAR + GAP);
    const title = `<title>${minuteText(since, i)} UTC: ${requests} requests, ${series.clientErrors[i]} 4xx, ${series.errors[i]} 5xx</title>`;
    // An empty minute is a baseline, so that a quiet minute reads as one and not as a gap.
    if (requests === 0) {
      rects.push(`<rect class="idle" x="${x}" y="${HEIGHT - 1}" width="${BAR}" height="1">${title}</rect>`);
      continue;
    }
    const parts: [string, number][] = [
      ['served', requests - series.clientErrors[i] - series.errors[i]],
      ['c4xx', series.clientErrors[i]],
      ['c5xx', series.errors[i]],
    ];
    let y = HEIGHT;
    for (const [kind, count] of parts) {
      if (count <= 0) continue;
      const h = Math.max(1, count * scale);
      y -= h;
      rects.push(
        `<rect class="${kind}" x="${x}" y="${y.toFixed(1)}" width="${BAR}" height="${h.toFixed(1)}">${title}</rect>`,
      );
    }
  }
  return `<svg class="bars" role="img" aria-label="${escapeHtml(label)}" viewBox="0 0 ${width} ${HEIGHT}" width="${width}" height="${HEIGHT}">${rects.join('')}</svg>`;
}

function row(name: string, series: DiagTrafficSeries, since: number, named = true): string {
  const requests = sum(series.requests);
  const errors = sum(series.errors);
  const clientErrors = sum(series.clientErrors);
  const label = `${name}: ${requests} requests, ${clientErrors} 4xx, ${errors} 5xx over the last minutes`;
  return `<tr><th scope="row">${named ? escapeHtml(name) : none(name)}</th><td>${bars(series, since, label)}</td><td class="num">${requests}</td><td class="num">${clientErrors}</td><td class="num${errors > 0 ? ' bad' : ''}">${errors}</td></tr>`;
}

/** The traffic section: every route together, then the busiest apart. */
export function trafficChart(traffic: DiagTraffic | undefined): string {
  if (traffic === undefined) return '';
  const since = Date.parse(traffic.since);
  const last = traffic.total.requests.length - 1;
  const head = `<h3>Traffic, last ${traffic.minutes} minutes <span class="meta">(${minuteText(since, 0)}–${minuteText(since, last)} UTC)</span></h3>`;
  if (sum(traffic.total.requests) === 0) return `${head}<p>${none('No request in the last minutes.')}</p>`;
  const rows = [row('all routes', traffic.total, since, false), ...traffic.routes.map((r) => row(r.name, r, since))];
  return `${head}<table class="traffic">
<thead><tr><th scope="col">Route</th><th scope="col">Each minute</th><th scope="col">Requests</th><th scope="col">4xx</th><th scope="col">5xx</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>
<p class="legend"><span class="key served"></span> answered <span class="key c4xx"></span> 4xx <span class="key c5xx"></span> 5xx · health probes and metrics scrapes left out</p>`;
}
