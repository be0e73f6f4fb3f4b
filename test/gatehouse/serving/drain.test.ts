/**
 * @module test/gatehouse/serving/drain
 * A stopping Gatehouse drains before it closes its ports: readiness says
 * 503, gRPC health NOT_SERVING, every answer closes its connection, and
 * every request a client wrote before the ports closed is answered (and
 * logged). The clients loop as a load balancer's do: on keep-alive, opening
 * new connections until readiness says 503, and idle pooled connections
 * that send a request at the very moment the ports close. Each request is
 * stamped with the order in which it was written, against the moment the
 * ports closed: nothing depends on how fast the machine is. A booking made
 * while draining, even one written as the ports close, is in the database
 * after the stop: the database closes last.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { openBookingDatabase } from '../../../src/bookings';
import { createGatehouse, type Gatehouse } from '../../../src/gatehouse';
import { createLogger } from '../../../src/telemetry';
import { DEMO } from '../../support/bookings';
import { captureLog } from '../../support/log-capture';
import { freshDataDir } from '../../support/pglite';
import { grpcClients, unary } from '../../support/grpc-clients';
import { ALICE } from '../../support/credentials';
import { DEMO_CONFIG } from '../../support/config-folder';

/** The order of events in this process: writes, the drain's start, the ports closing. */
let clock = 0;
const tick = () => ++clock;

interface Sent {
  /** When its last byte was handed to the connection. */
  writtenAt: number;
  /** The answer's status; none when the connection failed before it came. */
  status?: number;
  /** Whether the answer said `Connection: close`. */
  closes?: boolean;
  /** How that header's name was spelt, as every other answer spells it: `Connection`. */
  closeSpelling?: string;
  failure?: string;
}

/** One answer read off a keep-alive connection: its status line, headers and Content-Length body. */
function readAnswer(
  socket: net.Socket,
  state: { buffer: string },
): Promise<{ status: number; closes: boolean; closeSpelling?: string }> {
  return new Promise((resolve, reject) => {
    const attempt = (): boolean => {
      const end = state.buffer.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const head = state.buffer.slice(0, end);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (state.buffer.length < end + 4 + length) return false;
      state.buffer = state.buffer.slice(end + 4 + length);
      cleanup();
      const closeSpelling = /\r\n(connection): *close/i.exec(head)?.[1];
      resolve({ status: Number(head.slice(9, 12)), closes: closeSpelling !== undefined, closeSpelling });
      return true;
    };
    const onData = (chunk: string) => {
      state.buffer += chunk;
      attempt();
    };
    const onGone = (err?: NodeJS.ErrnoException) => {
      cleanup();
      reject(new Error(err?.code ?? 'closed before the answer'));
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('error', onGone);
      socket.off('close', onGone);
    };
    if (attempt()) return;
    socket.on('data', onData);
    socket.on('error', onGone);
    socket.once('close', onGone);
  });
}

/** What the load balancer in front knows: once readiness says 503, it opens no new connection to the gateway. */
const balancer = { sendsElsewhere: false };

/**
 * A client that sends requests one after the other over keep-alive,
 * connecting again when told to close, until the balancer sends elsewhere
 * (or the connection is refused).
 */
async function loopingClient(port: number, sent: Sent[]): Promise<void> {
  while (!balancer.sendsElsewhere) {
    const socket = net.connect(port, '127.0.0.1');
    socket.setEncoding('latin1');
    try {
      await once(socket, 'connect');
    } catch {
      // Refused: the ports are closed, and this client is done.
      return;
    }
    const state = { buffer: '' };
    for (;;) {
      const request: Sent = { writtenAt: 0 };
      socket.write('GET /v1/messages/1 HTTP/1.1\r\nHost: x\r\n\r\n');
      request.writtenAt = tick();
      sent.push(request);
      try {
        const answer = await readAnswer(socket, state);
        request.status = answer.status;
        request.closes = answer.closes;
        request.closeSpelling = answer.closeSpelling;
        if (answer.closes) break;
      } catch (err) {
        request.failure = (err as Error).message;
        break;
      }
    }
    socket.destroy();
  }
}

/** A connection of the balancer's pool, open and idle since its one request before the stop. */
async function pooledConnection(port: number, sent: Sent[]): Promise<{ send(): void; done: Promise<void> }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setEncoding('latin1');
  await once(socket, 'connect');
  const state = { buffer: '' };
  const ask = async (request: Sent) => {
    socket.write('GET /v1/messages/1 HTTP/1.1\r\nHost: x\r\n\r\n');
    request.writtenAt = tick();
    sent.push(request);
    try {
      Object.assign(request, await readAnswer(socket, state));
    } catch (err) {
      request.failure = (err as Error).message;
    }
  };
  await ask({ writtenAt: 0 });
  let done: Promise<void> = Promise.resolve();
  return {
    send() {
      done = ask({ writtenAt: 0 });
    },
    get done() {
      return done;
    },
  };
}

