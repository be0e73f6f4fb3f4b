import { parseConfigFiles } from './src/gateway';
import { buildRuntimeSteps } from './src/gateway/runtime';
import { createAuthStage } from './src/gateway/auth-stage';
import { createRateLimitStage } from './src/gateway/ratelimit-stage';
import { createApiModule } from './src/api';

const N = 30000;
function doc(i: number): string {
  const base = `apiVersion: gateway/v1, kind: Mapping, name: m${i}`;
  if (i % 10 === 0) return `{${base}, prefix: /u${i}/, service: 'http://127.0.0.1:${1024 + ((i / 10) % 100)}', retry_policy: {retry_on: 5xx, num_retries: 2}, circuit_breakers: [{max_connections: 64}], bypass_auth: true}`;
  if (i % 100 === 1) return `{${base}, prefix: '/r${i}/[a-z]+/.*', prefix_regex: true, service: api, bypass_auth: true}`;
  if (i % 10 === 2) return `{${base}, prefix: /c${i}/, service: api, rewrite: /v1/, weight: 10, bypass_auth: true}`;
  if (i % 10 === 3) return `{${base}, prefix: /c${i - 1}/, service: api, rewrite: /v2/, bypass_auth: true}`;
  if (i % 10 === 4) return `{${base}, prefix: /o${i}/, service: 'https://example.org', host_redirect: true, bypass_auth: true}`;
  if (i % 100 === 5) return `{${base}, prefix: /g${i}/, service: api, rewrite: /v1/}`;
  return `{${base}, prefix: /p${i}/, service: api, rewrite: /v1/, bypass_auth: true}`;
}
const text = Array.from({ length: N }, (_, i) => doc(i)).join('\n---\n') + '\n';
console.log('bytes', text.length);
let t = performance.now();
const r = parseConfigFiles([{ file: 'many.yaml', text }]);
console.log('parse', Math.round(performance.now() - t));
if (!r.ok) { console.log(r.problems.slice(0, 3)); process.exit(1); }
const modules = new Map([['api', createApiModule({ proxy: false })]]);
const steps = buildRuntimeSteps(r.config, modules as never, { auth: createAuthStage, rateLimit: createRateLimitStage });
t = performance.now();
let longest = 0, count = 0, last = performance.now();
for (;;) {
  const s = steps.next();
  const now = performance.now();
  if (now - last > longest) longest = now - last;
  if (now - last > 6) console.log("long step", count, (now - last).toFixed(1));
  last = now; count++;
  if (s.done) { console.log('routes', s.value.table.routes.length, 'clusters', s.value.clusters.all().length); break; }
}
console.log('build total', Math.round(performance.now() - t), 'ms; steps', count, 'longest step', longest.toFixed(2), 'ms');
