import assert from 'node:assert/strict';
import { close } from '../support/server';
import { recordingUpstream } from '../support/upstreams';
import { send } from '../support/client';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';

describe('gatehouse forwarding a request body to a remote upstream', function () {
  let config: TempConfig;
  let running: Running;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  // Reads the whole body, then answers too late.
  let slow: Awaited<ReturnType<typeof recordingUpstream>>;

  before(async () => {
    upstream = await recordingUpstream();
    slow = await recordingUpstream((_req, res) => setTimeout(() => res.end('late'), 1000));
    config = copyConfig();
    const record = (name: string, prefix: string, port: number, extra: string[] = []) =>
      [
        'apiVersion: gateway/v1',
        'kind: Mapping',
        `name: ${name}`,
        `prefix: ${prefix}`,
        `service: 127.0.0.1:${port}`,
        ...extra,
      ].join('\n');
    config.write(
      'services.yaml',
      [
        // No timeout_ms: the answer is what is tested, however long a loaded machine makes it.
        record('open-upstream', '/open/', upstream.port, ['timeout_ms: 0']),
        record('slow-upstream', '/slow/', slow.port, ['timeout_ms: 200']),
      ].join('\n---\n'),
    );
    running = await startGatehouse({ configDir: config.dir });
  });

  after(async () => {
    await running?.stop();
    await close(upstream?.server);
    await close(slow?.server);
    config?.remove();
  });

  it('answers what the upstream answered, with the access log on, for a sized and a chunked body', async () => {
    const sized = await send(running.url, '/open/sized', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    assert.equal(sized.status, 200, sized.text);
    assert.equal(sized.text, 'ok');
    const chunked = await send(running.url, '/open/chunked', {
      method: 'POST',
      body: ['a'.repeat(3000), 'b'.repeat(3000)],
    });
    assert.equal(chunked.status, 200, chunked.text);
    assert.deepEqual(
      upstream.received.map((r) => [r.method, r.url, r.body.length]),
      [
        ['POST', '/sized', 5],
        ['POST', '/chunked', 6000],
      ],
    );
  });

  it('answers 504 with the error body when the upstream read the body and then did not answer', async () => {
    const answer = await send(running.url, '/slow/x', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    assert.equal(answer.status, 504, answer.text);
    assert.equal(answer.json().message, '504: Gateway Timeout');
    assert.equal(slow.received[0]?.body.toString(), '{"a":1}');
  });

  it('writes an access line for each, with the client address', async () => {
    const lines = await running.log.waitForLines(3, (l) => l.msg === 'request');
    assert.deepEqual(
      lines.map((l) => [l.method, l.path, l.status, l.remote]),
      [
        ['POST', '/open/sized', 200, '127.0.0.1'],
        ['POST', '/open/chunked', 200, '127.0.0.1'],
        ['PUT', '/slow/x', 504, '127.0.0.1'],
      ],
    );
  });
});
