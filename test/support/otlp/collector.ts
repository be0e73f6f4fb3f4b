/**
 * @module test/support/otlp/collector
 * A stand-in for an OpenTelemetry Collector: a real HTTP server taking
 * `POST /v1/traces` as OTLP protobuf or JSON, and a real grpc-js server
 * implementing `opentelemetry.proto.collector.trace.v1.TraceService`, both
 * decoding what they receive with the official protos (beside this file),
 * so that a test reads the spans as a collector would.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { startedInHooks } from '../started-in-hooks';

const PROTO_DIR = __dirname;
const SERVICE_PROTO = 'opentelemetry/proto/collector/trace/v1/trace_service.proto';
const KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'] as const;

export type Attributes = Record<string, string | number | boolean>;

/** A span as the collector received it. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly traceState: string;
  readonly name: string;
  readonly kind: (typeof KINDS)[number];
  readonly attributes: Attributes;
  readonly events: readonly { name: string; attributes: Attributes }[];
  /** 0 unset, 1 ok, 2 error. */
  readonly status: { code: number; message: string };
  readonly resource: Attributes;
  readonly via: 'http/protobuf' | 'http/json' | 'grpc';
}

/** An export request as received: its transport and headers (or metadata). */
export interface ReceivedExport {
  readonly via: ReceivedSpan['via'];
  readonly headers: Record<string, string>;
}

// Decoded protobuf and JSON, read loosely: the test asserts what it finds.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;

function hex(bytes: unknown): string {
  if (typeof bytes === 'string') return bytes;
  if (bytes instanceof Uint8Array) return Buffer.from(bytes).toString('hex');
  return '';
}

/** An AnyValue as a plain value, from the proto's (snake case) or JSON's (camel case) spelling. */
function valueOf(value: Loose | undefined): string | number | boolean {
  if (value === undefined || value === null) return '';
  const v = value.string_value ?? value.stringValue;
  if (v !== undefined) return v as string;
  const b = value.bool_value ?? value.boolValue;
  if (b !== undefined) return b as boolean;
  const i = value.int_value ?? value.intValue;
  if (i !== undefined) return Number(i);
  const d = value.double_value ?? value.doubleValue;
  if (d !== undefined) return Number(d);
  return JSON.stringify(value);
}

function attributesOf(list: Loose[] | undefined): Attributes {
  const out: Attributes = {};
  for (const kv of list ?? []) out[kv.key as string] = valueOf(kv.value as Loose);
  return out;
}

function kindOf(kind: unknown): ReceivedSpan['kind'] {
  if (typeof kind === 'number') return KINDS[kind];
  return String(kind).replace(/^SPAN_KIND_/, '') as ReceivedSpan['kind'];
}

/** The spans of one export request, whichever spelling it came in. */
function spansOf(request: Loose, via: ReceivedSpan['via']): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of (request.resource_spans ?? request.resourceSpans ?? []) as Loose[]) {
    const resource = attributesOf((rs.resource as Loose | undefined)?.attributes as Loose[]);
    for (const ss of (rs.scope_spans ?? rs.scopeSpans ?? []) as Loose[]) {
      for (const s of (ss.spans ?? []) as Loose[]) {
        const status = (s.status ?? {}) as Loose;
        out.push({
          traceId: hex(s.trace_id ?? s.traceId),
          spanId: hex(s.span_id ?? s.spanId),
          parentSpanId: hex(s.parent_span_id ?? s.parentSpanId),
          traceState: (s.trace_state ?? s.traceState ?? '') as string,
          name: s.name as string,
          kind: kindOf(s.kind),
          attributes: attributesOf(s.attributes as Loose[]),
          events: ((s.events ?? []) as Loose[]).map((e) => ({
            name: e.name as string,
            attributes: attributesOf(e.attributes as Loose[]),
          })),
          status: {
            code:
              typeof status.code === 'number'
                ? status.code
                : status.code === 'STATUS_CODE_ERROR'
                  ? 2
                  : status.code === 'STATUS_CODE_OK'
                    ? 1
                    : 0,
            message: (status.message ?? '') as string,
          },
          resource,
          via,
        });
      }
    }
  }
  return out;
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = String(value);
  return out;
}

/** A running stand-in collector. */
export interface OtlpCollector {
  /** `http://127.0.0.1:<port>`, taking OTLP/HTTP at `/v1/traces`. */
  readonly httpUrl: string;
  /** `http://127.0.0.1:<port>` of the gRPC TraceService. */
  readonly grpcUrl: string;
  readonly spans: ReceivedSpan[];
  readonly exports: ReceivedExport[];
  /** Resolves with the spans received once `done` says they are all there (waiting for the next export otherwise). */
  waitFor(done: (spans: readonly ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** Starts a collector on free ports of 127.0.0.1. */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: ReceivedSpan[] = [];
  const exports: ReceivedExport[] = [];
  const waiters = new Set<() => void>();
  const received = (batch: ReceivedSpan[], exported: ReceivedExport) => {
    spans.push(...batch);
    exports.push(exported);
    for (const wake of [...waiters]) wake();
  };

  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(PROTO_DIR, target);
  root.loadSync(SERVICE_PROTO, { keepCase: true });
  const requestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  const responseType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');

  const http: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const json = String(req.headers['content-type']).startsWith('application/json');
      const via = json ? 'http/json' : 'http/protobuf';
      const request = json
        ? (JSON.parse(body.toString('utf8')) as Loose)
        : requestType.toObject(requestType.decode(body), { longs: String, enums: String });
      received(spansOf(request, via), { via, headers: flatHeaders(req.headers) });
      if (json) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(responseType.encode({}).finish());
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));

  const definition = protoLoader.loadSync(SERVICE_PROTO, {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    includeDirs: [PROTO_DIR],
  });
  const grpcServer = new grpc.Server();
  grpcServer.addService(definition['opentelemetry.proto.collector.trace.v1.TraceService'] as grpc.ServiceDefinition, {
    Export(call: grpc.ServerUnaryCall<Loose, Loose>, callback: grpc.sendUnaryData<Loose>) {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(call.metadata.getMap())) headers[name] = String(value);
      received(spansOf(call.request, 'grpc'), { via: 'grpc', headers });
      callback(null, {});
    },
  });
  const grpcPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );

  return {
    httpUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    grpcUrl: `http://127.0.0.1:${grpcPort}`,
    spans,
    exports,
    waitFor(done) {
      return new Promise((resolve) => {
        const check = () => {
          if (!done(spans)) return;
          waiters.delete(check);
          resolve([...spans]);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      await new Promise<void>((resolve) => grpcServer.tryShutdown(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * Starts a collector before the tests of the calling describe block and
 * closes it after them. What it returns reads the running collector, so a
 * test declared at describe time may name it; closing it is the after hook's.
 */
export function useOtlpCollector(): Omit<OtlpCollector, 'close'> {
  const started = startedInHooks('the collector', startOtlpCollector, (collector) => collector.close());
  return {
    get httpUrl() {
      return started().httpUrl;
    },
    get grpcUrl() {
      return started().grpcUrl;
    },
    get spans() {
      return started().spans;
    },
    get exports() {
      return started().exports;
    },
    waitFor: (done) => started().waitFor(done),
  };
}
