/**
 * @module gatehouse/status
 * How a Gatehouse's dependencies are, for the top of its diag page: Redis,
 * the bookings database, the rate-limit and auth services its records name,
 * and the upstream clusters with endpoints ejected. Redis and the database
 * are asked together, each within the readiness timeout, so that a page
 * shows them both down when both are.
 */
import type { DiagDependency } from '../diag';
import type { AuthService } from '../auth';
import type { Gateway, GatewayConfig } from '../gateway';
import type { RateLimitService } from '../ratelimit';
import { counted } from './folder';
import type { Metrics } from '../telemetry';
import type { ReadinessCheck } from './readiness';

/** A dependency asked by a readiness check: what it is, in words, and the check. */
export interface CheckedDependency {
  /** `redis://127.0.0.1:6379`, `PGlite in data`. */
  readonly where: string;
  readonly ready: ReadinessCheck;
}

/** What the status is read from. */
export interface StatusSources {
  /** The configuration served now. */
  config(): GatewayConfig;
  /** The built-in modules in service, by name. */
  modules: { get(name: string): unknown };
  gateway: Pick<Gateway, 'upstreams'>;
  /** The rate-limit counters' Redis, when they are kept there. */
  redis?: CheckedDependency;
  /** The bookings database, when bookings are kept in one. */
  database?: CheckedDependency;
  /** Where bookings are kept when there is no database: `memory`. */
  bookings?: string;
  metrics: Pick<Metrics, 'authDecisions' | 'rateLimitDecisions'>;
}

/** Most clusters listed apart: those with endpoints ejected. */
const MAX_CLUSTERS = 20;

async function checked(name: string, dependency: CheckedDependency | undefined, off: string): Promise<DiagDependency> {
  if (dependency === undefined) return { name, state: 'off', detail: off };
  try {
    await dependency.ready();
    return { name, state: 'ok', detail: `${dependency.where}: answers` };
  } catch (err) {
    return { name, state: 'down', detail: `${dependency.where}: ${(err as Error)?.message ?? String(err)}` };
  }
}

/** How many decisions of a stage failed (the service unreachable, late, or in error) since the start. */
async function failures(counter: Metrics['authDecisions']): Promise<number> {
  const { values } = await counter.get();
  return values.find((v) => v.labels.result === 'error')?.value ?? 0;
}

const storeName = (kind: string) => (kind === 'redis' ? 'Redis' : kind);

function isRateLimitService(module: unknown): module is RateLimitService {
  return typeof (module as RateLimitService | undefined)?.stats === 'function' && 'bounds' in (module as object);
}

function isAuthService(module: unknown): module is AuthService {
  return typeof (module as AuthService | undefined)?.useUsers === 'function';
}

async function rateLimitStatus(s: StatusSources, config: GatewayConfig): Promise<DiagDependency> {
  const name = 'Rate-limit service';
  const record = config.rateLimitService;
  if (record === undefined) return { name, state: 'off', detail: 'no RateLimitService: requests are not limited' };
  const module = s.modules.get(record.service);
  if (isRateLimitService(module)) {
    const stats = module.stats();
    if (stats.rules === 0)
      return { name, state: 'warn', detail: 'built-in, with no limits: every request is answered OK' };
    const errors = stats.storeErrors > 0 ? `; ${counted(stats.storeErrors, 'store error')}` : '';
    return {
      name,
      state: stats.storeErrors > 0 ? 'warn' : 'ok',
      detail: `built-in: ${counted(stats.rules, 'limit')} in ${counted(stats.domains.length, 'domain')}, counters in ${storeName(stats.store)}${errors}`,
    };
  }
  const failed = await failures(s.metrics.rateLimitDecisions);
  return {
    name,
    state: failed > 0 ? 'warn' : 'ok',
    detail: `${record.service} (domain ${record.domain})${failed > 0 ? `: ${counted(failed, 'call')} failed since the start` : ''}`,
  };
}

async function authStatus(s: StatusSources, config: GatewayConfig): Promise<DiagDependency> {
  const name = 'Auth service';
  const record = config.authService;
  if (record === undefined) return { name, state: 'off', detail: 'no AuthService: requests are not authenticated' };
  const module = s.modules.get(record.auth_service);
  if (isAuthService(module)) {
    const users = module.stats().users;
    return {
      name,
      state: users > 0 ? 'ok' : 'warn',
      detail: `built-in: ${counted(users, 'user')}${users === 0 ? ': every protected request is refused' : ''}`,
    };
  }
  const failed = await failures(s.metrics.authDecisions);
  return {
    name,
    state: failed > 0 ? 'warn' : 'ok',
    detail: `${record.auth_service}${failed > 0 ? `: ${counted(failed, 'check')} failed since the start` : ''}`,
  };
}

/** The upstream clusters: one line for all when none lost an endpoint, else one a cluster that did. */
function upstreamStatus(s: StatusSources): DiagDependency[] {
  const clusters = s.gateway.upstreams();
  const ejecting = clusters.filter((c) => c.ejected.length > 0);
  if (ejecting.length === 0) {
    return [
      clusters.length === 0
        ? { name: 'Upstream clusters', state: 'off', detail: 'every route is served in process' }
        : {
            name: 'Upstream clusters',
            state: 'ok',
            detail: `${counted(clusters.length, 'cluster')}, no endpoint ejected`,
          },
    ];
  }
  const lines: DiagDependency[] = ejecting.slice(0, MAX_CLUSTERS).map((c) => ({
    name: c.cluster,
    state: c.ejected.length >= c.endpoints ? 'down' : 'warn',
    detail: `upstream cluster: ${c.ejected.length} of ${counted(c.endpoints, 'endpoint')} ejected for failing: ${c.ejected.join(', ')}`,
  }));
  if (ejecting.length > MAX_CLUSTERS)
    lines.push({ name: 'Upstream clusters', state: 'warn', detail: `and ${ejecting.length - MAX_CLUSTERS} more` });
  return lines;
}

/** The status of each dependency, asked at once; never rejects. */
export function dependencyStatus(s: StatusSources): () => Promise<DiagDependency[]> {
  return async () => {
    const config = s.config();
    const [redis, database, rateLimit, auth] = await Promise.all([
      checked('Redis', s.redis, 'the rate-limit counters are kept in memory'),
      checked('Database', s.database, `bookings are kept in ${s.bookings ?? 'memory'}`),
      rateLimitStatus(s, config).catch((err: unknown) => failedStatus('Rate-limit service', err)),
      authStatus(s, config).catch((err: unknown) => failedStatus('Auth service', err)),
    ]);
    return [redis, database, rateLimit, auth, ...upstreamStatus(s)];
  };
}

function failedStatus(name: string, err: unknown): DiagDependency {
  return { name, state: 'warn', detail: `cannot be told: ${(err as Error)?.message ?? String(err)}` };
}
