/**
 * @module test/bench/settings
 * The options of `npm run bench` as read from the environment: the rows of
 * another build (BENCH_BASELINE) are measured only when one is given, and a
 * folder that holds no built Gatehouse is refused before anything starts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSettings } from '../../bench/harness/settings';

const NAMES = ['BENCH_BASELINE', 'BENCH_ROWS'] as const;

describe('bench/harness/settings', () => {
  let dir: string;
  let saved: Record<string, string | undefined>;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-settings-'));
    saved = Object.fromEntries(NAMES.map((name) => [name, process.env[name]]));
    for (const name of NAMES) delete process.env[name];
  });
  afterEach(() => {
    for (const name of NAMES) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** A folder that looks like a built checkout: its dist/cli/main.js. */
  function builtCheckout(): string {
    mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'cli', 'main.js'), '');
    return dir;
  }

  it('measures no row of another build unless BENCH_BASELINE names one', () => {
    const settings = readSettings();
    assert.equal(settings.baseline, undefined);
    assert.ok(settings.rows.includes('gatehouse-proxy'));
    assert.ok(!settings.rows.some((row) => row.endsWith('-baseline')), settings.rows.join(', '));
  });

  it('refuses a baseline row asked for without BENCH_BASELINE, saying where such rows come from', () => {
    process.env.BENCH_ROWS = 'gatehouse-proxy-baseline';
    assert.throws(() => readSettings(), /unknown row gatehouse-proxy-baseline.*with BENCH_BASELINE/);
  });

  it('runs the baseline rows beside the ones asked for, with the baseline of their table', () => {
    process.env.BENCH_BASELINE = builtCheckout();
    process.env.BENCH_ROWS = 'gatehouse-proxy,gatehouse-proxy-baseline';
    const settings = readSettings();
    assert.equal(settings.baseline, dir);
    assert.deepEqual([...settings.rows].sort(), ['gatehouse-proxy', 'gatehouse-proxy-baseline', 'upstream']);
  });

  it('measures both baseline rows in a run of every row', () => {
    process.env.BENCH_BASELINE = builtCheckout();
    const rows = readSettings().rows;
    assert.ok(rows.includes('gatehouse-baseline') && rows.includes('gatehouse-proxy-baseline'), rows.join(', '));
  });

  it('refuses a BENCH_BASELINE that holds no built Gatehouse', () => {
    process.env.BENCH_BASELINE = dir;
    assert.throws(
      () => readSettings(),
      /BENCH_BASELINE: .* has no dist\/cli\/main\.js; give a Gatehouse checkout, built/,
    );
  });
});
