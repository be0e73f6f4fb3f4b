import assert from 'node:assert/strict';
import Koa from 'koa';
import request from 'supertest';
import { createServiceApp, errorHandler, HttpError } from '../../src/http';
import { spawn, spawnSync } from 'node:child_process';
import { once, type EventEmitter } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accessLog, createLogger, logAppErrors, logDestination, logUnexpectedError } from '../../src/telemetry';
import { assertBuilt, REPO_ROOT } from '../support/process';
import { captureLog } from '../support/log-capture';

/** The compiled telemetry module, as an application runs it: a child process needs no TypeScript loader to start. */
function compiledTelemetry(): string {
  assertBuilt();
  return join(REPO_ROOT, 'dist', 'telemetry');
}

describe('telemetry/logger', () => {
  const savedLevel = process.env.LOG_LEVEL;
  afterEach(() => {
    if (savedLevel === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = savedLevel;
  });

  it('writes one JSON object per line with level, time, name and message', () => {
    const out = captureLog();
    const logger = createLogger({ destination: out, level: 'info' });
    logger.info({ route: 'hotels' }, 'hello');
    assert.equal(out.lines.length, 1);
    const line = out.lines[0];
    assert.equal(line.msg, 'hello');
    assert.equal(line.level, 30);
    assert.equal(line.name, 'gatehouse');
    assert.equal(line.route, 'hotels');
    assert.ok(!Number.isNaN(Date.parse(String(line.time))), 'time is an ISO date');
  });

  it('writes lines in chunks, yet a lone line reaches its file within the flush interval', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-log-'));
    const file = join(dir, 'gatehouse.log');
    const destination = logDestination(file, { flushMs: 20 });
    const emitter = destination as unknown as EventEmitter & { end(): void };
    try {
      const logger = createLogger({ destination, level: 'info' });
      logger.info('first');
      logger.info('second');
      await once(emitter, 'write');
      const lines = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).msg);
      assert.deepEqual(lines, ['first', 'second']);
      logger.info('third');
      await once(emitter, 'write');
      assert.match(readFileSync(file, 'utf8'), /"msg":"third"/);
    } finally {
      emitter.end();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** The sizes of the writes `destination` makes of `text`, once all of it is written; then it is ended. */
  async function writesOf(destination: ReturnType<typeof logDestination>, text: string): Promise<number[]> {
    const emitter = destination as unknown as EventEmitter & { end(): void };
    const sizes: number[] = [];
    const total = Buffer.byteLength(text);
    const written = new Promise<void>((resolve) => {
      emitter.on('write', (n: number) => {
        sizes.push(n);
        if (sizes.reduce((a, b) => a + b, 0) >= total) resolve();
      });
    });
    destination.write(text);
    await written;
    emitter.end();
    return sizes;
  }

  it("writes a busy turn's lines into a pipe at most PIPE_BUF bytes at a time, each write whole lines, and into a file at once", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-log-'));
    try {
      const lines = Array.from(
        { length: 100 },
        (_, i) => `{"n":${i},"path":"/${'é'.repeat(i % 7)}${'x'.repeat(300)}"}\n`,
      );
      const text = lines.join('');
      const ends = new Set<number>();
      lines.reduce((offset, line) => (ends.add(offset + Buffer.byteLength(line)), offset + Buffer.byteLength(line)), 0);

      const fifo = join(dir, 'log.fifo');
      spawnSync('mkfifo', [fifo]);
      const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
      let read = '';
      reader.stdout.setEncoding('utf8').on('data', (chunk: string) => (read += chunk));
      const intoPipe = await writesOf(logDestination(openSync(fifo, 'w'), { flushMs: 20 }), text);
      await once(reader, 'close');
      assert.equal(read, text);
      assert.ok(
        intoPipe.every((n) => n <= 4096),
        `writes of ${intoPipe.join(', ')} bytes`,
      );
      let offset = 0;
      for (const n of intoPipe) assert.ok(ends.has((offset += n)), `a write ends within a line, at ${offset}`);

      const file = join(dir, 'gatehouse.log');
      assert.deepEqual(await writesOf(logDestination(file, { flushMs: 20 }), text), [Buffer.byteLength(text)]);
      assert.equal(readFileSync(file, 'utf8'), text);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gathers lines written one at a time into chunk-sized writes of whole lines, in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-log-'));
    try {
      const file = join(dir, 'gatehouse.log');
      const destination = logDestination(file, { flushMs: 20 });
      const emitter = destination as unknown as EventEmitter & { end(): void };
      const lines = Array.from(
        { length: 400 },
        (_, i) => `{"n":${i},"path":"/${'é'.repeat(i % 5)}${'x'.repeat(200)}"}\n`,
      );
      const total = lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
      const sizes: number[] = [];
      const written = new Promise<void>((resolve) => {
        emitter.on('write', (n: number) => {
          sizes.push(n);
          if (sizes.reduce((a, b) => a + b, 0) >= total) resolve();
        });
      });
      for (const line of lines) destination.write(line);
      await written;
      emitter.end();
      assert.equal(readFileSync(file, 'utf8'), lines.join(''));
      assert.ok(sizes.length <= 4, `${lines.length} lines in ${sizes.length} writes`);
      const ends = new Set<number>();
      lines.reduce((offset, line) => (ends.add(offset + Buffer.byteLength(line)), offset + Buffer.byteLength(line)), 0);
      let offset = 0;
      for (const n of sizes) assert.ok(ends.has((offset += n)), `a write ends within a line, at ${offset}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes the waiting lines on the logger's flush, and calls back once they are in the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-log-'));
    try {
      const file = join(dir, 'gatehouse.log');
      // A flush interval far longer than the test: only the flush can write the lines.
      const destination = logDestination(file, { flushMs: 600_000 });
      const logger = createLogger({ destination, level: 'info' });
      logger.info('first');
      logger.info('second');
      // Asked at once, while the file is still being opened, and again once it is.
      await new Promise<void>((resolve, reject) => logger.flush((err) => (err ? reject(err) : resolve())));
      assert.deepEqual(
        readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).msg),
        ['first', 'second'],
      );
      logger.info('third');
      assert.equal(readFileSync(file, 'utf8').includes('third'), false, 'the line waits for its chunk');
      await new Promise<void>((resolve, reject) => logger.flush((err) => (err ? reject(err) : resolve())));
      assert.deepEqual(
        readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).msg),
        ['first', 'second', 'third'],
      );
      (destination as unknown as { end(): void }).end();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes the lines still waiting when the process exits', async function () {
    const script = `
      const logger = require(${JSON.stringify(compiledTelemetry())}).createLogger({ level: 'info' });
      logger.info('shutting down'); logger.info('stopped'); process.exit(0);`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const [code] = await once(child, 'close');
    assert.equal(code, 0);
    assert.deepEqual(
      out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).msg),
      ['shutting down', 'stopped'],
    );
  });

  it('writes the lines still waiting when the process exits, its standard output a file', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-log-file-'));
    try {
      const file = join(dir, 'out.log');
      const script = `
        const logger = require(${JSON.stringify(compiledTelemetry())}).createLogger({ level: 'info' });
        logger.info('shutting down'); logger.info('stopped'); process.exit(0);`;
      const out = openSync(file, 'w');
      const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', out, 'inherit'] });
      closeSync(out);
      const [code] = await once(child, 'close');
      assert.equal(code, 0);
      assert.deepEqual(
        readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).msg),
        ['shutting down', 'stopped'],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /**
   * Runs a process that logs `first` (if any), waits for its reader to leave,
   * then logs two lines and exits: how it ends.
   */
  async function exitAfterReaderLeft(first: string | undefined): Promise<unknown> {
    const telemetry = JSON.stringify(compiledTelemetry());
    const script = `
      const logger = require(${telemetry}).createLogger({ level: 'info' });
      ${first === undefined ? '' : `logger.info(${JSON.stringify(first)});`}
      process.stdin.once('data', () => { logger.info('shutting down'); logger.info('stopped'); process.exit(0); });`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      if (first !== undefined) await once(child.stdout, 'data');
      // Gone for good before the process logs again.
      const left = once(child.stdout, 'close');
      child.stdout.destroy();
      await left;
      const exited = once(child, 'exit');
      child.stdin.write('go\n');
      // A process that does not exit holds the test past its timeout.
      return await exited;
    } finally {
      child.kill('SIGKILL');
    }
  }

  it('lets the process exit when whoever read its standard output is gone, with lines still waiting', async function () {
    // The lines wait for the chunk or the timer; the exit comes first, and finds the pipe broken.
    assert.deepEqual(await exitAfterReaderLeft(undefined), [0, null]);
  });

  it('lets the process exit when whoever read its standard output went away after reading lines, with lines still waiting', async function () {
    // As `gatehouse start | head -3`: lines were written and read, then the reader is gone.
    assert.deepEqual(await exitAfterReaderLeft('listening'), [0, null]);
  });

  it('censors authorization headers, cookies and passwords wherever they are logged', () => {
    const out = captureLog();
    const logger = createLogger({ destination: out, level: 'info' });
    const secret = 'Basic YWxpY2U6czNjcmV0';
    logger.info({ req: { headers: { authorization: secret, cookie: 'sid=abc', accept: '*/*' } } }, 'a');
    logger.info({ headers: { authorization: secret, 'proxy-authorization': secret, cookie: 'sid=abc' } }, 'b');
    logger.info({ authorization: secret, password: 's3cret', user: { password: 's3cret' } }, 'c');
    const text = out.raw.join('\n');
    assert.ok(!text.includes('YWxpY2U6czNjcmV0'), text);
    assert.ok(!text.includes('s3cret'), text);
    assert.ok(!text.includes('sid=abc'), text);
    assert.deepEqual((out.lines[0].req as { headers: unknown }).headers, {
      authorization: '[redacted]',
      cookie: '[redacted]',
      accept: '*/*',
    });
    assert.equal((out.lines[2].user as { password: string }).password, '[redacted]');
  });

  it('takes its level from LOG_LEVEL and defaults to info', () => {
    delete process.env.LOG_LEVEL;
    const out = captureLog();
    const byDefault = createLogger({ destination: out });
    byDefault.debug('not written');
    byDefault.info('written');
    process.env.LOG_LEVEL = 'warn';
    const fromEnv = createLogger({ destination: out });
    fromEnv.info('not written either');
    fromEnv.warn('written too');
    assert.deepEqual(
      out.lines.map((l) => l.msg),
      ['written', 'written too'],
    );
  });

  it('takes a LOG_LEVEL set empty as unset, as every other variable, instead of refusing to start', () => {
    const out = captureLog();
    for (const empty of ['', ' ']) {
      process.env.LOG_LEVEL = empty;
      const logger = createLogger({ destination: out });
      logger.debug('not written');
      logger.info(`written with '${empty}'`);
    }
    assert.deepEqual(
      out.lines.map((l) => l.msg),
      ["written with ''", "written with ' '"],
    );
  });

  it('writes nothing at level silent', () => {
    const out = captureLog();
    const logger = createLogger({ destination: out, level: 'silent' });
    logger.error('nobody hears this');
    assert.equal(out.raw.length, 0);
  });

  it('refuses an unknown level so that a typo is seen at start', () => {
    assert.throws(() => createLogger({ level: 'verbose' }), /unknown log level 'verbose'/);
  });
});

describe('telemetry/logger logUnexpectedError', () => {
  it('logs the error with its stack and the request id, as the error handler reports it', async () => {
    const out = captureLog();
    const logger = createLogger({ destination: out, level: 'info' });
    const app = new Koa();
    app.use(accessLog({ logger }));
    app.use(errorHandler({ onUnexpected: logUnexpectedError(logger) }));
    app.use(() => {
      throw new Error('database on fire');
    });
    const res = await request(app.callback()).get('/v1/x').set('Authorization', 'Basic c2VjcmV0').expect(500);
    assert.equal(res.body.detail, undefined);
    const error = out.lines.find((l) => l.msg === 'unexpected error');
    assert.ok(error, 'an error line is written');
    assert.equal(error.level, 50);
    assert.equal(error.req_id, res.headers['x-request-id']);
    assert.equal(error.path, '/v1/x');
    assert.match(String((error.err as { stack: string }).stack), /database on fire/);
    assert.ok(!out.raw.join('\n').includes('c2VjcmV0'));
  });
});

describe('telemetry/logger logAppErrors', () => {
  /** A silent module app, as every built-in one is, whose error handler emits what it answers with a bare 500. */
  function moduleApp(thrown: unknown): Koa {
    const app = createServiceApp();
    app.use(() => {
      throw thrown;
    });
    return app;
  }

  it('logs the unexpected error a silent app answered with a bare 500', async () => {
    const out = captureLog();
    const app = moduleApp(new Error('database is down'));
    logAppErrors(app, createLogger({ destination: out, level: 'info' }));
    const res = await request(app.callback()).get('/bookings/').expect(500);
    assert.deepEqual(res.body, { code: 500, message: '500: Internal Server Error' });
    const errors = out.lines.filter((l) => l.msg === 'unexpected error');
    assert.equal(errors.length, 1);
    assert.equal(errors[0].path, '/bookings/');
    assert.match(String((errors[0].err as { stack: string }).stack), /database is down/);
  });

  it('logs nothing for an error the app explains to the client', async () => {
    const out = captureLog();
    const app = moduleApp(new HttpError(400, 'limit must be a whole number'));
    logAppErrors(app, createLogger({ destination: out, level: 'info' }));
    await request(app.callback()).get('/bookings/').expect(400);
    assert.equal(out.lines.filter((l) => l.msg === 'unexpected error').length, 0);
  });
});
