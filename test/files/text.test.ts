/**
 * @module test/files/text
 * A config file's text is UTF-8, or the file is refused with the line that
 * is not: decoded leniently, its bytes would be served as what nobody wrote.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileSystemSource, readBoundedText, readBoundedTextSync, whyUnreadable } from '../../src/files';

describe("a config file's text", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-text-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** What each reader makes of `bytes`: the text, or why it was refused. */
  async function read(bytes: Buffer): Promise<string[]> {
    const file = join(dir, 'f.yaml');
    writeFileSync(file, bytes);
    const outcome = (reading: () => string | Promise<string>) =>
      Promise.resolve()
        .then(reading)
        .then(
          (text) => `text: ${text}`,
          (err: unknown) => `refused: ${whyUnreadable(err)}`,
        );
    return [
      await outcome(() => readBoundedText(file, 1024)),
      await outcome(() => readBoundedTextSync(file, 1024)),
      await outcome(() => fileSystemSource.read(file, 1024)),
    ];
  }

  it('reads UTF-8, a byte order mark and a literal U+FFFD as they are', async () => {
    const text = '\uFEFFname: café\nprefix: /caf\u00e9/\ue000 \uFFFD\n';
    assert.deepEqual(await read(Buffer.from(text, 'utf8')), Array(3).fill(`text: ${text}`));
  });

  it('refuses bytes that are not UTF-8, naming the first line that holds one', async () => {
    const refused = (line: number) =>
      Array(3).fill(`refused: is not UTF-8 text: line ${line} holds a byte that is not UTF-8; save the file as UTF-8`);
    // An overlong dot, Latin-1, a lone continuation byte, a surrogate, a sequence cut by the end of the file.
    assert.deepEqual(await read(Buffer.from('prefix: /\xC0\xAE/\n', 'latin1')), refused(1));
    assert.deepEqual(await read(Buffer.from('alice:x\nj\xFCrgen:$2y$10$x\n', 'latin1')), refused(2));
    assert.deepEqual(
      await read(Buffer.concat([Buffer.from('a: 1\nb: 2\r\nc: '), Buffer.from([0x80]), Buffer.from('\n')])),
      refused(3),
    );
    assert.deepEqual(await read(Buffer.from([0x61, 0x0a, 0xed, 0xa0, 0x80])), refused(2));
    assert.deepEqual(await read(Buffer.from([0x61, 0x3a, 0x20, 0xe2, 0x82])), refused(1));
  });
});
