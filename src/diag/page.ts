/**
 * @module diag/page
 * The diagnostic page: one self-contained HTML5 document (inline CSS, no
 * script, no external resource) in which every value is escaped.
 */
import { createHash } from 'node:crypto';
import type { DiagAuth, DiagRateLimit, DiagRoute, DiagSnapshot } from './types';
import { certificatesSection } from './certificates';
import { describeLabel, groupLabels, upstreamSummary } from '../gateway';

const STYLE = `
:root { color-scheme: light dark; --fg: #1d232a; --muted: #5b6572; --bg: #fff; --line: #d6dbe1; --head: #f2f4f7;
  --bad-bg: #fdecec; --bad-fg: #8f1d1d; --warn-fg: #8a5300; --ok-fg: #1d6b36; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ed; --muted: #9aa4b1; --bg: #15191e; --line: #333b45;
  --head: #1f252c; --bad-bg: #3b1717; --bad-fg: #ffb4b4; --warn-fg: #ffcc80; --ok-fg: #8fdca8; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 90rem; padding: 1.5rem; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .5rem; }
.meta { color: var(--muted); margin: 0; }
code, td.mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: var(--head); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; }
ul.plain { margin: 0; padding-left: 1.1rem; }
.counters { display: flex; gap: 2rem; flex-wrap: wrap; margin: 1rem 0 0; }
.counters div { font-size: 1.4rem; font-weight: 600; }
.counters span { display: block; font-size: .8rem; font-weight: 400; color: var(--muted); }
.config-errors { border: 2px solid var(--bad-fg); background: var(--bad-bg); color: var(--bad-fg); padding: .75rem 1rem; border-radius: 6px; }
.config-errors h3 { margin: 0 0 .4rem; font-size: 1rem; }
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

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

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

const code = (value: unknown) => `<code>${escapeHtml(value)}</code>`;
const none = (text: string) => `<span class="none">${escapeHtml(text)}</span>`;

function labelsCell(labels: DiagRoute['labels']): string {
  if (!labels) return none('none');
  const items: string[] = [];
  for (const [domain, groups] of Object.entries(labels)) {
    for (const group of groups) {
      const parts = groupLabels(group).map(describeLabel);
      items.push(`<li><code>${escapeHtml(domain)}: ${escapeHtml(parts.join(', '))}</code></li>`);
    }
  }
  return `<ul class="plain">${items.join('')}</ul>`;
}

/** The headers and query arguments a route requires: an exact value, any value, or a value matching a pattern. */
function headersCell(route: DiagRoute): string {
  const item = (name: string, condition: string | true, how: 'exact' | 'pattern') =>
    condition === true
      ? `<li>${code(name)} ${none('any value')}</li>`
      : `<li>${code(`${name}: ${condition}`)}${how === 'pattern' ? ` ${none('pattern')}` : ''}</li>`;
  const items = [
    ...Object.entries(route.headers ?? {}).map(([name, c]) => item(name, c, 'exact')),
    ...Object.entries(route.regex_headers ?? {}).map(([name, c]) => item(name, c, 'pattern')),
    ...Object.entries(route.query_parameters ?? {}).map(([name, c]) => item(`?${name}`, c, 'exact')),
    ...Object.entries(route.regex_query_parameters ?? {}).map(([name, c]) => item(`?${name}`, c, 'pattern')),
  ];
  return items.length > 0 ? `<ul class="plain">${items.join('')}</ul>` : none('any');
}

/** Where a route sends a request: its service (its Host, upgrades and share of its match), or its redirect. */
function serviceCell(route: DiagRoute): string {
  const service = escapeHtml(route.service);
  const r = route.redirect;
  if (r !== undefined) {
    const path =
      r.path_redirect ??
      r.prefix_redirect ??
      (r.regex_redirect && `${r.regex_redirect.pattern} → ${r.regex_redirect.substitution}`);
    return `${none(`${r.response_code} to`)} ${service}${path ? ` ${none(r.prefix_redirect !== undefined ? 'prefix' : 'path')} ${code(path)}` : ''}`;
  }
  return `${service}${route.host_rewrite ? ` ${none('Host:')} ${code(route.host_rewrite)}` : ''}${
    route.allow_upgrade ? ` ${none('upgrades:')} ${route.allow_upgrade.map(code).join(' ')}` : ''
  }${route.share !== undefined ? ` ${none(`${route.weight === undefined ? '' : `weight ${route.weight}: `}${route.share}% of its match`)}` : ''}${
    route.upstream ? ` ${none('upstream:')} ${code(upstreamSummary(route.upstream))}` : ''
  }`;
}

/** The path a route forwards: its rewrite, or its regex_rewrite. */
function rewriteCell(route: DiagRoute): string {
  if (route.redirect !== undefined) return none('-');
  if (route.regex_rewrite) return `${code(route.regex_rewrite.pattern)} → ${code(route.regex_rewrite.substitution)}`;
  return route.rewrite === '' ? `${code('""')} ${none('path unchanged')}` : code(route.rewrite);
}

/** The path a route matches: a prefix (in any case), an exact path, or a pattern; marked when it lets unsafe escapes through. */
function prefixCell(route: DiagRoute): string {
  const how = route.prefix_regex
    ? 'pattern'
    : route.prefix_exact
      ? 'exact path'
      : route.case_sensitive === false
        ? 'any case'
        : '';
  const unsafe = route.allow_unsafe_path_escapes ? ' <span class="warn">unsafe escapes</span>' : '';
  return `${escapeHtml(route.prefix)}${how ? ` ${none(how)}` : ''}${unsafe}`;
}

/** A route's row after its number: the cells that describe it and its counts, and the row's end. */
export function routeCells(route: DiagRoute): string {
  const auth = route.bypass_auth ? '<span class="warn">bypassed</span>' : '<span class="ok">required</span>';
  const cells = [
    `<td>${escapeHtml(route.name)}</td>`,
    `<td class="mono">${prefixCell(route)}</td>`,
    `<td>${route.method ? `${code(route.method)}${route.method_regex ? ` ${none('pattern')}` : ''}` : none('any')}</td>`,
    `<td>${headersCell(route)}</td>`,
    `<td>${route.hostname ? `${code(route.hostname)}${route.host_regex ? ` ${none('pattern')}` : ''}` : none('any')}</td>`,
    `<td>${rewriteCell(route)}</td>`,
    `<td>${serviceCell(route)}</td>`,
    `<td>${escapeHtml(route.target)}</td>`,
    `<td>${auth}</td>`,
    `<td class="num">${escapeHtml(route.precedence)}</td>`,
    `<td>${labelsCell(route.labels)}</td>`,
    `<td class="num">${escapeHtml(route.requests)}</td>`,
    `<td class="num">${escapeHtml(route.clientErrors)}</td>`,
    `<td class="num${route.errors > 0 ? ' bad' : ''}">${escapeHtml(route.errors)}</td>`,
  ];
  return `${cells.join('')}</tr>`;
}

/** The routes section, a piece a row; `cellsOf` gives a route's {@link routeCells}. */
function* routesSection(
  routes: readonly DiagRoute[],
  cellsOf: (route: DiagRoute) => string,
): Generator<string, void, void> {
  if (routes.length === 0) {
    yield `<h2 id="routes">Routes</h2><p>${none('No mappings: every path is answered 404.')}</p>`;
    return;
  }
  const head = [
    '#',
    'Name',
    'Prefix',
    'Method',
    'Headers',
    'Host',
    'Rewrite',
    'Service',
    'Target',
    'Auth',
    'Precedence',
    'Labels',
    'Requests',
    '4xx',
    '5xx',
  ];
  yield `<h2 id="routes">Routes</h2>
