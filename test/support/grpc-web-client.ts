/**
 * @module test/support/grpc-web-client
 * gRPC-Web calls framed by hand, as a browser's client frames them: a
 * message as a frame (flag 0, 4-byte length), base64 for the text form, and
 * the answer's body read back into its message frames and its trailer
 * frame (flag 0x80, `key:value\r\n` lines). Sent over HTTP/1.1 (node:http)
 * or HTTP/2 (node:http2, h2c).
 */
import { request } from 'node:http';
import http2, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';

/** A gRPC-Web answer as a test reads it. */
export interface GrpcWebAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as it came (base64 text for a text answer). */
  raw: Buffer;
  /** The messages of the data frames, as text. */
  messages: string[];
  /** The trailer frame's lines, in order, as sent. */
  trailerLines: string[];
  /** The trailer frame's entries. */
  trailers: Record<string, string>;
  /** Frames after the trailer frame (none in a well-formed answer). */
  framesAfterTrailers: number;
}

/** One message as a gRPC(-Web) frame. */
export function frame(message: string | Buffer): Buffer {
  const body = Buffer.isBuffer(message) ? message : Buffer.from(message);
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** Base64 text whose padded quartets may come anywhere, as gRPC-Web's clients read it. */
export function decodeBase64Quartets(text: string): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < text.length; at += 4) parts.push(Buffer.from(text.slice(at, at + 4), 'base64'));
  return Buffer.concat(parts);
}

/** Reads an answer's body into its frames. */
export function readFrames(
  body: Buffer,
): Pick<GrpcWebAnswer, 'messages' | 'trailerLines' | 'trailers' | 'framesAfterTrailers'> {
  const messages: string[] = [];
  let trailerLines: string[] = [];
  const trailers: Record<string, string> = {};
  let framesAfterTrailers = 0;
  let seenTrailers = false;
  for (let at = 0; at + 5 <= body.length;) {
    const flag = body[at];
    const length = body.readUInt32BE(at + 1);
    const content = body.subarray(at + 5, at + 5 + length);
    at += 5 + length;
    if (seenTrailers) framesAfterTrailers++;
    if (flag === 0x80) {
      seenTrailers = true;
      trailerLines = content.toString('latin1').split('\r\n');
      for (const line of trailerLines) {
        const colon = line.indexOf(':');
        if (colon > 0) trailers[line.slice(0, colon)] = line.slice(colon + 1);
      }
    } else {
      messages.push(content.toString());
    }
  }
  return { messages, trailerLines, trailers, framesAfterTrailers };
}

function answerOf(status: number, headers: IncomingHttpHeaders, raw: Buffer): GrpcWebAnswer {
  const type = String(headers['content-type'] ?? '');
  const bytes = type.startsWith('application/grpc-web-text') ? decodeBase64Quartets(raw.toString('latin1')) : raw;
  return { status, headers, raw, ...readFrames(bytes) };
}

/** A gRPC-Web call: its body in parts (written one by one), over HTTP/1.1 or HTTP/2. */
export interface GrpcWebRequest {
  readonly port: number;
  readonly path: string;
  readonly headers: OutgoingHttpHeaders;
  readonly parts: (string | Buffer)[];
  readonly http2?: boolean;
  readonly method?: string;
}

/** Sends `call` and reads its answer to the end. */
export function grpcWebCall(call: GrpcWebRequest): Promise<GrpcWebAnswer> {
  return call.http2 === true ? overHttp2(call) : overHttp1(call);
}

function overHttp1(call: GrpcWebRequest): Promise<GrpcWebAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: call.port, path: call.path, method: call.method ?? 'POST', headers: call.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(answerOf(res.statusCode ?? 0, res.headers, Buffer.concat(chunks))));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    for (const part of call.parts) req.write(part);
    req.end();
  });
}

async function overHttp2(call: GrpcWebRequest): Promise<GrpcWebAnswer> {
  const session = http2.connect(`http://127.0.0.1:${call.port}`);
  session.on('error', () => {});
  try {
    return await new Promise<GrpcWebAnswer>((resolve, reject) => {
      const stream = session.request({ ':method': call.method ?? 'POST', ':path': call.path, ...call.headers });
      let status = 0;
      let headers: IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      stream.on('response', (h) => {
        status = Number(h[':status']);
        headers = h;
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => resolve(answerOf(status, headers, Buffer.concat(chunks))));
      stream.on('error', reject);
      for (const part of call.parts) stream.write(part);
      stream.end();
    });
  } finally {
    session.close();
  }
}
