/**
 * @module bench/harness/selfcheck
 * What the benchmark asks of every deployment before measuring it, so that a
 * wrong peer fails loudly instead of winning: GET /v1/messages/1 answers 200
 * with the very bytes the gateway's api module gives for the same Host (for
 * a proxy: the upstream's bytes); one that asks for credentials answers 401
 * without them and with a wrong password; one that limits answers 429 past
 * its limit, for that user only.
 */
import http from 'node:http';
import { join } from 'node:path';
import type { DeploymentSpec } from './deployments';

export const MESSAGE_PATH = '/v1/messages/1';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
/** The demo users of config/users.htpasswd. */
export const ALICE = basic('alice', 'wonderland');
const BOB = basic('bob', 'builder');
const WRONG = basic('alice', 'not-her-password');

/** The limit a minute of the instance {@link checkLimit} is given. */
export const CHECK_LIMIT = 3;

interface Answer {
  status: number;
  contentType?: string;
  body: Buffer;
}

function get(port: number, authorization?: string, host?: string): Promise<Answer> {
  const headers: http.OutgoingHttpHeaders = {};
  if (authorization) headers.authorization = authorization;
  if (host) headers.host = host;
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: MESSAGE_PATH, headers, agent: false, timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, contentType: res.headers['content-type'], body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.once('timeout', () => req.destroy(new Error(`GET ${MESSAGE_PATH} on port ${port} got no answer in 30 s`)));
    req.once('error', reject);
  });
}

/** What the gateway's api module (compiled, from dist/) answers to GET /v1/messages/1 with this Host. */
export async function apiAnswer(dist: string, host: string): Promise<Answer> {
  const { createApiModule } = require(join(dist, 'api')) as typeof import('../../src/api');
  const server = http.createServer(createApiModule({ proxy: false }).app!.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await get((server.address() as { port: number }).port, undefined, host);
  } finally {
    server.close();
  }
}

class CheckFailure extends Error {}

function expect(spec: DeploymentSpec, what: string, ok: boolean, got: string): void {
  if (!ok) throw new CheckFailure(`${spec.name} (${spec.key}): ${what}; got ${got}`);
}

const shown = (a: Answer) =>
  `${a.status} ${a.contentType ?? '(no content-type)'} ${JSON.stringify(a.body.toString('utf8').slice(0, 200))}`;

/** Checks the answers of `spec` listening on `port`; `expected` is the right 200. Throws what is wrong. */
export async function checkAnswers(spec: DeploymentSpec, port: number, expected: Answer): Promise<void> {
  const ok = await get(port, spec.auth ? ALICE : undefined);
  expect(
    spec,
    `GET ${MESSAGE_PATH} must answer 200 with the api's bytes ${shown(expected)}`,
    ok.status === 200 && ok.body.equals(expected.body),
    shown(ok),
  );
  expect(
    spec,
    `its content-type must be the api's (${expected.contentType})`,
    ok.contentType === expected.contentType,
    String(ok.contentType),
  );
  if (!spec.auth) return;
  const none = await get(port);
  expect(spec, 'without credentials it must answer 401', none.status === 401, shown(none));
  const wrong = await get(port, WRONG);
  expect(spec, 'with a wrong password it must answer 401', wrong.status === 401, shown(wrong));
}

/** Checks that `spec`, given a limit of {@link CHECK_LIMIT} a minute, answers alice 429 past it, and bob still 200. */
export async function checkLimit(spec: DeploymentSpec, port: number): Promise<void> {
  const statuses: number[] = [];
  for (let i = 0; i <= CHECK_LIMIT; i++) statuses.push((await get(port, ALICE)).status);
  const want = [...Array<number>(CHECK_LIMIT).fill(200), 429];
  expect(
    spec,
    `with a limit of ${CHECK_LIMIT} a minute, alice's ${CHECK_LIMIT + 1} requests must answer ${want.join(' ')}`,
    statuses.join() === want.join(),
    statuses.join(' '),
  );
  const bob = await get(port, BOB);
  expect(spec, "the limit is per user: bob's first request must answer 200", bob.status === 200, shown(bob));
}
