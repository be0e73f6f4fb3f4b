import { PerformanceObserver } from 'node:perf_hooks';
import { copyConfig, startGatehouse } from './test/gatehouse/support/running';
import { readFileSync } from 'node:fs';
const src = readFileSync('test/gatehouse/reload-stall.test.ts', 'utf8');
const MAPPINGS = 30000;
// eslint-disable-next-line no-new-func
const body = src.slice(src.indexOf('function manyMappings'), src.indexOf('/** The longest the event loop'));
const manyMappings = new Function('MAPPINGS', `${body.replace(': string', '').replace('const docs: string[]', 'const docs')}; return manyMappings;`)(MAPPINGS);
const useOld = process.argv[2] === 'old';
const oldMappings = () => Array.from({ length: MAPPINGS }, (_, i) => `{apiVersion: gateway/v1, kind: Mapping, name: m${i}, prefix: /p${i}/, service: api, rewrite: /v1/, bypass_auth: true}`).join('\n---\n') + '\n';
(async () => {
  const config = copyConfig();
  const running = await startGatehouse({ configDir: config.dir });
  config.write('many.yaml', useOld ? oldMappings() : manyMappings());
  const gcs: [number, number, number][] = [];
  const obs = new PerformanceObserver((list) => { for (const e of list.getEntries()) gcs.push([e.startTime, e.duration, (e as any).detail?.kind]); });
  obs.observe({ entryTypes: ['gc'] });
  for (let round = 0; round < 2; round++) {
    const gaps: [number, number][] = [];
    let last = performance.now();
    let on = true;
    const tick = () => { const now = performance.now(); if (now - last > 30) gaps.push([last, now - last]); last = now; if (on) setImmediate(tick); };
    setImmediate(tick);
    const t0 = performance.now();
    const r = await running.gatehouse.reload();
    on = false;
    console.log('reload', JSON.stringify(r).slice(0, 80), Math.round(performance.now() - t0), 'ms');
    for (const [at, len] of gaps) {
      const gc = gcs.filter(([s, d]) => s + d >= at && s <= at + len).map(([s, d, k]) => `gc${k}:${d.toFixed(0)}`).join(',');
      console.log(`  gap at ${Math.round(at - t0)} ms: ${len.toFixed(0)} ms ${gc}`);
    }
  }
  await running.stop();
  config.remove();
})();
