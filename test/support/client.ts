/**
 * @module test/support/client
 * HTTP/1.1 requests as a test sends them: exactly as written (no path
 * normalisation, chunked bodies on demand), raw bytes no client would send,
 * and answers read until they are cut.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import net from 'node:net';

/** A response as a test reads it. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * Sends one request exactly as written: the path is not normalised on the way
 * (as URL-based clients do), and a body given as a list of chunks is sent
 * chunked, without Content-Length.
 */
export function send(
  base: string,
  path: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer | (string | Buffer)[];
    agent?: http.Agent;
  } = {},
): Promise<Answer> {
  const url = new URL(base);
  const headers = Array.isArray(options.body)
    ? { 'Transfer-Encoding': 'chunked', ...options.headers }
    : options.headers;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: options.method ?? 'GET',
        headers,
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    const body = options.body;
    if (Array.isArray(body)) {
      for (const chunk of body) req.write(chunk);
      req.end();
    } else {
      req.end(body);
    }
  });
}

/** The status and body of an answer read to its end or until it is cut, and whether it came whole. */
export function partialAnswer(base: string, path: string): Promise<{ status: number; body: string; whole: boolean }> {
  return new Promise((resolve) => {
    const req = http.get(`${base}${path}`, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('error', () => resolve({ status: res.statusCode!, body, whole: false }));
      res.on('end', () => resolve({ status: res.statusCode!, body, whole: res.complete }));
    });
    req.on('error', () => resolve({ status: 0, body: '', whole: false }));
  });
}

/**
 * The {@link partialAnswer} to the first of `paths` whose head came before
 * its Mapping's bound, each path a Mapping of a longer bound than the one
 * before. A bound that counts from the request (timeout_ms,
 * idle_timeout_ms) can pass before a loaded machine has passed the
 * answer's head on: its 504 is then right, but not the case a test of what
 * comes after the head checks. The last path's answer is returned,
 * whatever it is.
 */
export async function partialAnswerAfterHead(
  base: string,
  paths: readonly string[],
): Promise<{ status: number; body: string; whole: boolean }> {
  for (const [i, path] of paths.entries()) {
    const answer = await partialAnswer(base, path);
    if (answer.status !== 504 || i === paths.length - 1) return answer;
  }
  throw new Error('no path to ask');
}

/**
 * Sends `head` (the request line and header lines, without the blank line
 * that ends them) as it is written, bytes that no HTTP client would send
 * included, with `Connection: close`, and reads the answer to its end.
 */
export function sendRaw(port: number, head: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`${head}\r\nConnection: close\r\n\r\n`, 'utf8'));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const reply = Buffer.concat(chunks).toString('utf8');
      const end = reply.indexOf('\r\n\r\n');
      const lines = reply.slice(0, end).split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(lines[0] ?? '')?.[1]);
      const headers: IncomingHttpHeaders = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const text = end < 0 ? '' : reply.slice(end + 4);
      resolve({ status, headers, text, json: () => JSON.parse(text) });
    });
  });
}

/** What {@link decided} reads of an answer: supertest's, fetch's or {@link Answer} alike. */
interface Asked {
  status: number;
  headers: Headers | IncomingHttpHeaders;
}

/**
 * The answer of `ask` once it is a decision: asked again, after the
 * Retry-After it says, while it is a 429 that says one. The auth service
 * answers so when a bcrypt check waited more than a second for a thread,
 * as it does on a loaded machine; a test that checks a decision (200, 401,
 * 404) is not about that.
 */
export async function decided<T extends Asked>(ask: () => PromiseLike<T>): Promise<T> {
  for (;;) {
    const answer = await ask();
    const after = answer.headers instanceof Headers ? answer.headers.get('retry-after') : answer.headers['retry-after'];
    if (answer.status !== 429 || typeof after !== 'string') return answer;
    await new Promise((resolve) => setTimeout(resolve, Number(after) * 1000));
  }
}