<div class="scroll"><table>
<caption class="meta">In match order: the first route that matches a request serves it.</caption>
<thead><tr>${head.map((h) => `<th scope="col">${h}</th>`).join('')}</tr></thead>
<tbody>`;
  for (let i = 0; i < routes.length; i++)
    yield `${i === 0 ? '' : '\n'}<tr><td class="num">${i + 1}</td>${cellsOf(routes[i])}`;
  yield `</tbody>
</table></div>`;
}

function definitions(rows: [string, string][]): string {
  return `<dl>${rows.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${value}</dd>`).join('')}</dl>`;
}

const headerList = (headers: readonly string[]) => (headers.length ? headers.map(code).join(', ') : none('none'));

function authSection(auth: DiagAuth | undefined): string {
  if (!auth)
    return `<h2 id="auth">Auth service</h2><p class="warn">No AuthService: requests are not authenticated.</p>`;
  const failure = auth.failure_mode_allow
    ? '<span class="warn">allow: requests pass when the auth service fails</span>'
    : `deny: answered ${escapeHtml(auth.status_on_error)} when the auth service fails`;
  return `<h2 id="auth">Auth service</h2>${definitions([
    ['Record', escapeHtml(auth.name)],
    ['Service', `${escapeHtml(auth.service)} (${escapeHtml(auth.target)})`],
    ['Failure mode', failure],
    ['Status on error', escapeHtml(auth.status_on_error)],
    ['Timeout', `${escapeHtml(auth.timeout_ms)} ms`],
    ['Path prefix', auth.path_prefix ? code(auth.path_prefix) : none('none')],
    ['Authorization headers copied', headerList(auth.allowed_authorization_headers)],
    ['Request headers sent', headerList(auth.allowed_request_headers)],
  ])}`;
}

