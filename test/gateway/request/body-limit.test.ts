import assert from 'node:assert/strict';
import http from 'node:http';
import { createGateway, type Gateway } from '../../../src/gateway';
import { close, listen } from '../../support/server';
import { configOf, mapping } from '../../support/records';
import { echoModule, registry, type Echo } from '../../support/modules';
import { recordingUpstream } from '../../support/upstreams';
import { send } from '../../support/client';

const LIMIT = 1024;
const TOO_LARGE = {
  code: 413,
  message: '413: Payload Too Large',
  detail: `the request body is larger than ${LIMIT} bytes`,
};

describe('gateway request body limit', () => {
  let gateway: Gateway;
  let server: http.Server;
  let base: string;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  let agent: http.Agent;

  before(async () => {
    upstream = await recordingUpstream((_req, res, received) => res.end(`got ${received.body.length}`));
    gateway = createGateway({
      bodyLimit: LIMIT,
      modules: registry(echoModule('local')),
      config: configOf(mapping('/remote/', upstream.url), mapping('/local/', 'local', { rewrite: '' })),
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  });

  after(async () => {
    agent.destroy();
    await close(server);
    await gateway.close();
    await close(upstream.server);
  });

  const json = (size: number) => JSON.stringify({ pad: 'x'.repeat(size - 10) });
  const chunks = (text: string) => [text.slice(0, 300), text.slice(300, 700), text.slice(700)];

  it('lets a body up to the limit through, to a remote upstream and an in-process module', async () => {
    const body = json(LIMIT);
    assert.equal(body.length, LIMIT);
    assert.equal((await send(base, '/remote/x', { method: 'POST', body })).text, `got ${LIMIT}`);
    assert.equal((await send(base, '/remote/x', { method: 'POST', body: chunks(body) })).text, `got ${LIMIT}`);
    const headers = { 'Content-Type': 'application/json' };
    const local = await send(base, '/local/json', { method: 'POST', body, headers });
    assert.equal(local.status, 200, local.text);
    assert.equal(((local.json() as Echo).body as { pad: string }).pad.length, LIMIT - 10);
    const localChunked = await send(base, '/local/json', { method: 'POST', body: chunks(body), headers });
    assert.equal(localChunked.status, 200, localChunked.text);
  });

  it('answers 413 for a declared Content-Length over the limit without asking the upstream', async () => {
    const before = upstream.received.length;
    const res = await send(base, '/remote/x', { method: 'POST', body: 'x'.repeat(LIMIT + 1) });
    assert.equal(res.status, 413);
    assert.deepEqual(res.json(), TOO_LARGE);
    assert.equal(upstream.received.length, before);
  });

  it('answers 413 for a chunked body that goes over the limit on its way to an upstream', async () => {
    const before = upstream.received.length;
    const res = await send(base, '/remote/x', { method: 'POST', body: chunks('x'.repeat(LIMIT + 1)) });
    assert.equal(res.status, 413);
    assert.deepEqual(res.json(), TOO_LARGE);
    assert.equal(upstream.received.length, before, 'the upstream never saw a whole request');
  });

  it('answers 413 for bodies over the limit to an in-process module, though it would take more', async () => {
    const headers = { 'Content-Type': 'application/json' };
    const sized = await send(base, '/local/json', { method: 'POST', body: json(LIMIT + 1), headers });
    assert.equal(sized.status, 413);
    assert.deepEqual(sized.json(), TOO_LARGE);
    const chunked = await send(base, '/local/json', { method: 'POST', body: chunks(json(LIMIT + 1)), headers });
    assert.equal(chunked.status, 413);
    assert.deepEqual(chunked.json(), TOO_LARGE);
  });

  it('keeps the connection usable after a 413 for a chunked body', async () => {
    const headers = { 'Content-Type': 'application/json' };
    const first = await send(base, '/local/json', { method: 'POST', body: chunks(json(LIMIT + 200)), headers, agent });
    assert.equal(first.status, 413);
    const second = await send(base, '/local/json', { method: 'POST', body: json(100), headers, agent });
    assert.equal(second.status, 200, second.text);
    const third = await send(base, '/remote/x', { method: 'POST', body: chunks('y'.repeat(LIMIT + 5)), agent });
    assert.equal(third.status, 413);
    const fourth = await send(base, '/remote/x', { agent });
    assert.equal(fourth.text, 'got 0');
  });
});
