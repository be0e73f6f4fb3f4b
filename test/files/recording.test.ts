/**
 * @module test/files/recording
 * A folder read once and given again: what a replay answers is what the
 * reading answered, failures in the same words, and the digest tells two
 * readings of different files apart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  errorCode,
  fileSystemSource,
  recordingDigest,
  recordingSource,
  replaySource,
  whyUnreadable,
  type SourceRecording,
} from '../../src/files';

describe('a recording of a config folder', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-recording-'));
    writeFileSync(join(dir, 'a.yaml'), 'kind: A\n');
    writeFileSync(join(dir, 'big.yaml'), 'x'.repeat(64));
    symlinkSync(join(dir, 'gone.yaml'), join(dir, 'broken.yaml'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Reads the folder as the folder check does: its names, then each file, keeping why one failed. */
  async function readAll(source: typeof fileSystemSource): Promise<unknown[]> {
    const seen: unknown[] = [await source.list(dir)];
    for (const name of ['a.yaml', 'big.yaml', 'broken.yaml', 'missing.yaml'])
      seen.push(
        await source
          .read(join(dir, name), 32)
          .catch((err: unknown) => ({ why: whyUnreadable(err), code: errorCode(err) })),
      );
    return seen;
  }

  async function recorded(): Promise<{ answers: unknown[]; recording: SourceRecording }> {
    const recorder = recordingSource(fileSystemSource);
    recorder.begin();
    const answers = await readAll(recorder);
    return { answers, recording: structuredClone(recorder.end()) };
  }

  it('gives again, from a clone of it, every name, text and failure the file system gave', async () => {
    const { answers, recording } = await recorded();
    assert.deepEqual(await readAll(replaySource(recording)), answers);
    assert.deepEqual(answers, await readAll(fileSystemSource));
    assert.match((answers[2] as { why: string }).why, /larger than the file size limit/);
    assert.equal((answers[4] as { code: string }).code, 'ENOENT');
  });

  it('answers ENOENT for a file the reading never asked for', async () => {
    const { recording } = await recorded();
    await assert.rejects(replaySource(recording).read(join(dir, 'other.yaml'), 32), (err: unknown) => {
      assert.equal(errorCode(err), 'ENOENT');
      return true;
    });
  });

  it('has one digest for one set of files, and another once a file changes', async () => {
    const first = recordingDigest((await recorded()).recording);
    assert.equal(recordingDigest((await recorded()).recording), first);
    writeFileSync(join(dir, 'a.yaml'), 'kind: B\n');
    assert.notEqual(recordingDigest((await recorded()).recording), first);
  });
});
