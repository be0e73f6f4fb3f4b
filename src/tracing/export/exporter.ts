/**
 * @module tracing/export/exporter
 * The official OTLP exporters, in two halves: the serializer of the
 * protocol asked for (protobuf, or JSON for `http/json`), which turns a
 * batch of spans into the request body where the spans are, and the
 * exporter's transport (HTTP or gRPC, with its headers, timeout, retries
 * and response handling), which the export thread sends that body with.
 * Each half is the one the official `OTLPTraceExporter` of the protocol
 * puts together; only the thread boundary lies between them.
 */
import type { Metadata } from '@grpc/grpc-js';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { ExportResult } from '@opentelemetry/core';
import { grpcJs } from '../../platform/grpc-js';
import type { OtlpProtocol } from '../settings';

type Transformer = typeof import('@opentelemetry/otlp-transformer');

/** Where and how spans are sent: the part of the settings the export thread needs. */
export interface ExporterSettings {
  readonly endpoint: string;
  readonly protocol: OtlpProtocol;
  /** Sent with every export (an API key): never logged. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

/** A batch, serialized: the request body, and how many spans it holds. */
export interface SerializedBatch {
  readonly body: Uint8Array;
  readonly spans: number;
}

/** Serializes batches of spans as the official exporter of `protocol` does. */
export function batchSerializer(protocol: OtlpProtocol): (spans: ReadableSpan[]) => Uint8Array | undefined {
  const transformer = require('@opentelemetry/otlp-transformer') as Transformer;
  const serializer = protocol === 'http/json' ? transformer.JsonTraceSerializer : transformer.ProtobufTraceSerializer;
  return (spans) => serializer.serializeRequest(spans);
}

/** What sends serialized batches: the official exporter's transport. */
export interface BatchSender {
  export(batch: SerializedBatch, done: (result: ExportResult) => void): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** The official exporter of `settings.protocol`, taking batches its own serializer has already written. */
export function batchSender(settings: ExporterSettings): BatchSender {
  const base = require('@opentelemetry/otlp-exporter-base') as typeof import('@opentelemetry/otlp-exporter-base');
  const transformer = require('@opentelemetry/otlp-transformer') as Transformer;
  const json = settings.protocol === 'http/json';
  const official = json ? transformer.JsonTraceSerializer : transformer.ProtobufTraceSerializer;
  const serializer = {
    serializeRequest: (batch: SerializedBatch) => batch.body,
    deserializeResponse: (data: Uint8Array) => official.deserializeResponse(data),
  };
  const counted = { name: 'span' as const, countItems: (batch: SerializedBatch) => batch.spans };
  const common = { url: settings.endpoint, timeoutMillis: settings.timeoutMs };
  if (settings.protocol !== 'grpc') {
    const http =
      require('@opentelemetry/otlp-exporter-base/node-http') as typeof import('@opentelemetry/otlp-exporter-base/node-http');
    const options = http.convertLegacyHttpOptions(
      { ...common, headers: { ...settings.headers } },
      'TRACES',
      'v1/traces',
      {
        'Content-Type': json ? 'application/json' : 'application/x-protobuf',
      },
    );
    return new base.OTLPExporterBase(
      http.createOtlpHttpExportDelegate(options, serializer, 'otlp_http_span_exporter', counted, undefined),
    );
  }
  const grpc = grpcJs();
  const grpcBase =
    require('@opentelemetry/otlp-grpc-exporter-base') as typeof import('@opentelemetry/otlp-grpc-exporter-base');
  const metadata: Metadata = new grpc.Metadata();
  for (const [name, value] of Object.entries(settings.headers)) metadata.set(name, value);
  // The scheme says whether the collector speaks TLS; a bare host:port is plaintext, as a TracingService's is.
  const credentials = settings.endpoint.startsWith('https://')
    ? grpc.credentials.createSsl()
    : grpc.credentials.createInsecure();
  const options = grpcBase.convertLegacyOtlpGrpcOptions({ ...common, metadata, credentials }, 'TRACES');
  return new base.OTLPExporterBase(
    grpcBase.createOtlpGrpcExportDelegate(
      options,
      serializer,
      'otlp_grpc_span_exporter',
      counted,
      undefined,
      'TraceExportService',
      '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    ),
  );
}
