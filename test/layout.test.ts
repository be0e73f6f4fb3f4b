/**
 * @module test/layout
 * The suite tells its scenario tests from its unit tests by name (see
 * test/README.md): a file that starts another program is named
 * `*.scenario.test.ts`, and only such a file. `npm run test:unit` relies on
 * it to run no redis-server, PostgreSQL, Chromium or child process.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from './support/process';

/** The helpers of test/support/ that start another program, each a word the file would call. */
const STARTS_A_PROGRAM = [
  // the gatehouse command and a packed install (./support/process, ./support/package)
  'runCli',
  'startCli',
  'spawnedCli',
  'installWithoutProtos',
  'packedProject',
  'startServer',
  // redis-server, PostgreSQL, Chromium (./support/redis, ./support/postgres, ./support/browser)
  'startRedis',
  'useRedis',
  'sharedPostgres',
  'launchBrowser',
  // the rate-limit service or gateways in processes of their own (./support/remote-ratelimit, ./support/bursts)
  'startRemoteService',
  'startRateLimitProcesses',
  'startGateways',
  // the docs' shell commands (./support/checkout)
  'runShell',
  // openssl s_client and curl as clients of a TLS port (./support/tls-rig)
  'runSClient',
  'runCurl',
];
const HELPER_CALL = new RegExp(`\\b(${STARTS_A_PROGRAM.join('|')})\\b`);

/** A client run against a server of the test, by name: curl, openssl's s_client. */
const CLIENT_PROGRAM = /\(\s*'curl'|'s_client'/;

/** Whether a test file's source starts another program: through a helper, a node of its own, or a client. */
function startsAProgram(source: string): boolean {
  const childProcess = source.includes("from 'node:child_process'");
  const ownNode = childProcess && source.includes('process.execPath');
  return ownNode || (childProcess && CLIENT_PROGRAM.test(source)) || HELPER_CALL.test(source);
}

/** Every file under `dir`, relative to the repository. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [relative(REPO_ROOT, join(dir, entry.name))],
  );
}

describe('the layout of the suite', () => {
  const all = filesUnder(join(REPO_ROOT, 'test'));
  const tests = all
    // This file names the helpers without calling them.
    .filter((name) => name.endsWith('.test.ts') && name !== relative(REPO_ROOT, __filename))
    .map((name) => ({ name, starts: startsAProgram(readFileSync(join(REPO_ROOT, name), 'utf8')) }));

  it('names every test file that starts another program *.scenario.test.ts', () => {
    const unnamed = tests.filter((f) => f.starts && !f.name.endsWith('.scenario.test.ts')).map((f) => f.name);
    assert.deepEqual(unnamed, []);
  });

  it('names no other test file *.scenario.test.ts, so that the unit run has every unit test', () => {
    const misnamed = tests.filter((f) => !f.starts && f.name.endsWith('.scenario.test.ts')).map((f) => f.name);
    assert.deepEqual(misnamed, []);
  });

  it('keeps the shared helpers in test/support/ and nowhere else', () => {
    const stray = all.filter(
      (name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.startsWith('test/support/'),
    );
    assert.deepEqual(stray, []);
  });
});
