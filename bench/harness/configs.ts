/**
 * @module bench/harness/configs
 * The files the deployments read: a Gatehouse config folder made from the
 * demo's (config/) with the api Mapping of /v1 changed for the row and the
 * per-user limit raised, and the nginx and HAProxy configurations.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse, stringify } from 'yaml';

export const DEMO_CONFIG = join(__dirname, '..', '..', 'config');

/** How a row changes the demo's Mapping of /v1 (bypass_auth, to the api module). */
export type GatehouseVariant =
  /** as the demo has it: no auth, no rate limit */
  | { kind: 'open' }
  /** through the auth service */
  | { kind: 'auth' }
  /** through the auth service, and a per-user descriptor to the rate-limit service */
  | { kind: 'auth-limit' }
  /** to a remote upstream, no auth */
  | { kind: 'proxy'; upstream: string };

type Records = Record<string, unknown>[];

function withApiMapping(records: Records, variant: GatehouseVariant): Records {
  return records.map((record) => {
    if (record.kind !== 'Mapping' || record.name !== 'api-v1') return record;
    const mapping = { ...record };
    if (variant.kind === 'auth' || variant.kind === 'auth-limit') delete mapping.bypass_auth;
    if (variant.kind === 'auth-limit')
      mapping.labels = { gateway: [{ request_label_group: [{ user: { header: 'x-travel-user' } }] }] };
    if (variant.kind === 'proxy') mapping.service = variant.upstream;
    return mapping;
  });
}

/**
 * Writes into `dir` the demo's config folder with the row's Mapping of /v1
 * and `perUserLimit` requests a minute for each user (the demo's 60).
 */
export function writeGatehouseConfig(dir: string, variant: GatehouseVariant, perUserLimit: number): string {
  mkdirSync(dir, { recursive: true });
  for (const file of ['users.htpasswd', 'bookings.yaml']) copyFileSync(join(DEMO_CONFIG, file), join(dir, file));
  const services = parseAllDocuments(readFileSync(join(DEMO_CONFIG, 'services.yaml'), 'utf8')).map(
    (doc) => doc.toJS() as { metadata?: { annotations?: Record<string, string> } },
  );
  for (const service of services) {
    const annotations = service.metadata?.annotations;
    const records = annotations?.['gatehouse.io/config'];
    if (records === undefined) continue;
    const parsed = parseAllDocuments(records).map((doc) => doc.toJS() as Record<string, unknown> | null);
    const edited = withApiMapping(
      parsed.filter((r): r is Record<string, unknown> => r !== null),
      variant,
    );
    annotations!['gatehouse.io/config'] = edited.map((r) => stringify(r)).join('---\n');
  }
  writeFileSync(join(dir, 'services.yaml'), services.map((s) => stringify(s)).join('---\n'));
  const limits = parse(readFileSync(join(DEMO_CONFIG, 'ratelimit.yaml'), 'utf8')) as {
    descriptors: { key: string; rate_limit: { requests_per_unit: number } }[];
  };
  const perUser = limits.descriptors.find((d) => d.key === 'user');
  if (!perUser) throw new Error('config/ratelimit.yaml has no per-user limit (key: user) to raise');
  perUser.rate_limit.requests_per_unit = perUserLimit;
  writeFileSync(join(dir, 'ratelimit.yaml'), stringify(limits));
  return dir;
}

/** The parts of an nginx configuration every nginx row shares: one worker (one CPU), files in `dir`. */
function nginxMain(dir: string, accessLog: string, server: string): string {
  const temp = (name: string) => `${name}_temp_path ${join(dir, `${name}-temp`)};`;
  return `worker_processes 1;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'nginx-error.log')} warn;
events { worker_connections 4096; }
http {
  access_log ${accessLog};
  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}
${server}
}
`;
}

/** A hop to an upstream group over kept-alive connections, as nginx's documentation sets it up. */
const KEEPALIVE_HOP = 'proxy_http_version 1.1;\n      proxy_set_header Connection "";';

/**
 * The seed's deployment: nginx asks the auth service (`auth_request`) about
 * every request, then passes it, with the user the auth service named, to
 * the api.
 */
export function writeNginxAuthConfig(
  dir: string,
  accessLog: string,
  ports: { nginx: number; auth: number; api: number },
): string {
  mkdirSync(dir, { recursive: true });
  const server = `  upstream auth { server 127.0.0.1:${ports.auth}; keepalive 32; }
  upstream api { server 127.0.0.1:${ports.api}; keepalive 32; }
  server {
    listen 127.0.0.1:${ports.nginx};
    location / {
      auth_request /_auth;
      auth_request_set $travel_user $upstream_http_x_travel_user;
      proxy_set_header X-Travel-User $travel_user;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      ${KEEPALIVE_HOP}
      proxy_pass http://api;
    }
    location = /_auth {
      internal;
      proxy_pass http://auth$request_uri;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      ${KEEPALIVE_HOP}
    }
  }`;
  const file = join(dir, 'nginx.conf');
  writeFileSync(file, nginxMain(dir, accessLog, server));
  return file;
}

/** nginx as a reverse proxy to one upstream. */
export function writeNginxProxyConfig(
  dir: string,
  accessLog: string,
  ports: { nginx: number; upstream: number },
): string {
  mkdirSync(dir, { recursive: true });
  const server = `  upstream backend { server 127.0.0.1:${ports.upstream}; keepalive 32; }
  server {
    listen 127.0.0.1:${ports.nginx};
    location / {
      ${KEEPALIVE_HOP}
      proxy_pass http://backend;
    }
  }`;
  const file = join(dir, 'nginx.conf');
  writeFileSync(file, nginxMain(dir, accessLog, server));
  return file;
}

/** HAProxy as a reverse proxy to one upstream, one thread, an httplog line per request on its standard output. */
export function writeHaproxyConfig(dir: string, ports: { haproxy: number; upstream: number }): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(
    file,
    `global
  nbthread 1
  maxconn 4096
  log stdout format raw local0

defaults
  mode http
  log global
  option httplog
  timeout connect 5s
  timeout client 60s
  timeout server 60s

frontend bench
  bind 127.0.0.1:${ports.haproxy}
  default_backend upstream

backend upstream
  server upstream 127.0.0.1:${ports.upstream}
`,
  );
  return file;
}
