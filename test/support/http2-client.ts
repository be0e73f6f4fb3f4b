/**
 * @module test/support/http2-client
 * HTTP/2 requests for tests, with Node's own client: over h2c with prior
 * knowledge, or TLS with ALPN. The path is sent as written: no client
 * library tidies it on the way.
 */
import http2, { type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';

/** An HTTP/2 answer as a test reads it. */
export interface H2Answer {
  status: number;
  headers: IncomingHttpHeaders;
  trailers: IncomingHttpHeaders;
  text: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface H2RequestOptions {
  method?: string;
  headers?: OutgoingHttpHeaders;
  /** A body: sent whole with its length, or, as a list, in parts without one. */
  body?: string | Buffer | (string | Buffer)[];
}

/** Connects to `base` (`http://` for h2c, `https://` for TLS, trusting `ca`) and waits until the session is up. */
export async function h2Connect(base: string, ca?: Buffer | string): Promise<ClientHttp2Session> {
  const session = http2.connect(base, ca === undefined ? {} : { ca, servername: 'localhost' });
  await new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('error', reject);
  });
  session.on('error', () => {});
  return session;
}

/** One request on `session`, read to its end. */
export function h2Request(
  session: ClientHttp2Session,
  path: string,
  options: H2RequestOptions = {},
): Promise<H2Answer> {
  const { body } = options;
  const headers: OutgoingHttpHeaders = { ':method': options.method ?? 'GET', ':path': path, ...options.headers };
  if (typeof body === 'string' || Buffer.isBuffer(body)) headers['content-length'] = Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    let status = 0;
    let answerHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
      answerHeaders = h;
    });
    stream.on('trailers', (t) => (trailers = t));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => {
      if (status === 0) reject(new Error(`the stream closed without an answer (code ${stream.rstCode ?? 'none'})`));
    });
    stream.on('end', () => {
      if (status === 0) {
        reject(new Error(`the stream ended without an answer (code ${stream.rstCode ?? 'none'})`));
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status, headers: answerHeaders, trailers, text, json: () => JSON.parse(text) });
    });
    if (Array.isArray(body)) {
      for (const part of body) stream.write(part);
      stream.end();
    } else if (body !== undefined) {
      stream.end(body);
    }
  });
}

/** One request on a session of its own, closed after; over TLS trusting `ca`. */
export async function h2Send(
  base: string,
  path: string,
  options: H2RequestOptions & { ca?: Buffer } = {},
): Promise<H2Answer> {
  const session = await h2Connect(base, options.ca);
  try {
    return await h2Request(session, path, options);
  } finally {
    session.close();
  }
}
