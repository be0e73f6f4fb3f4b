/**
 * @module test/support/grpc-echo
 * A gRPC service for proxying tests, served by a real @grpc/grpc-js server
 * (h2c, or h2 over TLS), with a client made the way any grpc-js client is:
 * one method of each call kind, messages as JSON, and what each call
 * received (its metadata, whether it was cancelled) kept for the test.
 */
import * as grpc from '@grpc/grpc-js';

/** A message either way. */
export interface EchoMessage {
  text?: string;
  /** Server-streaming: how many answers. */
  count?: number;
  /** Answered with this status instead. */
  fail?: number;
  /** Server-streaming: answers of this many bytes each, written as fast as the reader takes them. */
  size?: number;
  /** Waits this long before answering (unary), or after the first answer (streams: `-1` for ever). */
  delayMs?: number;
  user?: string;
  metadata?: Record<string, string>;
}

const json = {
  serialize: (value: EchoMessage): Buffer => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer): EchoMessage => JSON.parse(bytes.toString()) as EchoMessage,
};

function method(name: string, requestStream: boolean, responseStream: boolean) {
  return {
    path: `/test.Echo/${name}`,
    requestStream,
    responseStream,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  };
}

export const ECHO_SERVICE = {
  unary: method('Unary', false, false),
  serverStream: method('ServerStream', false, true),
  clientStream: method('ClientStream', true, false),
  bidi: method('Bidi', true, true),
} satisfies grpc.ServiceDefinition;

/** What one call received. */
export interface ReceivedCall {
  readonly method: string;
  readonly metadata: Record<string, string>;
  cancelled: boolean;
}

export interface EchoServer {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  readonly received: ReceivedCall[];
  /** Answers written by server-streaming calls so far. */
  sent: number;
  /** Resolves the next time a server-streaming call is held by flow control. */
  heldBack(): Promise<void>;
  /** Resolves once a call of the server is cancelled. */
  cancelled(): Promise<ReceivedCall>;
  close(): Promise<void>;
}

/** The client's metadata as plain text pairs, for assertions. */
function plain(metadata: grpc.Metadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, values] of Object.entries(metadata.getMap())) out[key] = String(values);
  return out;
}

/** What every kind of server call has. */
interface SurfaceCall {
  readonly metadata: grpc.Metadata;
  sendMetadata(metadata: grpc.Metadata): void;
  on(event: 'cancelled', listener: () => void): unknown;
}

function trailer(): grpc.Metadata {
  const m = new grpc.Metadata();
  m.set('x-server-trailer', 'bye');
  return m;
}

function failure(code: number): Partial<grpc.StatusObject> {
  return { code, details: 'refused by the echo service: é%', metadata: trailer() };
}

