/**
 * @module test/cli/start-additional-port
 * `gatehouse start` with a Host that names an additional cleartext port:
 * the listening line names it, the demo answers there as on PORT, and a
 * SIGTERM leaves nothing listening on either port.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/ports';
import { acceptsConnections, REPO_ROOT, startCli } from '../support/process';

describe("gatehouse start with a Host's additionalPort", function () {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-additional-'));
    cpSync(join(REPO_ROOT, 'config'), dir, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names the port on its listening line, answers there as on PORT, and closes it on SIGTERM', async () => {
    const extra = await freePort();
    writeFileSync(
      join(dir, 'hosts.yaml'),
      [
        'apiVersion: getambassador.io/v3alpha1',
        'kind: Host',
        'metadata: {name: everything}',
        `spec: {hostname: "*", requestPolicy: {insecure: {action: Route, additionalPort: ${extra}}}}`,
        '',
      ].join('\n'),
    );
    const server = await startCli(['start', '--config', dir, '--no-watch'], {
      env: { PORT: '0', GRPC_PORT: 'false', LOG_LEVEL: 'warn' },
      untilBookingsOpen: false,
    });
    try {
      assert.match(
        server.line,
        new RegExp(`^gatehouse listening on http://127\\.0\\.0\\.1:\\d+ \\(HTTP also on 127\\.0\\.0\\.1:${extra}; `),
      );
      const there = await fetch(`http://127.0.0.1:${extra}/v1/messages/1`);
      assert.equal(there.status, 200);
      assert.equal(((await there.json()) as { url: string }).url, `http://127.0.0.1:${extra}/v1/messages/1`);
      assert.equal((await fetch(`${server.address}/v1/messages/1`)).status, 200);
    } finally {
      const ended = await server.stop();
      assert.equal(ended.code, 0, ended.stderr);
    }
    assert.equal(await acceptsConnections(extra), false, 'the additional port is closed');
    assert.equal(await acceptsConnections(server.port), false, 'PORT is closed');
  });
});
