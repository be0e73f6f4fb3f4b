/**
 * @module test/docs/tour
 * The tour of the docs, taken as a reader takes it: the demo started on a
 * copy of `config/`, then every `sh tour` and `sh grpcurl` example of the
 * README and of docs/ in reading order, each command run as written (its
 * `localhost:8080` and `:8081` the demo's ports), and what it printed held
 * against what its comment shows. A curl command that prints an HTTP answer
 * is run with `-i` too, so that its comment's status and headers can be
 * held against it.
 *
 * Each example starts at the beginning of a minute of its own, as for a
 * reader who takes longer than a minute between two, unless it says
 * `minute=same`: it goes on in the minute of the example before it, as for
 * a reader who follows them in order (the demo's limits are per minute,
 * and the clock is the test's).
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGatehouse, type Gatehouse } from '../../src/gatehouse';
import { createLogger } from '../../src/telemetry';
import { REPO_ROOT } from '../support/process';
import { allBlocks, where } from '../support/doc-blocks';
import { runShell } from '../support/checkout';
import { assertClaims, assertLines, parsePrinted } from '../support/printed-output';
import { grpcurl } from '../support/grpcurl';
import { printsItsOutput, shellSteps, shellWords } from '../support/doc-steps';

describe('the tour of the docs, against the demo', function () {
  const examples = allBlocks().filter((b) => b.lang === 'sh' && (b.kind === 'tour' || b.kind === 'grpcurl'));
  const realNow = Date.now;
  let ahead = 0;
  let folder: string;
  let gatehouse: Gatehouse;
  let port: number;
  let grpcPort: number;

  /** The demo's addresses in place of the default ones the docs show. */
  const onDemo = (text: string) =>
    text
      .replace(/(localhost|127\.0\.0\.1):8080\b/g, `$1:${port}`)
      .replace(/127\.0\.0\.1:8081\b/g, `127.0.0.1:${grpcPort}`);

  /** Moves the clock to 100 ms into the next minute. */
  function nextMinute(): void {
    ahead += 60_000 - (Date.now() % 60_000) + 100;
  }

  before(async () => {
    // Before the demo is made: its rate-limit service keeps the clock it finds.
    Date.now = () => realNow() + ahead;
    folder = mkdtempSync(join(tmpdir(), 'gatehouse-docs-tour-'));
    cpSync(join(REPO_ROOT, 'config'), join(folder, 'config'), { recursive: true });
    gatehouse = await createGatehouse({
      configDir: join(folder, 'config'),
      host: '127.0.0.1',
      port: 0,
      grpcPort: 0,
      watch: false,
      drainDelayMs: 0,
      logger: createLogger({ level: 'silent' }),
    });
    const listening = await gatehouse.start();
    port = listening.port;
    grpcPort = listening.grpcPort!;
  });

  after(async () => {
    await gatehouse?.stop();
    Date.now = realNow;
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('has examples in the README and in docs/', () => {
    assert.ok(examples.some((b) => b.file === 'README.md' && b.kind === 'tour'));
    assert.ok(examples.some((b) => b.file === 'README.md' && b.kind === 'grpcurl'));
    assert.ok(examples.some((b) => b.file.startsWith('docs/')));
  });

  for (const block of examples) {
    it(`${where(block)}: every command prints what the docs show`, async () => {
      if (block.attributes.minute !== 'same') nextMinute();
      for (const step of shellSteps(block.text)) {
        const what = `${where(block)}: ${step.command}`;
        if (block.kind === 'grpcurl') {
          const answer = await grpcurl(shellWords(onDemo(step.command)));
          if (/ list$| --list-methods /.test(step.command)) {
            for (const service of [
              'envoy.service.ratelimit.v3.RateLimitService',
              'pb.lyft.ratelimit.RateLimitService',
              'grpc.health.v1.Health',
            ]) {
              assert.ok((answer as string[]).includes(service), `${what}: ${JSON.stringify(answer)}`);
            }
          }
          continue;
        }
        const shown = step.comment.map(onDemo);
        if (printsItsOutput(step.command)) {
          const run = await runShell(onDemo(step.command), REPO_ROOT);
          assert.equal(run.code, 0, `${what}\n${run.stderr}`);
          assertLines(run.stdout, shown, what);
        } else {
          assert.match(step.command, /^curl /, what);
          const run = await runShell(onDemo(step.command).replace(/^curl /, 'curl -s -S -i '), REPO_ROOT);
          assert.equal(run.code, 0, `${what}\n${run.stderr}`);
          assertClaims(parsePrinted(run.stdout), shown.join('\n'), what);
        }
      }
    });
  }
});
