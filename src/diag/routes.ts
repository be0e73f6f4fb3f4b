/**
 * @module diag/routes
 * The route table of the diagnostic page, a row a route in match order,
 * laid out to fit a 1280-pixel screen: what a route matches in one
 * column, its service with where it runs, its labels a group a line.
 */
import { groupLabels, readLabel, upstreamSummary, type LabelSpecifier } from '../gateway';
import { code, escapeHtml, none } from './html';
import type { DiagRoute } from './types';

/** A label in a few words: its key (when it is not the header's name), the header, and whether it may be absent. */
function labelText(label: LabelSpecifier): string {
  const source = readLabel(label);
  switch (source.kind) {
    case 'header': {
      const from = source.key.toLowerCase() === source.header.toLowerCase() ? '' : `${code(source.key)} ← `;
      const omit = source.omit ? ' <span class="none nowrap">if present</span>' : '';
      return `<span class="label">${from}${code(source.header)}${omit}</span>`;
    }
    case 'literal':
      return `<span class="label">${code(source.key === 'generic_key' ? `"${source.value}"` : `${source.key}="${source.value}"`)}</span>`;
    default:
      return `<span class="label">${code(source.kind)}</span>`;
  }
}

/** The domain of a RateLimitService that names none: its labels are shown bare, those of any other domain after it. */
const DEFAULT_DOMAIN = 'gateway';

function labelsCell(labels: DiagRoute['labels']): string {
  if (!labels) return none('none');
  const items: string[] = [];
  for (const [domain, groups] of Object.entries(labels)) {
    const named = domain === DEFAULT_DOMAIN ? '' : `${none(`${domain}:`)} `;
    for (const group of groups)
      items.push(
        `<li title="domain ${escapeHtml(domain)}">${named}${groupLabels(group).map(labelText).join(', ')}</li>`,
      );
  }
  return `<ul class="plain">${items.join('')}</ul>`;
}

/** What a route matches besides its path: its method, host, headers, query arguments and precedence. */
function matchCell(route: DiagRoute): string {
  const condition = (name: string, value: string | true, pattern: boolean) =>
    value === true
      ? `${code(name)} ${none('any value')}`
      : `${code(`${name}: ${value}`)}${pattern ? ` ${none('pattern')}` : ''}`;
  const items = [
    route.method && `${code(route.method)}${route.method_regex ? ` ${none('pattern')}` : ''}`,
    route.hostname && `${none('host')} ${code(route.hostname)}${route.host_regex ? ` ${none('pattern')}` : ''}`,
    ...Object.entries(route.headers ?? {}).map(([name, c]) => condition(name, c, false)),
    ...Object.entries(route.regex_headers ?? {}).map(([name, c]) => condition(name, c, true)),
    ...Object.entries(route.query_parameters ?? {}).map(([name, c]) => condition(`?${name}`, c, false)),
    ...Object.entries(route.regex_query_parameters ?? {}).map(([name, c]) => condition(`?${name}`, c, true)),
    route.precedence !== 0 && none(`precedence ${route.precedence}`),
  ].filter((item): item is string => typeof item === 'string' && item !== '');
  return items.length > 0 ? `<ul class="plain">${items.map((i) => `<li>${i}</li>`).join('')}</ul>` : none('any');
}

/** Where a route sends a request: its service, where it runs (its Host, upgrades and share of its match), or its redirect. */
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
  const extras = [
    route.host_rewrite && `${none('Host:')} ${code(route.host_rewrite)}`,
    route.allow_upgrade && `${none('upgrades:')} ${route.allow_upgrade.map(code).join(' ')}`,
    route.share !== undefined &&
      none(`${route.weight === undefined ? '' : `weight ${route.weight}: `}${route.share}% of its match`),
    route.upstream && `${none('upstream:')} ${code(upstreamSummary(route.upstream))}`,
  ].filter((item): item is string => typeof item === 'string' && item !== '');
  return `${service} <span class="none nowrap">${escapeHtml(route.target)}</span>${extras.map((e) => `<br>${e}`).join('')}`;
}

/** The path a route forwards: its rewrite, said in words when it keeps the path; or its regex_rewrite. */
function rewriteCell(route: DiagRoute): string {
  if (route.redirect !== undefined) return none('-');
  if (route.regex_rewrite) return `${code(route.regex_rewrite.pattern)} → ${code(route.regex_rewrite.substitution)}`;
  // `""` would read as an empty path: it forwards the path as it came.
  return route.rewrite === '' ? `<span class="none" title='rewrite: ""'>unchanged</span>` : code(route.rewrite);
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
  const auth = route.bypass_auth
    ? '<span class="warn nowrap">bypassed</span>'
    : '<span class="ok nowrap">required</span>';
  const cells = [
    `<td class="name">${escapeHtml(route.name)}</td>`,
    `<td class="mono">${prefixCell(route)}</td>`,
    `<td>${matchCell(route)}</td>`,
    `<td>${rewriteCell(route)}</td>`,
    `<td class="service">${serviceCell(route)}</td>`,
    `<td>${auth}</td>`,
    `<td class="labels">${labelsCell(route.labels)}</td>`,
    `<td class="num">${escapeHtml(route.requests)}</td>`,
    `<td class="num">${escapeHtml(route.clientErrors)}</td>`,
    `<td class="num${route.errors > 0 ? ' bad' : ''}">${escapeHtml(route.errors)}</td>`,
  ];
  return `${cells.join('')}</tr>`;
}

/** The columns and their share of the table's width: fixed, so that the table is never wider than the page. */
const COLUMNS: [string, number][] = [
  ['#', 3],
  ['Name', 11],
  ['Prefix', 12],
  ['Match', 6],
  ['Rewrite', 8],
  ['Service', 15],
  ['Auth', 8],
  ['Labels', 21],
  ['Requests', 8],
  ['4xx', 4],
  ['5xx', 4],
];

/** The style of the columns' widths, for the page's stylesheet. */
export const COLUMN_STYLE = [...new Set(COLUMNS.map(([, share]) => share))]
  .map((share) => `col.w${share} { width: ${share}%; }`)
  .join(' ');

/** The routes section, a piece a row; `cellsOf` gives a route's {@link routeCells}. */
export function* routesSection(
  routes: readonly DiagRoute[],
  cellsOf: (route: DiagRoute) => string,
): Generator<string, void, void> {
  if (routes.length === 0) {
    yield `<h2 id="routes">Routes</h2><p>${none('No mappings: every path is answered 404.')}</p>`;
    return;
  }
  yield `<h2 id="routes">Routes</h2>
<div class="scroll"><table class="routes">
<caption class="meta">In match order: the first route that matches a request serves it.</caption>
<colgroup>${COLUMNS.map(([, share]) => `<col class="w${share}">`).join('')}</colgroup>
<thead><tr>${COLUMNS.map(([h]) => `<th scope="col">${h}</th>`).join('')}</tr></thead>
<tbody>`;
  for (let i = 0; i < routes.length; i++)
    yield `${i === 0 ? '' : '\n'}<tr><td class="num">${i + 1}</td>${cellsOf(routes[i])}`;
  yield `</tbody>
</table></div>`;
}
