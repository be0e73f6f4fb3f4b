/**
 * @module test/support/records
 * Pieces of the rate-limit stage tests: records with their defaults, the demo
 * labels, and a small Koa app standing in for the gateway around a stage.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type Koa from 'koa';
import { createServiceApp } from '../../src/http';
import {
  mappingSchema,
  rateLimitServiceSchema,
  type MappingRecord,
  type RateLimitServiceRecord,
} from '../../src/gateway/config/schema';
import type { Stage } from '../../src/gateway/stages/stage';

/** The labels block of the demo's services.yaml, as config/ratelimit.yaml expects it. */
export const DEMO_LABELS = {
  gateway: [
    {
      request_label_group: [{ 'x-gateway-test-allow': { header: 'x-gateway-test-allow', omit_if_not_present: true } }],
    },
    { request_label_group: [{ user: { header: 'x-travel-user', omit_if_not_present: false } }] },
  ],
};

export function mappingRecord(fields: Partial<Record<keyof MappingRecord, unknown>> = {}): MappingRecord {
  return mappingSchema.parse({
    apiVersion: 'gateway/v1',
    kind: 'Mapping',
    name: 'hotels',
    prefix: '/v1/hotels',
    service: 'hotel-booking',
    labels: DEMO_LABELS,
    ...fields,
  });
}

export function rateLimitRecord(
  fields: Partial<Record<keyof RateLimitServiceRecord, unknown>> = {},
): RateLimitServiceRecord {
  return rateLimitServiceSchema.parse({
    apiVersion: 'gateway/v1',
    kind: 'RateLimitService',
    name: 'limits',
    service: 'ratelimit',
    ...fields,
  });
}

/**
 * A Koa app with the project's error handling standing in for the gateway:
 * an optional `X-Demo-User` becomes `x-travel-user` (as the auth stage would
 * set it), then the stage runs, then a backend answers 200.
 */
export function stageApp(stage: Stage, mapping: MappingRecord): { app: Koa; seen: { backendCalls: number } } {
  const app = createServiceApp();
  const seen = { backendCalls: 0 };
  app.use(async (ctx) => {
    const user = ctx.get('x-demo-user');
    if (user) ctx.req.headers['x-travel-user'] = user;
    if (!(await stage.run(ctx, mapping))) return;
    seen.backendCalls++;
    ctx.body = { reached: true };
  });
  return { app, seen };
}

export interface RemoteService {
  address: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the rate-limit gRPC server in a second process with the limits of `dir`. */
export async function startRemoteService(dir: string): Promise<RemoteService> {
  const launcher = path.join(__dirname, 'ratelimit-process.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', launcher, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the rate-limit service exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    address: `127.0.0.1:${port}`,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
