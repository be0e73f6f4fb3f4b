import { readFileSync } from 'node:fs';
import { copyConfig, startGatehouse } from './test/gatehouse/support/running';
import { loadFolder } from './src/gatehouse';
import { fileSystemSource } from './src/files';
const src = readFileSync('test/gatehouse/reload-stall.test.ts', 'utf8');
const MAPPINGS = 30000;
const body = src.slice(src.indexOf('function manyMappings'), src.indexOf('/** The longest the event loop'));
const manyMappings = new Function('MAPPINGS', `${body.replace(': string', '').replace('const docs: string[]', 'const docs')}; return manyMappings;`)(MAPPINGS);
const oldMappings = () => Array.from({ length: MAPPINGS }, (_, i) => `{apiVersion: gateway/v1, kind: Mapping, name: m${i}, prefix: /p${i}/, service: api, rewrite: /v1/, bypass_auth: true}`).join('\n---\n') + '\n';
async function gaps<T>(what: string, f: () => Promise<T>): Promise<T> {
  const found: number[] = [];
  let last = performance.now(); let on = true;
  const tick = () => { const now = performance.now(); found.push(now - last); last = now; if (on) setImmediate(tick); };
  setImmediate(tick);
  const t0 = performance.now();
  const r = await f();
  on = false;
  found.sort((a, b) => b - a);
  console.log(`${what}: ${Math.round(performance.now() - t0)} ms, longest gaps ${found.slice(0, 5).map((x) => x.toFixed(0)).join(' ')}`);
  return r;
}
(async () => {
  const config = copyConfig();
  const running = await startGatehouse({ configDir: config.dir });
  for (const [name, text] of [['old', oldMappings()], ['new', manyMappings()]] as const) {
    config.write('many.yaml', text);
    for (let k = 0; k < 2; k++) {
      await gaps(`${name} idle`, () => new Promise((r) => setTimeout(r, 1500)));
      const folder = await gaps(`${name} loadFolder`, () => loadFolder(config.dir, { records: true, limits: true, users: true, bookings: true }, { source: fileSystemSource, fileSizeLimit: 8 << 20 }));
      const prepared = await gaps(`${name} prepare`, () => running.gatehouse.gateway.prepare(folder.config!));
      await prepared.discard();
    }
  }
  await running.stop();
  config.remove();
})();
