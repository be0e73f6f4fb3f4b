/**
 * @module test/gatehouse/malformed-body
 * A request body Node cannot read (broken chunked framing, bad trailers),
 * found after the request was handed to the app: answered 400 with the
 * error body and logged 400 on every path that reads or streams bodies,
 * while a body the client cut short stays a 499.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type http from 'node:http';
import net from 'node:net';
import { close, listen } from '../support/server';
import { ALICE } from '../support/credentials';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';

/** A connection that sends raw bytes and collects the whole answer until the server closes it. */
async function rawConnection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let text = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(text)));
  socket.on('error', () => undefined);
  return { socket, closed };
}

/** Sends `head` and then `body` on one connection, without ending its side (a client waiting for its answer); resolves the answer. */
async function exchange(port: number, head: string, body: string): Promise<string> {
  const { socket, closed } = await rawConnection(port);
  socket.write(head + body);
  return closed;
}

function chunkedPost(path: string, headers: string[] = []): string {
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;
}

/** The status, headers and JSON body of the one answer in `text`. */
function answerOf(text: string): { status: number; head: string; body: unknown } {
  const end = text.indexOf('\r\n\r\n');
  assert.ok(end > 0, `no answer: ${JSON.stringify(text)}`);
  const head = text.slice(0, end);
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]), head, body: JSON.parse(text.slice(end + 4)) };
}

/** Bodies Node's parser refuses, each after the request went to the app. */
const MALFORMED: [string, string, RegExp][] = [
  ['a chunk size that is no hex number', 'zz\r\nhello\r\n0\r\n\r\n', /Invalid character in chunk size/],
  ['a chunk size written 0x5', '0x5\r\nhello\r\n0\r\n\r\n', /Invalid character in chunk size/],
  ['a negative chunk size', '-5\r\nhello\r\n0\r\n\r\n', /Invalid character in chunk size/],
  ['a chunk size of 17 hex digits', '10000000000000000\r\nhello\r\n0\r\n\r\n', /Chunk size overflow/],
  ['data longer than its chunk', '3\r\nhello\r\n0\r\n\r\n', /Expected LF after chunk data/],
  ['a bare LF after the chunk size', '5\nhello\r\n0\r\n\r\n', /CR/],
  ['a trailer that is no header', '5\r\nhello\r\n0\r\nBad Trailer\r\n\r\n', /Invalid header token/],
];

const malformed = (reason: RegExp) => (body: unknown) => {
  const b = body as { code: number; message: string; detail: string };
  assert.deepEqual([b.code, b.message], [400, '400: Bad Request']);
  assert.match(b.detail, /^the request body is malformed: /);
  assert.match(b.detail, reason);
};