describe('a stopping gatehouse draining its clients', function () {
  let gatehouse: Gatehouse;
  const marks: { draining?: number; closing?: number } = {};
  const log = captureLog();
  /** Called as the ports are about to close, in that very turn of the event loop. */
  let atClosing = (): void => undefined;

  before(async () => {
    const destination = {
      write(chunk: string) {
        // Stamped as it is written: the line is written as it happens.
        if (chunk.includes('"msg":"draining:')) marks.draining = tick();
        if (chunk.includes('"msg":"drained: closing the ports')) {
          atClosing();
          marks.closing = tick();
        }
        log.write(chunk);
      },
    };
    gatehouse = await createGatehouse({
      configDir: DEMO_CONFIG,
      host: '127.0.0.1',
      port: 0,
      grpcPort: 0,
      watch: false,
      drainDelayMs: 1_500,
      // The bookings are the next test's subject; here, what reaches the gateway is.
      bookingStore: 'memory',
      logger: createLogger({ destination, level: 'info' }),
    });
  });

  it('keeps answering, not ready and closing every connection, then closes; every request sent before is answered and logged', async () => {
    const { port, grpcPort } = await gatehouse.start();
    const sent: Sent[] = [];
    const pool = await Promise.all(Array.from({ length: 4 }, () => pooledConnection(port, sent)));
    atClosing = () => pool.forEach((connection) => connection.send());
    const clients = Array.from({ length: 16 }, () => loopingClient(port, sent));
    // Every client under way before the stop.
    while (sent.filter((s) => s.status !== undefined).length < 36)
      await new Promise((resolve) => setTimeout(resolve, 5));

    const grpc = grpcClients(`127.0.0.1:${grpcPort}`);
    const stopped = gatehouse.stop();
    // Readiness, as a load balancer asks it, while the clients go on.
    let ready: { status: number; body: unknown; grpcHealth?: unknown } | undefined;
    while (!ready) {
      const res = await fetch(`http://127.0.0.1:${port}/gateway/v0/check_ready`);
      const body = await res.json();
      if (res.status === 503)
        ready = { status: res.status, body, grpcHealth: await unary(grpc.health, 'Check', { service: '' }) };
    }
    const readyAt = tick();
    balancer.sendsElsewhere = true;
    grpc.close();
    await Promise.all(clients);
    await stopped;
    await Promise.all(pool.map((connection) => connection.done));

    assert.deepEqual(ready, {
      status: 503,
      body: { code: 503, message: '503: Service Unavailable', detail: 'not ready: the gateway is shutting down' },
      grpcHealth: { status: 'NOT_SERVING' },
    });
    assert.ok(marks.draining !== undefined && marks.closing !== undefined, JSON.stringify(marks));
    assert.ok(readyAt < marks.closing, 'readiness said 503 while the ports were open');

    const before = sent.filter((s) => s.writtenAt < marks.closing!);
    const unanswered = before.filter((s) => s.status === undefined);
    assert.deepEqual(
      unanswered.map((s) => ({ ...s, writtenAt: s.writtenAt - marks.closing! })),
      [],
      `${unanswered.length} of ${before.length} requests sent before the ports closed got no answer`,
    );
    assert.ok(before.every((s) => s.status === 200));
    const drained = before.filter((s) => s.writtenAt > marks.draining!);
    // The pooled connections' requests, sent as the ports closed, among them.
    assert.ok(drained.length >= 16 + 4, `answered while draining: ${drained.length}`);
    assert.ok(
      drained.every((s) => s.closes),
      'every answer while draining says Connection: close',
    );
    assert.deepEqual([...new Set(drained.map((s) => s.closeSpelling))], ['Connection']);
    // Each answer has its line in the access log.
    const answered = sent.filter((s) => s.status !== undefined).length;
    const lines = await log.waitForLines(answered, (l) => l.msg === 'request' && l.path === '/v1/messages/1');
    assert.equal(lines.length, answered);
  });
});

describe('a stopping gatehouse that keeps bookings', function () {
  const check_in = '2099-11-11';
  const body = JSON.stringify({ hotel_id: DEMO.hotels.harbourOslo, check_in });
  const create = `POST /v1/hotels/bookings/ HTTP/1.1\r\nHost: x\r\nAuthorization: ${ALICE}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

  /** A keep-alive connection of a load balancer's pool, open before the stop. */
  async function pooled(port: number): Promise<{ socket: net.Socket; ask(): ReturnType<typeof readAnswer> }> {
    const socket = net.connect(port, '127.0.0.1');
    socket.setEncoding('latin1');
    await once(socket, 'connect');
    const state = { buffer: '' };
    return {
      socket,
      ask() {
        socket.write(create);
        return readAnswer(socket, state);
      },
    };
  }

  it('writes the bookings made while draining, one sent as the ports close too, before it closes the database', async () => {
    const dataDir = await freshDataDir();
    const answers: ReturnType<typeof readAnswer>[] = [];
    const connections: Awaited<ReturnType<typeof pooled>>[] = [];
    const destination = {
      write(chunk: string) {
        // Sent in the very turn each line is written: as the drain begins, and as the ports close.
        if (chunk.includes('"msg":"draining:')) answers.push(connections[0].ask());
        if (chunk.includes('"msg":"drained: closing the ports')) answers.push(connections[1].ask());
      },
    };
    const gatehouse = await createGatehouse({
      configDir: DEMO_CONFIG,
      port: 0,
      grpcPort: false,
      watch: false,
      dataDir,
      drainDelayMs: 200,
      logger: createLogger({ destination, level: 'info' }),
    });
    const { port } = await gatehouse.start();
    connections.push(await pooled(port), await pooled(port));
    // A create before the stop, which also leaves alice's credential verified.
    assert.equal((await connections[0].ask()).status, 201);

    await gatehouse.stop();
    const drained = await Promise.all(answers);
    for (const c of connections) c.socket.destroy();
    assert.deepEqual(
      drained.map(({ status, closes }) => ({ status, closes })),
      [
        { status: 201, closes: true },
        { status: 201, closes: true },
      ],
    );

    const database = await openBookingDatabase({ dataDir });
    try {
      const kept = (await database.store('hotel').list('alice')).filter((b) => b.start === check_in);
      assert.deepEqual(
        kept.map((b) => b.status),
        ['confirmed', 'confirmed', 'confirmed'],
      );
    } finally {
      await database.close();
    }
  });
});
