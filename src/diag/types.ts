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

/** An entry of the config folder: what it was read as, and what it holds or why it was ignored. */
export interface DiagFile {
  /** Relative to the config folder. */
  name: string;
  /** `records`, `Emissary resources`, `limits`, `users`, `bookings catalogue`, `ignored`. */
  readAs: string;
  detail: string;
}

/** What the config folder holds in all (see `gatehouse check`). */
export interface DiagCounts {
  mappings: number;
  authServices: number;
  rateLimitServices: number;
  /** `Module` records: the gateway-wide settings. */
  modules: number;
  /** Emissary resources read (each becomes a record, or says why not). */
  emissaryResources: number;
  /** Records left out: they name another gateway's `ambassador_id`. */
  otherAmbassadorId: number;
  /** Hosts, TLSContexts and Secrets; absent when the folder has none. */
  tls?: { hosts: number; tlsContexts: number; secrets: number };
  /** Absent when the folder has no users file. */
  users?: number;
  /** Absent when limits are not read; `files` 0 when the folder has none. */
  limits?: { files: number; domains: number; rules: number };
  /** Absent when the folder has no booking data. */
  bookings?: { hotels: number; cars: number; hotelBookings: number; carBookings: number };
  /** Entries of the folder read as nothing. */
  ignored: number;
}

export interface DiagConfig {
  /** The config folder. */
  dir: string;
  /** The files the serving configuration was read from. */
  sources: string[];
  /** Every entry of the folder as the serving configuration was read (a few hundred at most). */
  files?: DiagFile[];
  /** Entries left out of `files`. */
  moreFiles?: number;
  /** What the folder holds in all. */
  counts?: DiagCounts;
  /** What a file was read as that its name or content says otherwise (a limits document in a records file). */
  warnings?: string[];
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

/** How a dependency is: serving, serving with something to look at, failing, or not used. */
export type DependencyState = 'ok' | 'warn' | 'down' | 'off';

/** A dependency of the gateway and how it is now. */
export interface DiagDependency {
  /** `Redis`, `Database`, `Rate-limit service`, `Auth service`, `Upstream cluster_x`. */
  name: string;
  state: DependencyState;
  /** What it is and how it is: `redis://127.0.0.1:6379: answers PING`, `1 of 2 endpoints ejected: 10.0.0.1:80`. */
  detail: string;
}

/** Requests and errors of each of the last minutes, the oldest first; the last is the minute under way. */
export interface DiagTrafficSeries {
  requests: number[];
  /** Answers with a 4xx status. */
  clientErrors: number[];
  /** Answers with a 5xx status. */
  errors: number[];
}

/** The traffic of the last minutes: of every route together, and of the busiest routes. */
export interface DiagTraffic {
  /** The start of the first minute (ISO 8601). */
  since: string;
  minutes: number;
  total: DiagTrafficSeries;
  /** The busiest routes of the window, busiest first, each with its series. */
  routes: (DiagTrafficSeries & { name: string })[];
}

/** Everything the diagnostic page shows. */
export interface DiagSnapshot {
  version: string;
  /** ISO 8601. */
  startedAt: string;
  uptimeSeconds: number;
  /** How Redis, the database, the services and the upstream clusters are, when the gateway says. */
  dependencies?: DiagDependency[];
  traffic?: DiagTraffic;
  /** In match order. */
  routes: DiagRoute[];
  auth?: DiagAuth;
  rateLimit?: DiagRateLimit;
  config: DiagConfig;
  counters: { requests: number; errors: number; clientErrors: number };
  /** The certificates in service, when there are any. */
  certificates?: DiagCertificate[];
}
