/**
 * @module test/support/credentials
 * Shared pieces of the auth and auth-stage tests: users files in a temporary
 * folder, Basic headers, a logger that keeps every line it is given, and a
 * stand-in gateway around a stage.
 */
import bcrypt from 'bcryptjs';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuthLogger } from '../../src/auth';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServiceApp, ORIGINAL_PATH } from '../../src/http';
import {
  mappingSchema,
  authServiceSchema,
  type AuthServiceRecord,
  type MappingRecord,
} from '../../src/gateway/config/schema';
import type { Stage } from '../../src/gateway/stages/stage';

/** `Basic base64(user:password)`. */
export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

/** A bcrypt hash at the lowest cost, so tests stay quick. */
export function quickHash(password: string, version: '2a' | '2b' | '2y' = '2y'): string {
  return bcrypt.hashSync(password, 4).replace(/^\$2b\$/, `$${version}$`);
}

/** A temporary folder holding users files; `remove()` it in `after`. */
export function usersFolder(): { dir: string; write(name: string, text: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-auth-'));
  return {
    dir,
    write(name, text) {
      const file = join(dir, name);
      writeFileSync(file, text);
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  obj: object;
  msg: string;
}

/** A logger that keeps what it is told; `text()` is everything, as one string. */
export function captureLogger(): AuthLogger & { lines: LogLine[]; text(): string } {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (obj: object, msg: string) => void lines.push({ level, obj, msg });
  return {
    lines,
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    text: () => lines.map((l) => `${l.level} ${JSON.stringify(l.obj)} ${l.msg}`).join('\n'),
  };
}

/** A Mapping record with its defaults, as the config loader gives it. */
export function mapping(fields: Partial<Record<keyof MappingRecord, unknown>> = {}): MappingRecord {
  return mappingSchema.parse({
    apiVersion: 'gateway/v1',
    kind: 'Mapping',
    name: 'hotels',
    prefix: '/v1/hotels',
    service: 'hotel-booking',
    ...fields,
  });
}

/** An AuthService record with its defaults. */
export function authRecord(fields: Partial<Record<keyof AuthServiceRecord, unknown>>): AuthServiceRecord {
  return authServiceSchema.parse({
    apiVersion: 'gateway/v1',
    kind: 'AuthService',
    name: 'authentication',
    auth_service: 'auth',
    ...fields,
  });
}

/** What the stand-in backend of {@link stageApp} answers: what it was given. */
export interface BackendView {
  headers: Record<string, string | string[] | undefined>;
  rawHeaders: string[];
}

/**
 * A small Koa app standing in for the gateway: it records `originalPath` (the
 * client's normalised path, when given) as the gateway does, runs the stage for
 * `route`, and, when the stage lets the request on, answers as a backend that
 * echoes the headers it sees. `backendCalls` counts the requests that got there.
 */
export function stageApp(stage: Stage, route: MappingRecord, originalPath?: (path: string) => string) {
  const app = createServiceApp();
  const seen = { backendCalls: 0 };
  app.use(async (ctx) => {
    if (originalPath) ctx.state[ORIGINAL_PATH] = originalPath(ctx.path);
    ctx.state.mapping = route;
    if (!(await stage.run(ctx, route))) return;
    seen.backendCalls++;
    const view: BackendView = { headers: { ...ctx.request.headers }, rawHeaders: ctx.req.rawHeaders };
    ctx.body = view;
  });
  return { app, seen };
}

/** Listens on 127.0.0.1, any port; resolves `host:port`. */
export function listenLocal(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** The nice value of each thread of this process, by thread id (Linux). */
export function threadNiceness(): Map<string, number> {
  const nice = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // Fields after the command's closing parenthesis: state is field 3, nice field 19.
      nice.set(tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return nice;
}