/** Starts the echo service on a free port of 127.0.0.1, with `credentials` (insecure by default). */
export async function startEchoServer(credentials = grpc.ServerCredentials.createInsecure()): Promise<EchoServer> {
  const received: ReceivedCall[] = [];
  const self = { sent: 0, blocked: [] as (() => void)[] };
  const waiting: ((call: ReceivedCall) => void)[] = [];
  const server = new grpc.Server();
  // The initial metadata goes at once, but for a unary call told to wait or fail: its headers wait for its answer.
  const track = (name: string, call: SurfaceCall, holdHeaders = false): ReceivedCall => {
    const seen: ReceivedCall = { method: name, metadata: plain(call.metadata), cancelled: false };
    received.push(seen);
    call.on('cancelled', () => {
      seen.cancelled = true;
      for (const resolve of waiting.splice(0)) resolve(seen);
    });
    const initial = new grpc.Metadata();
    initial.set('x-server-initial', 'hello');
    if (!holdHeaders) call.sendMetadata(initial);
    return seen;
  };
  server.addService(ECHO_SERVICE, {
    unary(call: grpc.ServerUnaryCall<EchoMessage, EchoMessage>, callback: grpc.sendUnaryData<EchoMessage>) {
      const req = call.request;
      // Told to fail, it answers trailers-only: no headers before its status.
      const seen = track('unary', call, req.delayMs !== undefined || req.fail !== undefined);
      const answer = () => {
        if (req.fail !== undefined) callback(failure(req.fail));
        else
          callback(null, { text: req.text, user: seen.metadata['x-travel-user'], metadata: seen.metadata }, trailer());
      };
      if (req.delayMs !== undefined) setTimeout(answer, req.delayMs);
      else answer();
    },
    serverStream(call: grpc.ServerWritableStream<EchoMessage, EchoMessage>) {
      track('serverStream', call);
      const req = call.request;
      if (req.fail !== undefined) return call.emit('error', failure(req.fail));
      let sent = 0;
      const next = (): void => {
        if (call.cancelled) return;
        if (sent === (req.count ?? 1)) return call.end(trailer());
        const text = req.size === undefined ? `${req.text} ${sent}` : 'x'.repeat(req.size);
        sent++;
        const more = call.write({ text });
        self.sent++;
        if (sent === 1 && req.delayMs === -1) return;
        if (sent === 1 && req.delayMs !== undefined) setTimeout(next, req.delayMs);
        else if (!more) {
          // Held by flow control: the next message waits for the reader.
          for (const resolve of self.blocked.splice(0)) resolve();
          call.once('drain', next);
        } else setImmediate(next);
      };
      next();
    },
    clientStream(call: grpc.ServerReadableStream<EchoMessage, EchoMessage>, callback: grpc.sendUnaryData<EchoMessage>) {
      track('clientStream', call);
      const texts: string[] = [];
      call.on('data', (m: EchoMessage) => texts.push(m.text ?? ''));
      call.on('end', () => callback(null, { text: texts.join(','), count: texts.length }, trailer()));
    },
    bidi(call: grpc.ServerDuplexStream<EchoMessage, EchoMessage>) {
      track('bidi', call);
      call.on('data', (m: EchoMessage) => call.write({ text: `echo ${m.text}` }));
      call.on('end', () => call.end(trailer()));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return {
    address: `127.0.0.1:${port}`,
    received,
    get sent() {
      return self.sent;
    },
    set sent(value: number) {
      self.sent = value;
    },
    heldBack: () => new Promise((resolve) => self.blocked.push(resolve)),
    cancelled: () => new Promise((resolve) => waiting.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

/** A client of the echo service. */
export type EchoClient = grpc.Client & {
  unary: (
    request: EchoMessage,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<EchoMessage>,
  ) => grpc.ClientUnaryCall;
  serverStream: (
    request: EchoMessage,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ) => grpc.ClientReadableStream<EchoMessage>;
  clientStream: (
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<EchoMessage>,
  ) => grpc.ClientWritableStream<EchoMessage>;
  bidi: (metadata: grpc.Metadata, options?: grpc.CallOptions) => grpc.ClientDuplexStream<EchoMessage, EchoMessage>;
};

const EchoClientConstructor = grpc.makeGenericClientConstructor(ECHO_SERVICE, 'Echo');

/** A client of the echo service at `address` (`host:port`), over h2c unless `credentials` say otherwise. */
export function echoClient(address: string, credentials = grpc.credentials.createInsecure()): EchoClient {
  return new EchoClientConstructor(address, credentials) as unknown as EchoClient;
}

/** What a unary call ended with: its answer, or its error; its initial metadata and its status either way. */
export interface UnaryOutcome {
  answer?: EchoMessage;
  error?: grpc.ServiceError;
  initial?: grpc.Metadata;
  status: grpc.StatusObject;
}

/** Makes a unary call and waits for its status. */
export function unary(
  client: EchoClient,
  request: EchoMessage,
  metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
): Promise<UnaryOutcome> {
  return new Promise((resolve) => {
    const outcome: Partial<UnaryOutcome> = {};
    let pending = 2;
    const done = () => {
      if (--pending === 0) resolve(outcome as UnaryOutcome);
    };
    const call = client.unary(request, metadata, options, (error, answer) => {
      if (error) outcome.error = error;
      else outcome.answer = answer;
      done();
    });
    call.on('metadata', (m) => (outcome.initial = m));
    call.on('status', (s) => {
      outcome.status = s;
      done();
    });
  });
}
