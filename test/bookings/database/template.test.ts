/**
 * @module test/bookings/database/template
 * The ready-made database a first start copies: its archive holds folders
 * and plain files only and gives back what was packed; an archive that is
 * damaged, or names a link or a path out of the folder, is refused; it is
 * unpacked whole into a folder that holds no database, or not at all.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { packTar, readTar, type TarEntry } from '../../../src/bookings/database/tar';
import { installTemplate } from '../../../src/bookings/database/template';

const ENTRIES: TarEntry[] = [
  { kind: 'file', path: 'PG_VERSION', data: Buffer.from('17\n') },
  { kind: 'folder', path: 'base' },
  { kind: 'folder', path: 'base/1' },
  { kind: 'file', path: 'base/1/1259', data: Buffer.alloc(8192 + 100, 7) },
  { kind: 'file', path: 'base/1/empty', data: Buffer.alloc(0) },
];

/** A header block of `packTar` with its name, type or checksum changed. */
function withHeader(archive: Buffer, change: (block: Buffer) => void, fixSum = true): Buffer {
  const copy = Buffer.from(archive);
  const block = copy.subarray(0, 512);
  change(block);
  if (fixSum) {
    block.write(' '.repeat(8), 148, 'ascii');
    let sum = 0;
    for (const byte of block) sum += byte;
    block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  }
  return copy;
}

describe('bookings/database/template: the ready-made database', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gatehouse-template-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives back the folders and files it packed, bytes and all', () => {
    assert.deepEqual(
      readTar(packTar(ENTRIES)).map((e) => (e.kind === 'file' ? { ...e, data: Buffer.from(e.data) } : e)),
      ENTRIES.map((e) => (e.kind === 'file' ? { ...e, data: Buffer.from(e.data) } : e)),
    );
  });

  it('refuses an archive with a damaged header, a link, a path out of the folder, or no end', () => {
    const archive = packTar(ENTRIES);
    assert.throws(() => readTar(withHeader(archive, (b) => (b[0] = 0x51), false)), /the header at byte 0 is damaged/);
    assert.throws(
      () => readTar(withHeader(archive, (b) => b.write('2', 156, 'ascii'))),
      /PG_VERSION is neither a folder nor a plain file/,
    );
    for (const name of ['../PG_VERSION', '/etc/passwd', 'base/../../x'])
      assert.throws(
        () => readTar(withHeader(archive, (b) => b.write(`${name}\0\0\0\0\0\0\0\0\0\0\0\0`, 0, 'utf8'))),
        /names no plain path inside the folder/,
        name,
      );
    assert.throws(() => readTar(archive.subarray(0, archive.length - 1024)), /ends without its end blocks/);
  });

  it('unpacks into a folder that is not there, or empty, leaving nothing half made beside it', async () => {
    const file = join(dir, 'template.tar.gz');
    writeFileSync(file, gzipSync(packTar(ENTRIES)));
    // A start stopped while it unpacked left this.
    mkdirSync(join(dir, 'db.making'));
    writeFileSync(join(dir, 'db.making', 'PG_VERSION'), 'half');
    await installTemplate(file, join(dir, 'db'));
    assert.deepEqual(readdirSync(dir).sort(), ['db', 'template.tar.gz']);
    assert.equal(readFileSync(join(dir, 'db', 'PG_VERSION'), 'utf8'), '17\n');
    assert.deepEqual(readFileSync(join(dir, 'db', 'base', '1', '1259')), Buffer.alloc(8192 + 100, 7));
    assert.equal(readFileSync(join(dir, 'db', 'base', '1', 'empty')).length, 0);

    mkdirSync(join(dir, 'empty'));
    await installTemplate(file, join(dir, 'empty'));
    assert.equal(existsSync(join(dir, 'empty', 'PG_VERSION')), true);
  });

  it('leaves a folder that holds files but no database as it is, saying so', async () => {
    const file = join(dir, 'template.tar.gz');
    writeFileSync(file, gzipSync(packTar(ENTRIES)));
    mkdirSync(join(dir, 'db'));
    writeFileSync(join(dir, 'db', 'notes.txt'), 'mine');
    await assert.rejects(installTemplate(file, join(dir, 'db')), /holds files but no database: move them away/);
    assert.deepEqual(readdirSync(join(dir, 'db')), ['notes.txt']);
  });

  it('refuses an archive that holds no database, and one cut short', async () => {
    const none = join(dir, 'none.tar.gz');
    writeFileSync(none, gzipSync(packTar(ENTRIES.slice(1))));
    await assert.rejects(installTemplate(none, join(dir, 'a')), /holds no database \(no PG_VERSION\)/);
    const cut = join(dir, 'cut.tar.gz');
    writeFileSync(cut, gzipSync(packTar(ENTRIES).subarray(0, 2000)));
    await assert.rejects(installTemplate(cut, join(dir, 'b')), /cut short|without its end blocks/);
    assert.deepEqual(readdirSync(dir).sort(), ['cut.tar.gz', 'none.tar.gz'], 'nothing half made is left');
  });
});
