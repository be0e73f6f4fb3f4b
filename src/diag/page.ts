/**
 * @module diag/page
 * The diagnostic page: one self-contained HTML5 document (inline CSS, inline
 * SVG, no script, no external resource) in which every value is escaped.
 * What an operator looks for first comes first: the totals, how each
 * dependency is and the traffic of the last minutes; then the routes; then
 * the configuration and the services' settings. It fits a 1280-pixel screen.
 */
import { createHash } from 'node:crypto';
import { escapeHtml } from './html';
import { COLUMN_STYLE, routeCells, routesSection } from './routes';
import { authSection, configSection, rateLimitSection, statusSection } from './sections';
import type { DiagRoute, DiagSnapshot } from './types';

export { escapeHtml } from './html';
export { routeCells } from './routes';

const STYLE = `
:root { color-scheme: light dark; --fg: #1d232a; --muted: #5b6572; --bg: #fff; --line: #d6dbe1; --head: #f2f4f7;
  --bad-bg: #fdecec; --bad-fg: #8f1d1d; --warn-fg: #8a5300; --ok-fg: #1d6b36; --bar: #7d8fa6; --c4xx: #d9a02b; --c5xx: #c8382f; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ed; --muted: #9aa4b1; --bg: #15191e; --line: #333b45;
  --head: #1f252c; --bad-bg: #3b1717; --bad-fg: #ffb4b4; --warn-fg: #ffcc80; --ok-fg: #8fdca8; --bar: #8797ab; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 90rem; padding: 1.5rem; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .5rem; }
h3 { font-size: 1rem; margin: 0 0 .4rem; }
.meta { color: var(--muted); margin: 0; }
code, td.mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }
table { border-collapse: collapse; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: var(--head); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
table.routes { width: 100%; table-layout: fixed; font-size: 14px; }
table.routes td { overflow-wrap: anywhere; }
table.routes th { overflow-wrap: normal; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
table.routes td.labels code, .nowrap { white-space: nowrap; }
${COLUMN_STYLE}
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; }
ul.plain { margin: 0; padding-left: 0; list-style: none; }
.counters { display: flex; gap: 2rem; flex-wrap: wrap; margin: 1rem 0 0; }
.counters div { font-size: 1.4rem; font-weight: 600; }
.counters span { display: block; font-size: .8rem; font-weight: 400; color: var(--muted); }
.status { display: flex; flex-wrap: wrap; gap: 1rem 2.5rem; align-items: flex-start; }
.status > div { flex: 1 1 28rem; min-width: 0; }
table.dependencies th { white-space: nowrap; }
.state { font-weight: 600; white-space: nowrap; }
.state.ok { color: var(--ok-fg); }
.state.warn { color: var(--warn-fg); }
.state.down { color: var(--bad-fg); }
.state.off { color: var(--muted); font-weight: 400; }
table.traffic th[scope=row] { font-weight: 400; background: none; overflow-wrap: anywhere; }
table.traffic td { vertical-align: middle; }
svg.bars { display: block; }
svg.bars .served, .key.served { fill: var(--bar); background: var(--bar); }
svg.bars .c4xx, .key.c4xx { fill: var(--c4xx); background: var(--c4xx); }
svg.bars .c5xx, .key.c5xx { fill: var(--c5xx); background: var(--c5xx); }
svg.bars .idle { fill: var(--line); }
.legend { color: var(--muted); font-size: .85rem; margin: .3rem 0 0; }
.key { display: inline-block; width: .7rem; height: .7rem; margin-left: .6rem; vertical-align: -.05rem; }
table.files td:nth-child(2) { white-space: nowrap; }
.config-errors { border: 2px solid var(--bad-fg); background: var(--bad-bg); color: var(--bad-fg); padding: .75rem 1rem; border-radius: 6px; margin-bottom: .75rem; }
.bad { color: var(--bad-fg); font-weight: 600; }
.warn { color: var(--warn-fg); font-weight: 600; }
.ok { color: var(--ok-fg); }
.none { color: var(--muted); font-style: italic; }
`;

/** The Content-Security-Policy of the page: its own style and nothing else. */
export const PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** `3d 4h 5m 6s`, leaving out the leading zero units. */
export function formatUptime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const parts: [number, string][] = [
    [Math.floor(s / 86400), 'd'],
    [Math.floor((s % 86400) / 3600), 'h'],
    [Math.floor((s % 3600) / 60), 'm'],
    [s % 60, 's'],
  ];
  const first = parts.findIndex(([n]) => n > 0);
  return first === -1
    ? '0s'
    : parts
        .slice(first)
        .map(([n, unit]) => `${n}${unit}`)
        .join(' ');
}

/** The totals at the top: the answers since the start, the routes, and the limits and users the folder holds. */
function counters(s: DiagSnapshot): string {
  const c = s.counters;
  const counts = s.config.counts;
  const items = [
    `<div>${escapeHtml(c.requests)}<span>requests</span></div>`,
    `<div>${escapeHtml(c.clientErrors)}<span>4xx answers</span></div>`,
    `<div${c.errors > 0 ? ' class="bad"' : ''}>${escapeHtml(c.errors)}<span>5xx answers</span></div>`,
    `<div>${escapeHtml(s.routes.length)}<span>routes</span></div>`,
  ];
  if (counts?.limits) items.push(`<div>${escapeHtml(counts.limits.rules)}<span>limits</span></div>`);
  if (counts?.users !== undefined) items.push(`<div>${escapeHtml(counts.users)}<span>users</span></div>`);
  return `<div class="counters">\n${items.join('\n')}\n</div>`;
}

/** Renders the whole page. */
export function renderDiagPage(s: DiagSnapshot): string {
  return [...diagPagePieces(s)].join('');
}

/**
 * The page of {@link renderDiagPage} in pieces, each route's row one, so
 * that a page of many routes can be sent a part at a time; `cellsOf` gives
 * a route's {@link routeCells} (a renderer may keep those of a route that
 * does not change).
 */
export function* diagPagePieces(
  s: DiagSnapshot,
  cellsOf: (route: DiagRoute) => string = routeCells,
): Generator<string, void, void> {
  yield `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Gatehouse diagnostics</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>Gatehouse diagnostics</h1>
<p class="meta">Version ${escapeHtml(s.version)} · up ${escapeHtml(formatUptime(s.uptimeSeconds))} (since ${escapeHtml(
    s.startedAt,
  )}) · <a href="?json=true">JSON</a></p>
${counters(s)}
</header>
<main>
${statusSection(s)}
`;
  yield* routesSection(s.routes, cellsOf);
  yield `
${configSection(s.config)}
${authSection(s.auth)}
${rateLimitSection(s.rateLimit)}
</main>
</body>
</html>
`;
}
