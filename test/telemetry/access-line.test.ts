import assert from 'node:assert/strict';
import pino from 'pino';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accessLineWriter } from '../../src/telemetry/access-line';
import { createLogger, logDestination, type AccessLogEntry } from '../../src/telemetry';
import { captureLog } from '../support/log-capture';

const entry: AccessLogEntry = {
  req_id: '7d3c0c1e-1f0b-4c55-9a51-0f3a4c1f2b3d',
  method: 'GET',
  path: '/v1/hotels/',
  route: 'hotels',
  status: 200,
  duration_ms: 1.25,
  remote: '127.0.0.1',
};

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** The line without its time, which pino and the writer may read a millisecond apart. */
const untimed = (line: string) => line.replace(/,"time":"[^"]*"/, '');

describe('telemetry/access-line', () => {
  it('writes the line pino writes for the same fields', async () => {
    const out = captureLog();
    const logger = createLogger({ destination: out, level: 'info' });
    const full: AccessLogEntry = { ...entry, query: ['city', 'limit'], user: 'alice', aborted: true };
    accessLineWriter(logger).write(full);
    await out.requests(1);
    logger.info(full, 'request');
    assert.equal(out.raw.length, 2);
    assert.equal(untimed(out.raw[0]), untimed(out.raw[1]));
    assert.match(String(out.lines[0].time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('escapes quotes, backslashes, control characters and lone surrogates as JSON does', async () => {
    const out = captureLog();
    const writer = accessLineWriter(createLogger({ destination: out, level: 'info' }));
    const odd = { ...entry, path: '/a"b\\c\nd\u0001\u007f\ud800é', user: 'zoë "z"', remote: '::1' };
    writer.write(odd);
    writer.flush();
    assert.equal(out.lines.length, 1);
    assert.equal(out.lines[0].path, odd.path);
    assert.equal(out.lines[0].user, 'zoë "z"');
    assert.equal(out.lines[0].remote, '::1');
  });

  it("hands a turn of the event loop's lines to the destination in one write", async () => {
    const writes: string[] = [];
    const writer = accessLineWriter(
      createLogger({ destination: { write: (chunk: string) => void writes.push(chunk) }, level: 'info' }),
    );
    for (let i = 0; i < 50; i++) writer.write({ ...entry, status: 200 + i });
    assert.equal(writes.length, 0, 'nothing is written before the turn ends');
    await nextTurn();
    assert.equal(writes.length, 1);
    const lines = writes[0]
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: number });
    assert.deepEqual(
      lines.map((l) => l.status),
      Array.from({ length: 50 }, (_, i) => 200 + i),
    );
  });

  it("hands each line to the process's own destination, which writes them whole and in order, whatever their UTF-8 length", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-access-line-'));
    try {
      const file = join(dir, 'access.log');
      const logger = createLogger({ destination: logDestination(file, { flushMs: 600_000 }), level: 'info' });
      const writer = accessLineWriter(logger);
      // Lines of one to three bytes a character, so that chunks fill up at every kind of boundary.
      const paths = Array.from({ length: 3000 }, (_, i) => `/v1/${'aé€'[i % 3].repeat(i % 700)}/${i}`);
      for (const path of paths) writer.write({ ...entry, path, user: 'zoë' });
      await new Promise<void>((resolve, reject) => logger.flush((err?: Error) => (err ? reject(err) : resolve())));
      const lines = readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { path: string; user: string });
      assert.deepEqual(
        lines.map((l) => l.path),
        paths,
      );
      assert.ok(lines.every((l) => l.user === 'zoë'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes nothing once the logger is above info, and writes again below', async () => {
    const out = captureLog();
    const logger = createLogger({ destination: out, level: 'warn' });
    const writer = accessLineWriter(logger);
    assert.equal(writer.enabled(), false);
    logger.level = 'debug';
    assert.equal(writer.enabled(), true);
  });

  it("goes through logger.info for a logger it did not build, so that the logger's own format applies", async () => {
    const out = captureLog();
    const logger = pino({ formatters: { level: (label) => ({ level: label }) } }, out);
    accessLineWriter(logger).write(entry);
    assert.equal(out.lines.length, 1, 'written at once, as pino writes');
    assert.equal(out.lines[0].level, 'info');
    assert.equal(out.lines[0].path, '/v1/hotels/');
  });
});