describe('gatehouse answering a request body it cannot read', function () {
  let config: TempConfig;
  let running: Running;
  let upstream: Awaited<ReturnType<typeof listen>>;
  /** What the upstream received, each request with the moment its connection closed. */
  const atUpstream: { req: http.IncomingMessage; closed: Promise<unknown> }[] = [];
  let port: number;

  before(async () => {
    // Reads what comes of the body and never answers: the gateway answers for it.
    upstream = await listen((req) => {
      // A request cut short errs as it closes.
      req.on('error', () => undefined);
      atUpstream.push({ req, closed: new Promise((resolve) => req.on('close', resolve)) });
      req.resume();
    });
    config = copyConfig();
    config.write(
      'upstream.yaml',
      `apiVersion: gateway/v1\nkind: Mapping\nname: upstream\nprefix: /up/\nservice: 127.0.0.1:${upstream.port}\nbypass_auth: true\ntimeout_ms: 0\n`,
    );
    running = await startGatehouse({ configDir: config.dir, bodyLimit: 1024 });
    port = Number(new URL(running.url).port);
  });

  after(async () => {
    await running?.stop();
    await close(upstream?.server);
    config?.remove();
  });

  /** The access line of the next request to `path` logged from now on. */
  function nextLine(path: string): Promise<Record<string, unknown>> {
    const before = running.log.lines.length;
    return running.log
      .waitForLines(1, (l) => l.msg === 'request' && l.path === path && running.log.lines.indexOf(l) >= before)
      .then((lines) => lines[0]);
  }

  for (const [what, body, reason] of MALFORMED) {
    it(`answers ${what} with 400 and the error body, closes the connection, and logs 400 (a module reading it)`, async () => {
      const line = nextLine('/v1/hotels/bookings/');
      const answer = answerOf(
        await exchange(port, chunkedPost('/v1/hotels/bookings/', [`Authorization: ${ALICE}`]), body),
      );
      assert.equal(answer.status, 400);
      assert.match(answer.head, /\r\nConnection: close(\r\n|$)/i);
      malformed(reason)(answer.body);
      const logged = await line;
      assert.deepEqual([logged.status, logged.aborted, logged.route], [400, undefined, 'hotels-mapping']);
    });
  }

  it('answers 400 for a route whose module does not read the body, in place of its answer', async () => {
    const line = nextLine('/v1/messages/');
    const answer = answerOf(await exchange(port, chunkedPost('/v1/messages/'), 'zz\r\n'));
    assert.equal(answer.status, 400);
    malformed(/chunk size/)(answer.body);
    assert.equal((await line).status, 400);
  });

  it('answers 400 for a body streamed to a remote upstream, and counts no upstream failure', async () => {
    const line = nextLine('/up/x');
    const { socket, closed } = await rawConnection(port);
    // The upstream has the request and the body's first chunk before the bad one comes.
    socket.write(`${chunkedPost('/up/x')}5\r\nhello\r\n`);
    while (atUpstream.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    socket.write('zz\r\n');
    const answer = answerOf(await closed);
    assert.equal(answer.status, 400);
    malformed(/chunk size/)(answer.body);
    assert.equal((await line).status, 400);
    // Cut short, the upstream's copy of the request ends without its body's end.
    await atUpstream[0].closed;
    assert.equal(atUpstream[0].req.complete, false);
    const metrics = await (await fetch(`${running.url}/gateway/v0/metrics`)).text();
    assert.doesNotMatch(metrics, /gatehouse_upstream_errors_total\{route="upstream"/);
  });

  it('answers 413 for a body over the limit, whatever comes after it', async () => {
    const line = nextLine('/up/big');
    const answer = answerOf(await exchange(port, chunkedPost('/up/big'), `800\r\n${'a'.repeat(2048)}\r\nzz\r\n`));
    assert.equal(answer.status, 413);
    assert.equal((await line).status, 413);
  });

  it('serves no request pipelined behind a malformed one: the connection ends with the 400', async () => {
    const line = nextLine('/v1/messages/');
    const text = await exchange(
      port,
      chunkedPost('/v1/messages/'),
      'zz\r\n\r\nGET /v1/messages/1 HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    assert.equal(text.match(/HTTP\/1\.1 /g)?.length, 1, text);
    assert.equal(answerOf(text).status, 400);
    assert.equal((await line).status, 400);
  });

  it('answers a request pipelined behind one being answered, then 400 for what follows that it cannot read', async () => {
    const text = await exchange(port, 'GET /v1/messages/1 HTTP/1.1\r\nHost: x\r\n\r\n', 'NOT HTTP AT ALL\r\n\r\n');
    const answers = text.split(/(?=HTTP\/1\.1 )/);
    assert.deepEqual(
      answers.map((a) => /^HTTP\/1\.1 (\d{3})/.exec(a)?.[1]),
      ['200', '400'],
      text,
    );
    assert.deepEqual(answerOf(answers[1]).body, { code: 400, message: '400: Bad Request' });
  });

  it('logs a body the client cut short as 499, the client having left', async () => {
    const line = nextLine('/up/cut');
    const { socket } = await rawConnection(port);
    const before = atUpstream.length;
    socket.write(`${chunkedPost('/up/cut')}5\r\nhel`);
    while (atUpstream.length === before) await new Promise((resolve) => setTimeout(resolve, 5));
    socket.destroy();
    const logged = await line;
    assert.deepEqual([logged.status, logged.aborted], [499, true]);
  });
});

describe('gatehouse answering a body it cannot read on its way to the auth service', function () {
  let config: TempConfig;
  let running: Running;

  before(async () => {
    config = copyConfig();
    config.write(
      'services.yaml',
      config
        .read('services.yaml')
        .replace(
          '      proto: http\n',
          '      proto: http\n      include_body: {max_bytes: 4096, allow_partial: true}\n',
        ),
    );
    running = await startGatehouse({ configDir: config.dir });
  });

  after(async () => {
    await running?.stop();
    config?.remove();
  });

  it('answers 400 with the error body, and logs 400', async () => {
    const port = Number(new URL(running.url).port);
    const text = await exchange(
      port,
      chunkedPost('/v1/hotels/bookings/', [`Authorization: ${ALICE}`]),
      '5\r\nhello\r\nzz\r\n',
    );
    const answer = answerOf(text);
    assert.equal(answer.status, 400);
    malformed(/chunk size/)(answer.body);
    const [line] = await running.log.waitForLines(1, (l) => l.msg === 'request');
    assert.equal(line.status, 400);
  });
});
