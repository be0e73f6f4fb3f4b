/**
 * @module diag/types
 * What the diagnostic page shows, as plain data (also its JSON form): the
 * routes, the auth and rate-limit services, the configuration's state and
 * the counters.
 */
import type { HeaderCondition, MappingRecord, MatchDescription, UpstreamSettings } from '../gateway';

/** Whether a service is one of the process's own modules or an address. */
export type ServiceTarget = 'in-process' | 'remote';

/** A route, as configured, with what it has served; its patterns, query conditions, weight and redirect as {@link MatchDescription}. */
export interface DiagRoute extends MatchDescription {
  name: string;
  prefix: string;
  rewrite: string;
  service: string;
  target: ServiceTarget | 'redirect';
  bypass_auth: boolean;
  precedence: number;
  method?: string;
  /** Headers a request must carry: an exact value, or `true` for any. */
  headers?: Record<string, HeaderCondition>;
  /** The hosts it applies to (`hostname`, or `host`), when not any. */
  hostname?: string;
  /** `false` when the prefix matches in any case. */
  case_sensitive?: false;
  /** The Host a remote upstream is sent instead of its own. */
  host_rewrite?: string;
  /** The protocols a request may switch its connection to (`allow_upgrade`), when any. */
  allow_upgrade?: string[];
  /** `true` when paths with escapes that are not UTF-8 or are encoded twice reach its backend. */
  allow_unsafe_path_escapes?: true;
  labels?: MappingRecord['labels'];
  /** The upstream fields it gives (retry_policy, circuit_breakers, load_balancer...), as written. */
  upstream?: UpstreamSettings;
  /** Whether the mapping has a CORS policy of its own. */
  cors?: boolean;
  requests: number;
  /** Answers with a 5xx status. */
  errors: number;
  /** Answers with a 4xx status. */
  clientErrors: number;
}

export interface DiagAuth {
  name: string;
  service: string;
  target: ServiceTarget;
  failure_mode_allow: boolean;
  status_on_error: number;
  timeout_ms: number;
  path_prefix: string;
  allowed_authorization_headers: string[];
  allowed_request_headers: string[];
}

export interface DiagRateLimit {
  name: string;
  service: string;
  target: ServiceTarget;
  domain: string;
  failure_mode_deny: boolean;
  timeout_ms: number;
}

export interface DiagConfig {
  /** The config folder. */
  dir: string;
  /** The files the serving configuration was read from. */
  sources: string[];
  /** When the serving configuration was loaded (ISO 8601). */
  loadedAt: string;
  /** The problems of the last rejected reload; empty when the last one was applied. */
  errors: string[];
  /** When a reload was last tried, applied or not (ISO 8601). */
  lastReloadAt?: string;
}

/** A certificate in service: where it comes from, what it does and for whom, what it says of itself. Never its key. */
export interface DiagCertificate {
  /** `Secret default/shop-cert`, or the path of its file. */
  source: string;
  /** `serves`, `presents` or `verifies`. */
  role: string;
  usedBy: readonly string[];
  subject: string;
  issuer: string;
  names: readonly string[];
  /** ISO 8601. */
  validFrom: string;
  validTo: string;
}

/** Everything the diagnostic page shows. */
export interface DiagSnapshot {
  version: string;
  /** ISO 8601. */
  startedAt: string;
  uptimeSeconds: number;
  /** In match order. */
  routes: DiagRoute[];
  auth?: DiagAuth;
  rateLimit?: DiagRateLimit;
  config: DiagConfig;
  counters: { requests: number; errors: number; clientErrors: number };
  /** The certificates in service, when there are any. */
  certificates?: DiagCertificate[];
}
