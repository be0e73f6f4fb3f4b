/**
 * @module test/bench/results
 * The results files of `npm run bench`: written where they sort by date,
 * read back only in their own format, the newest found, and a run compared
 * with the one before it on the rows both have.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  compareResults,
  latestResult,
  readResult,
  RESULT_FORMAT,
  writeResult,
  type BenchResult,
  type Machine,
} from '../../bench/harness/results';

const MACHINE: Machine = { cpu: 'AMD EPYC', cores: 2, node: 'v20.20.2', kernel: '6.1.0' };

function result(date: string, rows: BenchResult['rows'], machine = MACHINE): BenchResult {
  return {
    format: RESULT_FORMAT,
    date,
    commit: '0123456789abcdef0123456789abcdef01234567',
    dirty: false,
    machine,
    loadAverage: { start: [0.1, 0.1, 0.1], end: [0.2, 0.1, 0.1] },
    settings: null,
    parts: ['http'],
    rows,
    goals: [],
  };
}

describe('bench/harness/results', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-results-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a file named by its date and commit, and finds the newest by its date', () => {
    const older = result('2026-01-02T03:04:05.678Z', []);
    const newer = result('2026-02-01T00:00:00.000Z', []);
    writeResult(dir, newer);
    writeResult(dir, older);
    assert.deepEqual(readdirSync(dir).sort(), [
      '2026-01-02T03-04-05-678Z-0123456.json',
      '2026-02-01T00-00-00-000Z-0123456.json',
    ]);
    assert.equal(latestResult(dir)?.result.date, newer.date);
    assert.equal(latestResult(join(dir, 'none')), undefined);
  });

  it('finds the newest among its own files only, past the other JSON files of the folder', () => {
    writeResult(dir, result('2026-01-02T03:04:05.678Z', []));
    writeFileSync(join(dir, 'hardening-2026-11-27.json'), JSON.stringify({ runs: [] }));
    assert.equal(latestResult(dir)?.result.date, '2026-01-02T03:04:05.678Z');
  });

  it('refuses a file of another format', () => {
    const file = join(dir, 'old.json');
    writeFileSync(file, JSON.stringify({ format: 0, rows: [] }));
    assert.throws(() => readResult(file), /results format 0, this benchmark reads 1/);
  });

  it('compares the rows both runs have, each figure as new ÷ old, and names the machines when they differ', () => {
    const old = result('2026-01-01T00:00:00.000Z', [
      { table: 'same-job', row: 'gatehouse', figures: { 'req/s': 10000, 'CPU µs/req': 80, errors: 0 } },
      { table: 'same-job', row: 'fastify', figures: { 'req/s': 20000 } },
    ]);
    const now = result(
      '2026-01-02T00:00:00.000Z',
      [
        { table: 'same-job', row: 'gatehouse', figures: { 'req/s': 12000, 'CPU µs/req': 60, errors: 0 } },
        { table: 'same-job', row: 'koa-stack', figures: { 'req/s': 11000 } },
      ],
      { ...MACHINE, node: 'v22.23.3' },
    );
    const text = compareResults(old, now, 'results/old.json');
    assert.match(text, /^Against the previous result, results\/old\.json \(2026-01-01, commit 0123456\)/);
    assert.match(
      text,
      /Another machine: then AMD EPYC, 2 CPUs, node v20\.20\.2, kernel 6\.1\.0; now .*node v22\.23\.3/,
    );
    const table = text.split('\n').slice(-2);
    assert.deepEqual(
      table.map((line) => line.split(/\s{2,}/)),
      [
        ['same-job', 'req/s', 'CPU µs/req', 'errors'],
        ['gatehouse', '1.20', '0.75', '='],
      ],
    );
  });

  it('says so when no row is in common, and names no machine when it is the same', () => {
    const text = compareResults(
      result('2026-01-01T00:00:00.000Z', [{ table: 'grpc', row: 'a', figures: { 'req/s': 1 } }]),
      result('2026-01-02T00:00:00.000Z', [{ table: 'proxy', row: 'b', figures: { 'req/s': 1 } }]),
      'old.json',
    );
    assert.doesNotMatch(text, /Another machine/);
    assert.match(text, /No row in common: nothing to compare\.$/);
  });
});