function rateLimitSection(rl: DiagRateLimit | undefined): string {
  if (!rl)
    return `<h2 id="ratelimit">Rate-limit service</h2><p>${none('No RateLimitService: requests are not rate limited.')}</p>`;
  const failure = rl.failure_mode_deny
    ? '<span class="warn">deny: answered 500 when the rate-limit service fails</span>'
    : 'allow: requests pass when the rate-limit service fails';
  return `<h2 id="ratelimit">Rate-limit service</h2>${definitions([
    ['Record', escapeHtml(rl.name)],
    ['Service', `${escapeHtml(rl.service)} (${escapeHtml(rl.target)})`],
    ['Domain', code(rl.domain)],
    ['Failure mode', failure],
    ['Timeout', `${escapeHtml(rl.timeout_ms)} ms`],
  ])}`;
}

function configSection(config: DiagSnapshot['config']): string {
  const errors = config.errors.length
    ? `<div class="config-errors" role="alert"><h3>The last reload was rejected; the configuration loaded at ${escapeHtml(
        config.loadedAt,
      )} is still serving.</h3><ul class="plain">${config.errors.map((e) => `<li>${escapeHtml(e)}</li>`).join('')}</ul></div>`
    : '<p class="ok">No configuration errors.</p>';
  const sources = config.sources.length
    ? `<ul class="plain">${config.sources.map((s) => `<li>${code(s)}</li>`).join('')}</ul>`
    : none('none');
  return `<h2 id="config">Configuration</h2>${errors}${definitions([
    ['Folder', code(config.dir)],
    ['Loaded at', escapeHtml(config.loadedAt)],
    ['Last reload', config.lastReloadAt ? escapeHtml(config.lastReloadAt) : none('none since start')],
    ['Files', sources],
  ])}`;
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
  const c = s.counters;
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
<div class="counters">
<div>${escapeHtml(c.requests)}<span>requests</span></div>
<div>${escapeHtml(c.clientErrors)}<span>4xx answers</span></div>
<div${c.errors > 0 ? ' class="bad"' : ''}>${escapeHtml(c.errors)}<span>5xx answers</span></div>
</div>
</header>
<main>
${configSection(s.config)}
`;
  yield* routesSection(s.routes, cellsOf);
  yield `
${authSection(s.auth)}
${rateLimitSection(s.rateLimit)}
${certificatesSection(s.certificates, new Date())}
</main>
</body>
</html>
`;
}
