/**
 * @module test/bookings/database/template
 * The ready-made database a first start copies: packed from a database, it
 * unpacks into one the bookings open on, demo bookings and all; it is
 * unpacked whole into a folder that holds no database, or not at all; an
 * archive that is damaged, holds no database, or names a link, an absolute
 * path or a path out of the folder is refused, saying so, and leaves nothing.
 */
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { loadBookingDataSync, openBookingDatabase } from '../../../src/bookings';
import { installTemplate, packTemplate } from '../../../src/bookings/database/template';
import { pgliteTemplate } from '../../support/pglite';

/** One entry of a hand-made archive: a file and its bytes, a folder, or a link. */
type Entry = { path: string; data?: Buffer; type?: 'File' | 'Directory' | 'SymbolicLink'; linkpath?: string };

/** The entries as a tar archive, uncompressed; its headers made by node-tar, the paths as given, hostile or not. */
function tarOf(entries: readonly Entry[]): Buffer {
  const parts: Buffer[] = [];
  for (const { path, data = Buffer.alloc(0), type = 'File', linkpath } of entries) {
    const header = new Header({ path, type, size: data.length, mode: type === 'Directory' ? 0o700 : 0o600, linkpath });
    header.encode();
    parts.push(header.block!, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

const DATABASE: Entry[] = [
  { path: 'PG_VERSION', data: Buffer.from('17\n') },
  { path: 'base/', type: 'Directory' },
  { path: 'base/1/', type: 'Directory' },
  { path: 'base/1/1259', data: Buffer.alloc(8192 + 100, 7) },
  { path: 'base/1/empty' },
];

describe('bookings/database/template: the ready-made database', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gatehouse-template-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes `archive` gzipped into the test's folder. */
  function archiveFile(name: string, archive: Buffer): string {
    const file = join(dir, name);
    writeFileSync(file, gzipSync(archive));
    return file;
  }

  it('packs a database that, unpacked, the bookings open on with their demo bookings', async function () {
    this.timeout(120_000);
    const file = join(dir, 'pglite.tar.gz');
    // Made by the start before it unpacks (bookings/database/pglite).
    mkdirSync(join(dir, 'data'), { mode: 0o700 });
    await packTemplate(join(await pgliteTemplate(), 'pglite'), file);
    await installTemplate(file, join(dir, 'data', 'pglite'));
    const demo = loadBookingDataSync(join(__dirname, '..', '..', '..', 'config'));
    const first = demo.hotel_bookings[0];
    const db = await openBookingDatabase({
      dataDir: join(dir, 'data'),
      seed: { hotel: demo.hotel_bookings, car: demo.car_bookings },
    });
    try {
      assert.deepEqual(await db.store('hotel').get(first.user, first.id), first);
    } finally {
      await db.close();
    }
  });

  it('unpacks into a folder that is not there, or empty, leaving nothing half made beside it', async () => {
    const file = archiveFile('template.tar.gz', tarOf(DATABASE));
    // A start stopped while it unpacked left this.
    mkdirSync(join(dir, 'db.making'));
    writeFileSync(join(dir, 'db.making', 'PG_VERSION'), 'half');
    await installTemplate(file, join(dir, 'db'));
    assert.deepEqual(readdirSync(dir).sort(), ['db', 'template.tar.gz']);
    assert.equal(readFileSync(join(dir, 'db', 'PG_VERSION'), 'utf8'), '17\n');
    assert.deepEqual(readFileSync(join(dir, 'db', 'base', '1', '1259')), Buffer.alloc(8192 + 100, 7));
    assert.equal(readFileSync(join(dir, 'db', 'base', '1', 'empty')).length, 0);
    assert.equal(statSync(join(dir, 'db')).mode & 0o777, 0o700, 'for the process alone');

    mkdirSync(join(dir, 'empty'));
    await installTemplate(file, join(dir, 'empty'));
    assert.equal(existsSync(join(dir, 'empty', 'PG_VERSION')), true);
  });

  it('leaves a folder that holds files but no database as it is, saying so', async () => {
    const file = archiveFile('template.tar.gz', tarOf(DATABASE));
    mkdirSync(join(dir, 'db'));
    writeFileSync(join(dir, 'db', 'notes.txt'), 'mine');
    await assert.rejects(installTemplate(file, join(dir, 'db')), /holds files but no database: move them away/);
    assert.deepEqual(readdirSync(join(dir, 'db')), ['notes.txt']);
  });

  it('refuses an archive that holds no database, one cut short, and one that is no archive', async () => {
    const none = archiveFile('none.tar.gz', tarOf(DATABASE.slice(1)));
    await assert.rejects(installTemplate(none, join(dir, 'a')), /none\.tar\.gz holds no database \(no PG_VERSION\)/);
    const whole = gzipSync(tarOf(DATABASE));
    const cut = join(dir, 'cut.tar.gz');
    writeFileSync(cut, whole.subarray(0, whole.length - 40));
    await assert.rejects(
      installTemplate(cut, join(dir, 'b')),
      /cut\.tar\.gz is not a database archive that can be unpacked: .*unexpected end of file/,
    );
    const damaged = join(dir, 'damaged.tar.gz');
    writeFileSync(damaged, Buffer.from(whole).fill(0x55, 200, 210));
    await assert.rejects(
      installTemplate(damaged, join(dir, 'c')),
      /damaged\.tar\.gz is not a database archive that can be unpacked: /,
    );
    const garbage = join(dir, 'garbage.tar.gz');
    writeFileSync(garbage, 'this is not a tar archive at all, nor gzip: it goes on for a while '.repeat(20));
    await assert.rejects(
      installTemplate(garbage, join(dir, 'd')),
      /garbage\.tar\.gz is not a database archive that can be unpacked: /,
    );
    assert.deepEqual(
      readdirSync(dir).sort(),
      ['cut.tar.gz', 'damaged.tar.gz', 'garbage.tar.gz', 'none.tar.gz'],
      'nothing half made',
    );
  });

  it('refuses an archive naming a path out of the folder, an absolute path or a link, and writes nothing', async () => {
    const outside = join(dir, 'outside');
    const hostile: Record<string, Entry> = {
      climbs: { path: '../outside', data: Buffer.from('escaped') },
      'climbs-from-within': { path: 'base/../../outside', data: Buffer.from('escaped') },
      absolute: { path: outside, data: Buffer.from('escaped') },
      link: { path: 'base', type: 'SymbolicLink', linkpath: dir },
    };
    for (const [name, entry] of Object.entries(hostile)) {
      const file = archiveFile(`${name}.tar.gz`, tarOf([DATABASE[0], entry, ...DATABASE.slice(1)]));
      await assert.rejects(
        installTemplate(file, join(dir, 'db')),
        name === 'link'
          ? /link\.tar\.gz is refused: it holds entries that are neither folders nor plain files: base \(SymbolicLink\)/
          : new RegExp(
              `${name}\\.tar\\.gz is not a database archive that can be unpacked: .*(contains '\\.\\.'|absolute path)`,
            ),
        name,
      );
      assert.equal(existsSync(outside), false, name);
      assert.equal(existsSync(join(dir, 'db')), false, name);
      assert.equal(existsSync(join(dir, 'db.making')), false, name);
    }
  });
});
