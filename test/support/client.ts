/**
 * @module test/support/client
 * Test fixtures for the gateway: echo modules that answer with what they saw,
 * configs from records, servers on real ports, and a recording upstream.
 */
import assert from 'node:assert/strict';
import http, { type IncomingHttpHeaders } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type Koa from 'koa';
import { absoluteUrl, createServiceApp, readJson } from '../../src/http';
import {
  configFromRecords,
  parseConfigFiles,
  type GatehouseModule,
  type GatewayConfig,
  type MappingRecord,
} from '../../src/gateway';

/** What an echo module answers. */
export interface Echo {
  module: string;
  method: string;
  path: string;
  url: string;
  query: string;
  originalPath: unknown;
  mapping?: string;
  self: string;
  headers: IncomingHttpHeaders;
  body?: unknown;
}

/**
 * A module that answers every request with what it saw. `POST .../json`
 * reads a JSON body with a generous limit of its own (8 MiB), so that the
 * gateway's limit is the one that counts.
 */
export function echoModule(name: string): GatehouseModule & { app: Koa } {
  const app = createServiceApp();
  app.use(async (ctx) => {
    const echo: Echo = {
      module: name,
      method: ctx.method,
      path: ctx.path,
      url: ctx.url,
      query: ctx.querystring,
      originalPath: ctx.state.gatehouseOriginalPath,
      mapping: ctx.state.mapping?.name,
      self: absoluteUrl(ctx, ctx.path),
      headers: ctx.headers,
    };
    if (ctx.method === 'POST' && ctx.path.endsWith('/json')) echo.body = await readJson(ctx, 8 * 1024 * 1024);
    ctx.set('X-Echo-Module', name);
    ctx.body = echo;
  });
  return { name, app };
}

/** A registry of modules. */
export function registry(...modules: GatehouseModule[]): Map<string, GatehouseModule> {
  return new Map(modules.map((m) => [m.name, m]));
}

let counter = 0;

/** A Mapping record with defaults for what a test does not care about. */
export function mapping(prefix: string, service: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'gateway/v1', kind: 'Mapping', name: `m${++counter}`, prefix, service, ...extra };
}

/** A valid configuration from records; fails the test when it is not valid. */
export function configOf(...records: unknown[]): GatewayConfig {
  const result = configFromRecords(records);
  if (!result.ok) assert.fail(result.problems.map((p) => p.text).join('\n'));
  return result.config;
}

/** A server on 127.0.0.1 and a random port. */
export async function listen(
  handler: http.RequestListener,
): Promise<{ server: http.Server; url: string; port: number }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, port };
}

/** Closes a server, dropping idle keep-alive connections. */
export async function close(server: http.Server | undefined): Promise<void> {
  if (!server || !server.listening) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A port nobody listens on: opened, then closed. */
export async function deadPort(): Promise<number> {
  const { server, port } = await listen(() => undefined);
  await close(server);
  return port;
}

/** What a recording upstream received. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

/** A plain node server recording every request; `respond` answers it (default: 200 `ok`). */
export async function recordingUpstream(
  respond: (req: http.IncomingMessage, res: http.ServerResponse, received: Received) => void = (_req, res) => {
    res.setHeader('Content-Type', 'text/plain');
    res.end('ok');
  },
): Promise<{ server: http.Server; url: string; port: number; received: Received[] }> {
  const received: Received[] = [];
  const up = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      };
      received.push(r);
      respond(req, res, r);
    });
  });
  return { ...up, received };
}

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

/** A Kubernetes Service manifest named `name` whose annotation (`<domain>/config`) holds `records`. */
export function serviceManifest(name: string, records: string, domain = 'gatehouse.io'): string {
  const indented = records
    .trim()
    .split('\n')
    .map((line) => `      ${line}`)
    .join('\n');
  return `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  annotations:
    ${domain}/config: |
${indented}
spec:
  ports:
    - port: 80
`;
}

/** Loading one Mapping, written in a Service manifest with extra fields, as `config/services.yaml`. */
export interface MappingFields {
  /** Where its problems are said to be: `<file>: service <service>: Mapping <name>:`. */
  readonly at: string;
  /** The Mapping with `fields` (YAML lines) added; fails the test when it is refused. */
  load(fields: string): MappingRecord;
  /** The problems of the Mapping with `fields` added; fails the test when it loads. */
  problems(fields: string): string[];
}

/** A Mapping of `prefix` to a remote address in the manifest of `service`, to load with fields added. */
export function mappingFields(service: string, name: string, prefix: string): MappingFields {
  const file = 'config/services.yaml';
  const parse = (fields: string) =>
    parseConfigFiles([
      {
        file,
        text: serviceManifest(
          service,
          `apiVersion: gateway/v1\nkind: Mapping\nname: ${name}\nprefix: ${prefix}\nservice: 127.0.0.1:9\n${fields.trim()}\n`,
        ),
      },
    ]);
  return {
    at: `${file}: service ${service}: Mapping ${name}:`,
    load(fields) {
      const result = parse(fields);
      if (!result.ok) assert.fail(result.problems.map((p) => p.text).join('\n'));
      return result.config.mappings[0];
    },
    problems(fields) {
      const result = parse(fields);
      assert.equal(result.ok, false, 'the config should have been refused');
      return result.ok ? [] : result.problems.map((p) => p.text);
    },
  };
}
