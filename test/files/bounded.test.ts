import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  errorText,
  fileSystemSource,
  parseByteSize,
  readBounded,
  readBoundedSync,
  whyUnreadable,
} from '../../src/files';

describe('reading a config file within a size limit', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-files-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Both readers' outcome for `file`: its text, or why it was refused. */
  async function both(file: string, limit: number): Promise<string[]> {
    const outcome = (read: () => Buffer | Promise<Buffer>) =>
      Promise.resolve()
        .then(read)
        .then(
          (b) => `text: ${b.toString('utf8')}`,
          (err: unknown) => `refused: ${whyUnreadable(err)}`,
        );
    return [await outcome(() => readBounded(file, limit)), await outcome(() => readBoundedSync(file, limit))];
  }

  it('reads a file up to the limit, to the byte', async () => {
    writeFileSync(join(dir, 'a.yaml'), 'x'.repeat(100));
    assert.deepEqual(await both(join(dir, 'a.yaml'), 100), [`text: ${'x'.repeat(100)}`, `text: ${'x'.repeat(100)}`]);
    assert.equal(await fileSystemSource.read(join(dir, 'a.yaml'), 100), 'x'.repeat(100));
  });

  it('refuses a file one byte over the limit, saying the limit, the size and the option that raises it', async () => {
    writeFileSync(join(dir, 'a.yaml'), 'x'.repeat(2049));
    const expected =
      'refused: is larger than the file size limit of 2 KiB (2.001 KiB): refused; raise fileSizeLimit (GATEHOUSE_FILE_SIZE_LIMIT) if it is meant to be that large';
    assert.deepEqual(await both(join(dir, 'a.yaml'), 2048), [expected, expected]);
  });

  it('refuses a FIFO at once instead of waiting for a writer, and /dev/zero instead of reading without end', async () => {
    execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
    symlinkSync('/dev/zero', join(dir, 'zero.yaml'));
    const expected = 'refused: is not a regular file (a FIFO, a device or a socket): refused';
    assert.deepEqual(await both(join(dir, 'pipe.yaml'), 1024), [expected, expected]);
    assert.deepEqual(await both(join(dir, 'zero.yaml'), 1024), [expected, expected]);
  });

  it('says a folder, a missing file and a link to nowhere apart', async () => {
    mkdirSync(join(dir, 'folder.yaml'));
    symlinkSync('gone.yaml', join(dir, 'link.yaml'));
    assert.deepEqual(await both(join(dir, 'folder.yaml'), 1024), [
      'refused: cannot be read (EISDIR)',
      'refused: cannot be read (EISDIR)',
    ]);
    assert.deepEqual(await both(join(dir, 'nope.yaml'), 1024), [
      'refused: cannot be read (ENOENT)',
      'refused: cannot be read (ENOENT)',
    ]);
    const link = 'refused: is a symbolic link to gone.yaml, which does not exist';
    assert.deepEqual(await both(join(dir, 'link.yaml'), 1024), [link, link]);
  });

  it('sees a file that grew past the limit after it was looked at', async () => {
    // /proc files say they are empty and hold more: as a file that grows between stat and read does.
    const outcomes = await both('/proc/self/status', 16);
    for (const outcome of outcomes)
      assert.match(outcome, /^refused: is larger than the file size limit of 16 bytes \(it grew while it was read\)/);
    appendFileSync(join(dir, 'a.yaml'), 'ok');
    assert.deepEqual(await both(join(dir, 'a.yaml'), 16), ['text: ok', 'text: ok']);
  });
});

describe('a size as written in a variable or an option', () => {
  it('reads bytes, and k, m, g (KiB, MiB, GiB) in either case', () => {
    assert.equal(parseByteSize('1048576', 'X'), 1048576);
    assert.equal(parseByteSize('512k', 'X'), 512 * 1024);
    assert.equal(parseByteSize('16MiB', 'X'), 16 * 1024 * 1024);
    assert.equal(parseByteSize(' 1G ', 'X'), 1024 ** 3);
  });

  it('refuses zero, a negative or fractional size and an unknown unit, naming the variable', () => {
    for (const value of ['0', '-1', '1.5m', '16 MB', 'lots', '']) {
      assert.throws(() => parseByteSize(value, 'GATEHOUSE_FILE_SIZE_LIMIT'), {
        message: `GATEHOUSE_FILE_SIZE_LIMIT must be a size in bytes, or with a unit (512k, 16m, 1g), got '${value}'`,
      });
    }
  });
});

describe('the message of anything thrown', () => {
  it('never throws itself', () => {
    const hostile = {
      get message(): string {
        throw new Error('no');
      },
    };
    assert.equal(errorText(new Error('plain')), 'plain');
    assert.equal(errorText(undefined), 'undefined');
    assert.equal(errorText(null), 'null');
    assert.equal(errorText('text'), 'text');
    assert.equal(errorText(hostile), 'an error that cannot be described');
  });
});
