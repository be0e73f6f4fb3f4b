/**
 * A config folder of Emissary resources large enough to be checked on the
 * worker thread: the same configuration and the same report as on the event
 * loop, for the ambassador_id the gateway is given, at start and at every
 * reload; and a resource at fault is a refused reload naming its file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { checkFolder } from '../../../src/cli/check';
import { fileSystemSource } from '../../../src/files';
import { OFF_THREAD_BYTES, type FolderWants } from '../../../src/gatehouse';
import { checkTexts, readFolder } from '../../../src/gatehouse/folder';
import { checkOffThread } from '../../../src/gatehouse/folder/off-thread';
import { close } from '../../support/server';
import { recordingUpstream } from '../../support/upstreams';
import { asAnnotation, asResources, type Fixture } from '../../support/emissary';
import { aliasBomb } from '../../support/hostile-yaml';
import { copyConfig, type TempConfig } from '../../support/config-folder';
import { startGatehouse, type Running } from '../../support/gatehouse';

const RECORDS: FolderWants = { records: true, limits: false, users: false, bookings: false };
const READ = { source: fileSystemSource, fileSizeLimit: 8 * 1024 * 1024 };
/** Mappings of each kind: enough for the folder to go to the worker thread. */
const COUNT = 150;

/** `COUNT` Mappings of namespace shop to `upstream`, named and routed by `colour`, served by the gateways of `ids`. */
function mappings(upstream: string, colour: string, ids?: string[]): Fixture[] {
  return Array.from({ length: COUNT }, (_, i) => ({
    kind: 'Mapping',
    name: `${colour}-${i}`,
    namespace: 'shop',
    spec: {
      prefix: `/${colour}/${i}/`,
      service: upstream,
      stats_name: `${colour}_${i}`,
      ...(ids ? { ambassador_id: ids } : {}),
    },
  }));
}

/** The folder's Emissary files: blue's Module and Mappings, a kind: List of Mappings that name no id, a Service's annotation. */
function emissaryFiles(upstream: string): Record<string, string> {
  const module: Fixture = {
    kind: 'Module',
    name: 'ambassador',
    spec: {
      ambassador_id: ['blue'],
      config: { defaults: { httpmapping: { add_request_headers: { 'x-gateway': 'blue' } } } },
    },
  };
  const items = mappings(upstream, 'plain').map((f) => ({
    apiVersion: 'getambassador.io/v2',
    kind: f.kind,
    metadata: { name: f.name, namespace: f.namespace },
    spec: f.spec,
  }));
  return {
    'emissary-blue.yaml': asResources(module, ...mappings(upstream, 'blue', ['blue'])),
    'emissary-list.yaml': stringify({ apiVersion: 'v1', kind: 'List', items }),
    'emissary-service.yaml': asAnnotation('quote', {
      kind: 'Mapping',
      name: 'quote',
      spec: { prefix: '/quote/', service: upstream, ambassador_id: 'blue' },
    }),
  };
}

