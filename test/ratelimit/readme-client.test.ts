/**
 * @module test/ratelimit/readme-client
 * The Node client README.md shows for the rate-limit service, run as a user
 * runs it (`node -e` from the repository's root) against the demo limits.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createRateLimitGrpcServer, createRateLimitService, type RateLimitGrpcServer, type RateLimitService } from '../../src/ratelimit';
import { REPO_ROOT } from '../support/process';
import { memoryLogger } from './support/silent';

/** The README's `node -e '...'` block that calls ShouldRateLimit, and the answer its comment shows. */
function readmeClient(): { script: string; shown: string } {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const block = /```sh\nnode -e '\n([^']*\.ShouldRateLimit\([^']*)'\n# (.*)\n```/.exec(readme);
  assert.ok(block, 'README.md shows a node -e client of ShouldRateLimit followed by its answer');
  return { script: block[1], shown: block[2] };
}

describe('the rate-limit client README.md shows for Node', () => {
  let service: RateLimitService;
  let server: RateLimitGrpcServer;
  let port: number;

  before(async () => {
    service = createRateLimitService({ limitsDir: path.join(REPO_ROOT, 'config'), logger: memoryLogger() });
    server = createRateLimitGrpcServer(service, { port: 0 });
    port = await server.start();
  });
  after(async () => {
    await server.stop();
    await service.close();
  });

  it('runs from the repository root with what npm install brought, and prints the answer the README shows', async () => {
    const { script, shown } = readmeClient();
    assert.ok(script.includes('"127.0.0.1:8081"'), 'the client asks the default gRPC port');
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script.replace('"127.0.0.1:8081"', `"127.0.0.1:${port}"`)], {
      cwd: REPO_ROOT,
      timeout: 10_000,
    });
    // The README writes … for the seconds to the end of the minute, which vary.
    const expected = new RegExp(`^${shown.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\d+')}\n$`);
    assert.match(stdout, expected);
  });
});
