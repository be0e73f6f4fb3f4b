/**
 * @module diag/sections
 * The sections of the diagnostic page besides the routes: the status of
 * each dependency and the traffic (at the top, to read at a glance), the
 * configuration with every file of its folder, and the auth and rate-limit
 * services' settings.
 */
import { trafficChart } from './chart';
import { code, definitions, escapeHtml, none } from './html';
import type { DependencyState, DiagAuth, DiagConfig, DiagCounts, DiagRateLimit, DiagSnapshot } from './types';

const STATE_TEXT: Record<DependencyState, string> = { ok: 'ok', warn: 'look', down: 'down', off: 'not used' };

/** The status of each dependency, then the traffic of the last minutes. */
export function statusSection(s: DiagSnapshot): string {
  if (s.dependencies === undefined && s.traffic === undefined) return '';
  const rows = (s.dependencies ?? []).map(
    (d) =>
      `<tr><th scope="row">${escapeHtml(d.name)}</th><td><span class="state ${d.state}">${STATE_TEXT[d.state]}</span></td><td>${escapeHtml(d.detail)}</td></tr>`,
  );
  const dependencies = rows.length
    ? `<div><h3>Dependencies</h3><table class="dependencies"><tbody>${rows.join('\n')}</tbody></table></div>`
    : '';
  return `<h2 id="status">Status</h2>
<div class="status">${dependencies}<div>${trafficChart(s.traffic)}</div></div>`;
}

/** `1 Mapping`, `2 Mappings`. */
function counted(n: number, one: string, plural = `${one}s`): string {
  return `${n} ${n === 1 ? one : plural}`;
}

/** What the folder holds in all, as `gatehouse check` says it. */
export function countsText(c: DiagCounts): string {
  const parts = [
    counted(c.mappings, 'Mapping'),
    counted(c.authServices, 'AuthService'),
    counted(c.rateLimitServices, 'RateLimitService'),
  ];
  if (c.modules > 0) parts.push(counted(c.modules, 'Module'));
  if (c.tls) {
    const { hosts, tlsContexts, secrets } = c.tls;
    if (hosts > 0) parts.push(counted(hosts, 'Host'));
    if (tlsContexts > 0) parts.push(counted(tlsContexts, 'TLSContext'));
    if (secrets > 0) parts.push(counted(secrets, 'Secret'));
  }
  if (c.emissaryResources > 0) parts.push(`from ${counted(c.emissaryResources, 'Emissary resource')}`);
  if (c.otherAmbassadorId > 0) parts.push(`${counted(c.otherAmbassadorId, 'record')} left to another ambassador_id`);
  parts.push(c.users === undefined ? 'no users file' : counted(c.users, 'user'));
  if (c.limits)
    parts.push(
      c.limits.files === 0
        ? 'no limits (no ratelimit.yaml, no ratelimit/)'
        : `${counted(c.limits.rules, 'limit')} in ${counted(c.limits.domains, 'domain')}`,
    );
  const b = c.bookings;
  parts.push(
    b
      ? `${counted(b.hotels, 'hotel')}, ${counted(b.cars, 'car')}, ${counted(b.hotelBookings + b.carBookings, 'booking')}`
      : 'no bookings catalogue',
  );
  if (c.ignored > 0) parts.push(`${counted(c.ignored, 'entry', 'entries')} ignored`);
  return parts.join(', ');
}

/** Every entry of the folder, what it was read as and what it holds; the files read when the entries are not known. */
function filesTable(config: DiagConfig): string {
  if (config.files === undefined) {
    return config.sources.length
      ? `<ul class="plain">${config.sources.map((s) => `<li>${code(s)}</li>`).join('')}</ul>`
      : none('none');
  }
  if (config.files.length === 0) return none('none: the folder is empty');
  const rows = config.files.map(
    (f) =>
      `<tr><td>${code(f.name)}</td><td${f.readAs === 'ignored' ? ' class="none"' : ''}>${escapeHtml(f.readAs)}</td><td>${escapeHtml(f.detail)}</td></tr>`,
  );
  const more = config.moreFiles
    ? `<p>${none(`and ${counted(config.moreFiles, 'more entry', 'more entries')}`)}</p>`
    : '';
  return `<table class="files"><thead><tr><th scope="col">File</th><th scope="col">Read as</th><th scope="col">Holds</th></tr></thead><tbody>${rows.join('')}</tbody></table>${more}${fileWarnings(config)}`;
}

/** What a file was read as that its name or content says otherwise, under the files, as `gatehouse check` says it. */
function fileWarnings(config: DiagConfig): string {
  if (!config.warnings?.length) return '';
  const items = config.warnings.map((w) => `<li><span class="warn">warning:</span> ${escapeHtml(w)}</li>`);
  return `<ul class="plain file-warnings">${items.join('')}</ul>`;
}

export function configSection(config: DiagConfig): string {
  const errors = config.errors.length
    ? `<div class="config-errors" role="alert"><h3>The last reload was rejected; the configuration loaded at ${escapeHtml(
        config.loadedAt,
      )} is still serving.</h3><ul class="plain">${config.errors.map((e) => `<li>${escapeHtml(e)}</li>`).join('')}</ul></div>`
    : '<p class="ok">No configuration errors.</p>';
  return `<h2 id="config">Configuration</h2>${errors}${definitions([
    ['Folder', code(config.dir)],
    ['Loaded at', escapeHtml(config.loadedAt)],
    ['Last reload', config.lastReloadAt ? escapeHtml(config.lastReloadAt) : none('none since start')],
    ...(config.counts ? ([['Holds', escapeHtml(countsText(config.counts))]] as [string, string][]) : []),
    ['Files', filesTable(config)],
  ])}`;
}

const headerList = (headers: readonly string[]) => (headers.length ? headers.map(code).join(', ') : none('none'));

export function authSection(auth: DiagAuth | undefined): string {
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

export function rateLimitSection(rl: DiagRateLimit | undefined): string {
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
