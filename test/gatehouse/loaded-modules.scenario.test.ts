/**
 * @module test/gatehouse/loaded-modules
 * What a running Gatehouse loads of its dependencies: undici only when a
 * Mapping forwards over HTTP, re2js only when a Mapping has a regular
 * expression, raw-body only once a request has a body to read. Each runs in a process of its own (this one has loaded
 * everything), from the built dist/ as an embedding app would.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { assertBuilt, REPO_ROOT } from '../support/process';

/** Starts a Gatehouse on `configDir`, asks it one request, and says which of the packages it loaded. */
const PROBE = `
const { createGatehouse, telemetry } = require(${JSON.stringify(join(REPO_ROOT, 'dist', 'index.js'))});
(async () => {
  const gatehouse = await createGatehouse({ configDir: process.argv[1], host: '127.0.0.1', port: 0, grpcPort: false, watch: false,
    bookingStore: 'memory', drainDelayMs: 0, logger: telemetry.createLogger({ level: 'silent' }) });
  const { url } = await gatehouse.start();
  const status = (await fetch(url + '/v1/messages/1', { headers: { authorization: 'Basic ' + Buffer.from('alice:wonderland').toString('base64') } })).status;
  const loaded = (name) => Object.keys(require.cache).some((path) => path.includes('/node_modules/' + name + '/'));
  console.log(JSON.stringify({ status, undici: loaded('undici'), re2js: loaded('re2js'), rawBody: loaded('raw-body') }));
  await gatehouse.stop();
})().catch((err) => { console.error(err); process.exit(1); });
`;

async function probe(
  configDir: string,
): Promise<{ status: number; undici: boolean; re2js: boolean; rawBody: boolean }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', PROBE, configDir], { cwd: REPO_ROOT });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

const mapping = (name: string, rest: string) =>
  `---\napiVersion: gateway/v1\nkind: Mapping\nname: ${name}\nprefix: /${name}/\n${rest}\n`;

describe('gatehouse: the dependencies a running Gatehouse loads', function () {
  this.timeout(60_000);
  let config: TempConfig | undefined;

  before(() => assertBuilt());
  afterEach(() => config?.remove());

  it('loads neither undici nor re2js on the demo config, which forwards nothing over HTTP and has no regular expression, nor raw-body for a request without a body', async () => {
    config = copyConfig();
    assert.deepEqual(await probe(config.dir), { status: 200, undici: false, re2js: false, rawBody: false });
  });

  it('loads undici for a Mapping to an HTTP upstream, and re2js for a Mapping with a regular expression', async () => {
    config = copyConfig();
    config.write('remote.yaml', mapping('remote', 'service: 127.0.0.1:9'));
    assert.deepEqual(await probe(config.dir), { status: 200, undici: true, re2js: false, rawBody: false });
    config.write(
      'remote.yaml',
      mapping(
        'pattern',
        "regex_rewrite: {pattern: '^/pattern/(.*)$', substitution: '/v1/\\\\1'}\nservice: 127.0.0.1:9",
      ),
    );
    assert.deepEqual(await probe(config.dir), { status: 200, undici: true, re2js: true, rawBody: false });
  });
});
