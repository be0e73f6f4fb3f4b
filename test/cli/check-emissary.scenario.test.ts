/**
 * `gatehouse check` on Emissary's files: what each resource became, each
 * field ignored or served otherwise, and the records of another
 * `ambassador_id`, chosen with `--ambassador-id` or `AMBASSADOR_ID`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkFolder } from '../../src/cli/check';
import { runCli } from '../support/process';

const FILES = `apiVersion: getambassador.io/v3alpha1
kind: Mapping
metadata: {name: quote, namespace: shop}
spec: {prefix: /quote/, service: 127.0.0.1:9001, stats_name: quote}
---
apiVersion: getambassador.io/v3alpha1
kind: Listener
metadata: {name: http}
spec: {port: 8080}
---
apiVersion: v1
kind: Service
metadata:
  name: legacy
  annotations:
    getambassador.io/config: |
      apiVersion: getambassador.io/v2
      kind: Mapping
      name: blue-legacy
      prefix: /legacy/
      service: 127.0.0.1:9002
      ambassador_id: blue
`;

describe('gatehouse check, on Emissary resources', function () {
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-emissary-'));
    writeFileSync(join(dir, 'emissary.yaml'), FILES);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('says what each resource became, with each field ignored or served otherwise, and the records skipped', async () => {
    const report = await checkFolder(dir);
    assert.equal(report.ok, true, report.text);
    const file = join(dir, 'emissary.yaml');
    assert.ok(
      report.text.endsWith(`Emissary resources (ambassador_id default):
  ${file}: Mapping quote (getambassador.io/v3alpha1, namespace shop) -> Mapping quote
    spec.stats_name: ignored: requests are counted by Mapping name in the Prometheus metrics
    spec.auto_host_rewrite: not set: a remote upstream is sent its own host:port as Host, where Emissary sends the client's; the client's is in X-Forwarded-Host, and host_rewrite sends a name of your choice
  ${file}: Listener http (getambassador.io/v3alpha1) -> nothing: the gateway listens as its options say
    spec.port: ignored: the gateway listens where its --host and --port (HOST, PORT) say, with TLS when --tls-cert and --tls-key give it
Skipped: records of another ambassador_id than default:
  ${file}: service legacy: Mapping blue-legacy (ambassador_id blue)
`),
      report.text,
    );
  });

  it('serves the records of the id --ambassador-id or AMBASSADOR_ID names', async () => {
    const [flag, env] = await Promise.all([
      runCli(['check', dir, '--ambassador-id', 'blue']),
      runCli(['check', dir], { env: { AMBASSADOR_ID: 'blue' } }),
    ]);
    for (const res of [flag, env]) {
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /\/legacy\/ .* blue-legacy\n/);
      assert.match(
        res.stdout,
        /Skipped: records of another ambassador_id than blue:\n.*Mapping quote \(ambassador_id default\)\n/,
      );
    }
  });
});
