/**
 * @module test/support/stage-app
 * A small Koa app standing in for the gateway around one stage (auth or
 * rate limit), with a backend behind it that reports what it was given.
 */
import type Koa from 'koa';
import { createServiceApp, ORIGINAL_PATH } from '../../src/http';
import type { MappingRecord } from '../../src/gateway/config/schema';
import type { Stage } from '../../src/gateway/stages/stage';

/** What the stand-in backend of {@link stageApp} answers: what it was given. */
export interface BackendView {
  headers: Record<string, string | string[] | undefined>;
  rawHeaders: string[];
}

/**
 * A Koa app with the project's error handling standing in for the gateway:
 * it records `originalPath` (the client's normalised path, when given) as the
 * gateway does, turns an `X-Demo-User` header into `x-travel-user` (as the
 * auth stage would set it), runs the stage for `route`, and, when the stage
 * lets the request on, answers as a backend that echoes the headers it sees.
 * `backendCalls` counts the requests that got there.
 */
export function stageApp(
  stage: Stage,
  route: MappingRecord,
  originalPath?: (path: string) => string,
): { app: Koa; seen: { backendCalls: number } } {
  const app = createServiceApp();
  const seen = { backendCalls: 0 };
  app.use(async (ctx) => {
    if (originalPath) ctx.state[ORIGINAL_PATH] = originalPath(ctx.path);
    ctx.state.mapping = route;
    const user = ctx.get('x-demo-user');
    if (user) ctx.req.headers['x-travel-user'] = user;
    if (!(await stage.run(ctx, route))) return;
    seen.backendCalls++;
    const view: BackendView = { headers: { ...ctx.request.headers }, rawHeaders: ctx.req.rawHeaders };
    ctx.body = view;
  });
  return { app, seen };
}
