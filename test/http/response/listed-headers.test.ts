/**
 * @module test/http/response/listed-headers
 * ListedHeadersResponse answers as Node's own ServerResponse: every handler
 * below runs once on each, and what goes on the wire (byte for byte, but for
 * the Date) and what the handler reads back or is thrown must be the same.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { ListedHeadersResponse } from '../../../src/http';

type Handler = (res: http.ServerResponse, seen: unknown[]) => void;

/** What a handler does and sees on a server made with `Response`, and the raw answer it sends. */
async function run(
  Response: typeof http.ServerResponse,
  handler: Handler,
  request: string,
): Promise<{ wire: string; seen: unknown[] }> {
  const seen: unknown[] = [];
  const server = http.createServer({ ServerResponse: Response }, (_req, res) => {
    try {
      handler(res, seen);
    } catch (err) {
      seen.push(`threw ${(err as { code?: string }).code}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.end(request);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'close');
  server.close();
  const wire = Buffer.concat(chunks)
    .toString('latin1')
    .replace(/\r\nDate: [^\r]*/g, '\r\nDate: (now)');
  return { wire, seen };
}

const GET = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';

/** Runs `handler` on both responses and asserts they answer alike; returns the answer. */
async function alike(handler: Handler, request = GET): Promise<{ wire: string; seen: unknown[] }> {
  const node = await run(http.ServerResponse, handler, request);
  const listed = await run(ListedHeadersResponse, handler, request);
  assert.equal(listed.wire, node.wire);
  assert.deepEqual(listed.seen, node.seen);
  return listed;
}

/** Node has it, its types do not. */
type WithRawNames = http.ServerResponse & { getRawHeaderNames(): string[] };

/** Every view of the headers a response gives, as plain values. */
function views(res: http.ServerResponse): unknown[] {
  return [{ ...res.getHeaders() }, res.getHeaderNames(), (res as WithRawNames).getRawHeaderNames()];
}

/** 'no error', or the code of what `f` threw (and its message, `withMessage`). */
function outcome(f: () => unknown, withMessage = false): string | undefined {
  try {
    f();
    return 'no error';
  } catch (err) {
    const code = (err as { code?: string }).code;
    return withMessage ? `${code}: ${(err as Error).message}` : code;
  }
}

describe('http/response/listed-headers', () => {
  it('sends the headers set, in the order first set, with their last spelling and value', async () => {
    const { wire } = await alike((res, seen) => {
      res.setHeader('Content-Type', 'text/plain');
      res.setHeader('X-Request-Id', 'abc');
      res.setHeader('vary', 'Accept');
      res.setHeader('x-request-ID', 'def');
      res.setHeader('Content-Length', 2);
      seen.push(...views(res));
      res.end('ok');
    });
    assert.match(
      wire,
      /^HTTP\/1\.1 200 OK\r\nContent-Type: text\/plain\r\nx-request-ID: def\r\nvary: Accept\r\nContent-Length: 2\r\n/,
    );
  });

  it('reads a header back in any spelling, and says when there is none', async () => {
    const { seen } = await alike((res, seen) => {
      res.setHeader('RateLimit', '"u";r=1;t=60');
      seen.push(
        res.getHeader('ratelimit'),
        res.getHeader('RATELIMIT'),
        res.getHeader('RateLimit'),
        res.getHeader('Vary'),
      );
      seen.push(res.hasHeader('ratelimit'), res.hasHeader('rateLIMIT'), res.hasHeader('vary'));
      res.end();
    });
    assert.deepEqual(seen, ['"u";r=1;t=60', '"u";r=1;t=60', '"u";r=1;t=60', undefined, true, true, false]);
  });

  it('removes a header in any spelling, and one never set without complaint', async () => {
    await alike((res, seen) => {
      res.setHeader('A', '1');
      res.setHeader('B', '2');
      res.setHeader('C', '3');
      res.removeHeader('b');
      res.removeHeader('Absent');
      seen.push(...views(res));
      res.end('body');
    });
  });

  it('stops sending Date, and its own Content-Length, once they are removed', async () => {
    const { wire } = await alike((res) => {
      res.removeHeader('Date');
      res.removeHeader('Content-Length');
      res.end('body');
    });
    assert.doesNotMatch(wire, /Date:|Content-Length:/);
  });

  it('appends to a header, with lists and Set-Cookie as separate lines', async () => {
    const { wire } = await alike((res, seen) => {
      res.appendHeader('Set-Cookie', 'a=1');
      res.appendHeader('set-cookie', ['b=2', 'c=3']);
      res.setHeader('Link', ['</a>', '</b>']);
      res.appendHeader('Vary', 'Accept');
      res.appendHeader('VARY', 'Origin');
      seen.push(...views(res));
      res.end();
    });
    assert.match(
      wire,
      /Set-Cookie: a=1\r\nSet-Cookie: b=2\r\nSet-Cookie: c=3\r\nLink: <\/a>\r\nLink: <\/b>\r\nVary: Accept\r\nVary: Origin\r\n/,
    );
  });

  it('merges headers given to writeHead over those set, as an object or as a list', async () => {
    await alike((res, seen) => {
      res.setHeader('X-One', '1');
      res.setHeader('Content-Type', 'text/plain');
      res.writeHead(201, 'Made', { 'content-type': 'application/json', 'X-Two': '2' });
      seen.push(...views(res), res.getHeader('x-two'), res.headersSent);
      res.end('{}');
    });
    await alike((res, seen) => {
      res.setHeader('X-One', '1');
      res.writeHead(202, ['x-one', 'one', 'X-Three', '3']);
      seen.push(...views(res), res.statusMessage);
      res.end();
    });
  });

  it('keeps the repetitions of a list given to writeHead after headers were set', async () => {
    const { wire } = await run(
      ListedHeadersResponse,
      (res) => {
        res.setHeader('X-Old', '0');
        res.writeHead(200, ['X-Twice', 'a', 'X-Twice', 'b']);
        res.end();
      },
      GET,
    );
    assert.match(wire, /X-Old: 0\r\nX-Twice: a\r\nX-Twice: b\r\n/);
  });

  it('answers writeHead as Node does when nothing was set, and for 204 and HEAD', async () => {
    await alike((res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 2 });
      res.end('ok');
    });
    await alike((res) => {
      res.setHeader('X-A', 'a');
      res.statusCode = 204;
      res.end();
    });
    await alike((res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.end('not sent to HEAD');
    }, 'HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  });

  it('closes the connection when a handler sets Connection: close, and keeps it otherwise', async () => {
    const two = 'GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
    const { wire } = await alike((res) => {
      res.setHeader('Content-Length', 1);
      res.end('x');
    }, two);
    assert.equal(wire.match(/HTTP\/1\.1 200/g)?.length, 2);
    const closed = await alike((res) => {
      res.setHeader('Connection', 'close');
      res.end('x');
    }, two);
    assert.equal(closed.wire.match(/HTTP\/1\.1 200/g)?.length, 1);
  });

  it('takes a Headers object as Node does', async () => {
    await alike((res, seen) => {
      res.setHeaders(
        new Headers([
          ['X-A', '1'],
          ['Set-Cookie', 'a=1'],
          ['Set-Cookie', 'b=2'],
        ]),
      );
      seen.push(...views(res));
      res.end();
    });
  });

  it('throws what Node throws for a bad name, a bad value, a bad status and a header after sending', async () => {
    const { seen } = await alike((res, seen) => {
      const attempt = (f: () => unknown): void => void seen.push(outcome(f));
      attempt(() => res.setHeader('bad name', 'x'));
      attempt(() => res.setHeader('X-Bad', 'a\r\nInjected: 1'));
      attempt(() => res.setHeader('X-Undefined', undefined as unknown as string));
      attempt(() => res.appendHeader('bad name', 'x'));
      attempt(() => res.getHeader(1 as unknown as string));
      attempt(() => res.hasHeader(1 as unknown as string));
      attempt(() => res.removeHeader(1 as unknown as string));
      res.setHeader('X-Kept', 'yes');
      attempt(() => res.writeHead(42));
      attempt(() => res.writeHead(200, ['X-Odd']));
      seen.push(...views(res));
      res.writeHead(200);
      attempt(() => res.setHeader('X-Late', '1'));
      attempt(() => res.appendHeader('X-Late', '1'));
      attempt(() => res.removeHeader('X-Kept'));
      attempt(() => res.writeHead(200));
      seen.push(res.getHeader('x-kept'));
      res.end();
    });
    assert.deepEqual(seen.slice(0, 7), [
      'ERR_INVALID_HTTP_TOKEN',
      'ERR_INVALID_CHAR',
      'ERR_HTTP_INVALID_HEADER_VALUE',
      'ERR_INVALID_HTTP_TOKEN',
      'ERR_INVALID_ARG_TYPE',
      'ERR_INVALID_ARG_TYPE',
      'ERR_INVALID_ARG_TYPE',
    ]);
    assert.equal(seen[7], 'ERR_HTTP_INVALID_STATUS_CODE');
    assert.equal(seen.at(-1), 'yes');
  });

  it('accepts and refuses the same names and values as Node, with the same errors', async () => {
    const names: unknown[] = ['', 1, null, 'X-Ünicode', 'X\u0100', "~!#$%&'*+.^_`|-09azAZ"];
    const values: unknown[] = [7, ['a', 'b'], ['ok', 'bad\n'], [], '\xe9\xff', '\u20ac', 'tab\there', null, {}];
    for (let code = 0; code < 0x180; code++) {
      names.push(`X-${String.fromCharCode(code)}`);
      values.push(`v${String.fromCharCode(code)}`);
    }
    const { seen } = await alike((res, seen) => {
      const attempt = (f: () => unknown): void => void seen.push(outcome(f, true));
      for (const name of names) attempt(() => res.setHeader(name as string, 'x'));
      for (const value of values) attempt(() => res.setHeader('X-Value', value as string));
      for (const value of values) attempt(() => res.appendHeader('X-Appended', value as string));
      for (const name of names) attempt(() => res.appendHeader(name as string, 'x'));
      res.end();
    });
    // Both refused some and took others: the comparison above is of both kinds.
    assert.ok(seen.includes('no error'));
    assert.ok(seen.some((one) => String(one).startsWith('ERR_INVALID_CHAR')));
    assert.ok(seen.some((one) => String(one).startsWith('ERR_INVALID_HTTP_TOKEN')));
  });
});