describe('a config folder of Emissary resources checked on the worker thread', function () {
  let up: Awaited<ReturnType<typeof recordingUpstream>>;
  let upstream: string;
  /** A folder of the Emissary files alone. */
  let dir: string;

  before(async () => {
    up = await recordingUpstream();
    upstream = `127.0.0.1:${up.port}`;
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-emissary-'));
    for (const [name, text] of Object.entries(emissaryFiles(upstream))) writeFileSync(join(dir, name), text);
    const bytes = Object.keys(emissaryFiles(upstream)).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    assert.ok(bytes > OFF_THREAD_BYTES, `${bytes} bytes: too few to go to the worker thread`);
  });
  after(async () => {
    await close(up?.server);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('gives the records, the report and the records left to other gateways that the event loop gives, for each ambassador_id', async () => {
    const served: Record<string, string[]> = {};
    for (const ambassadorId of ['blue', undefined]) {
      const { texts, problems } = await readFolder(dir, RECORDS, { ...READ, ambassadorId });
      assert.deepEqual(problems, []);
      const onLoop = checkTexts(texts);
      const onThread = await checkOffThread(texts);
      assert.deepEqual(onLoop.problems, []);
      assert.deepEqual(onThread, onLoop);
      const id = ambassadorId ?? 'default';
      served[id] = onThread.config!.mappings.map((m) => m.name);
      assert.equal(onThread.emissary!.ambassadorId, id);
      assert.equal(onThread.emissary!.skipped.length, id === 'blue' ? COUNT : COUNT + 2);
      const colours = onThread.emissary!.records.filter((r) => /^(blue|plain)-/.test(r.name));
      assert.equal(colours.length, COUNT);
      assert.ok(colours.every((r) => r.notes.some((n) => n.field === 'spec.stats_name')));
    }
    assert.deepEqual(served.blue, [...Array.from({ length: COUNT }, (_, i) => `blue-${i}`), 'quote']);
    assert.deepEqual(
      served.default,
      Array.from({ length: COUNT }, (_, i) => `plain-${i}`),
    );
  });

  it('is what gatehouse check reports of each resource, and of those left to other gateways', async () => {
    const report = await checkFolder(dir, { ambassadorId: 'blue' });
    assert.ok(report.ok, report.text);
    const lines = report.text.split('\n');
    const at = (heading: string) => lines.indexOf(heading);
    assert.ok(at('Emissary resources (ambassador_id blue):') > 0, report.text);
    assert.ok(
      lines.includes(
        `  ${join(dir, 'emissary-blue.yaml')}: Mapping blue-149 (getambassador.io/v3alpha1, namespace shop) -> Mapping blue-149`,
      ),
      report.text,
    );
    assert.ok(
      lines.includes(
        `  ${join(dir, 'emissary-service.yaml')}: service quote: Mapping quote (getambassador.io/v2) -> Mapping quote`,
      ),
      report.text,
    );
    const skipped = lines
      .slice(at('Skipped: records of another ambassador_id than blue:') + 1)
      .filter((l) => l.startsWith('  '));
    assert.equal(skipped.length, COUNT);
    assert.equal(skipped[0], `  ${join(dir, 'emissary-list.yaml')}: Mapping plain-0 (ambassador_id default)`);
  });

  describe('in a running gateway of ambassador_id blue', () => {
    let config: TempConfig;
    let running: Running;

    before(async () => {
      config = copyConfig();
      for (const [name, text] of Object.entries(emissaryFiles(upstream))) config.write(name, text);
      running = await startGatehouse({ configDir: config.dir, ambassadorId: 'blue' });
    });
    after(async () => {
      await running?.stop();
      config?.remove();
    });

    const status = async (path: string) => (await fetch(`${running.url}${path}`)).status;

    it("serves blue's Mappings, with its Module's defaults, and not those of other gateways", async () => {
      assert.equal(await status('/blue/149/stock'), 200);
      assert.equal(up.received.at(-1)?.url, '/stock');
      assert.equal(up.received.at(-1)?.headers['x-gateway'], 'blue');
      assert.equal(await status('/quote/today'), 200);
      assert.equal(await status('/plain/3/stock'), 404);
      assert.equal(await status('/v1/messages/1'), 404, "the demo's records name no id: they are default's");
    });

    it('applies a new Mapping of blue on a reload, and passes over the faults of a record left to another gateway', async () => {
      config.write(
        'emissary-more.yaml',
        asResources(
          { kind: 'Mapping', name: 'more', spec: { prefix: '/more/', service: upstream, ambassador_id: ['blue'] } },
          {
            kind: 'Mapping',
            name: 'red-only',
            spec: { prefix: '/red/', service: upstream, tls: 'red-tls', ambassador_id: ['red'] },
          },
        ),
      );
      try {
        assert.deepEqual(await running.gatehouse.reload(), { ok: true });
        assert.equal(await status('/more/x'), 200);
        assert.equal(await status('/red/x'), 404);
      } finally {
        config.unlink('emissary-more.yaml');
      }
    });

    const faults: [string, string, RegExp][] = [
      [
        'a resource of blue with a field that is refused',
        asResources({
          kind: 'Mapping',
          name: 'broken',
          spec: { prefix: '/broken/', service: upstream, tls: 'upstream-tls', ambassador_id: ['blue'] },
        }),
        /emissary-broken\.yaml: Mapping broken: spec\.tls: names a TLSContext, which is not read/,
      ],
      [
        "an alias bomb in a Service's getambassador.io/config annotation",
        stringify({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'bomb', annotations: { 'getambassador.io/config': aliasBomb() } },
        }),
        /emissary-broken\.yaml: service bomb: annotation getambassador\.io\/config: YAML: uses aliases more than 100 times: refused/,
      ],
    ];
    for (const [what, text, expected] of faults) {
      it(`refuses a reload with ${what}, naming the file, and keeps serving the records it has`, async () => {
        config.write('emissary-broken.yaml', text);
        try {
          const outcome = await running.gatehouse.reload();
          assert.equal(outcome.ok, false);
          const problems = outcome.ok ? [] : outcome.problems;
          assert.ok(
            problems.some((p) => expected.test(p)),
            problems.join('\n'),
          );
          assert.equal(await status('/blue/0/x'), 200);
          assert.equal(await status('/plain/0/x'), 404);
        } finally {
          config.unlink('emissary-broken.yaml');
        }
        assert.deepEqual(await running.gatehouse.reload(), { ok: true });
      });
    }
  });
});
