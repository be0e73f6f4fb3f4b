/**
 * Hostile YAML in every file a config folder reads (records, a record
 * annotation, an Emissary resource, limits, booking data) is refused with
 * the file's name and the reason, at the first token past a bound of
 * files/yaml-limits (or, for a limits file's aliases, past the values they
 * expand to), on the event loop and on the checking thread alike;
 * and the checking thread, whatever it is given, grows no further than its
 * heap bound.
 */
import assert from 'node:assert/strict';
import { checkTexts, type CheckedFolder } from '../../../src/gatehouse/folder/check';
import { checkOffThread } from '../../../src/gatehouse/folder/off-thread';
import type { FolderTexts } from '../../../src/gatehouse/folder/read';

/** Under the 8 MiB file size limit, as large as a hostile file gets. */
const LARGE = 7 * 1024 * 1024;

/** An annotation is a value, and a value is at most 1 MiB: one a little smaller. */
const ANNOTATION = 900 * 1024;

const SHAPES = {
  'deep flow lists': (head: string, size = LARGE) => `${head}${'['.repeat(size)}`,
  'deep flow mappings': (head: string, size = LARGE) => `${head}${'{a: '.repeat(size / 4)}`,
  'deep block lists': (head: string, size = LARGE) => `${head}\n${'- '.repeat(size / 2)}`,
};

/** The texts of a folder whose `kind` file holds `text`. */
function folderWith(kind: 'records' | 'annotation' | 'emissary' | 'limits' | 'bookings', text: string): FolderTexts {
  switch (kind) {
    case 'records':
      return { records: [{ file: 'conf/services.yaml', text }] };
    case 'annotation':
      return {
        records: [
          {
            file: 'conf/services.yaml',
            text: `apiVersion: v1\nkind: Service\nmetadata:\n  name: quote\n  annotations:\n    gatehouse.io/config: |\n      ${text.replace(/\n/g, '\n      ')}\n`,
          },
        ],
      };
    case 'emissary':
      return {
        records: [
          { file: 'conf/emissary.yaml', text: `apiVersion: getambassador.io/v3alpha1\nkind: Mapping\n${text}` },
        ],
      };
    case 'limits':
      return { limits: [{ file: 'conf/ratelimit.yaml', text }] };
    case 'bookings':
      return { bookings: { file: 'conf/bookings.yaml', text } };
  }
}

const HEADS = {
  records: 'a: ',
  annotation: 'a: ',
  emissary: 'metadata: ',
  limits: 'domain: d\ndescriptors: ',
  bookings: 'hotels: ',
} as const;

const FILES = {
  records: 'conf/services.yaml',
  annotation: 'conf/services.yaml',
  emissary: 'conf/emissary.yaml',
  limits: 'conf/ratelimit.yaml',
  bookings: 'conf/bookings.yaml',
} as const;

function problemTexts(checked: CheckedFolder): string[] {
  return checked.problems.map((p) => p.text);
}

describe('gatehouse config folder: hostile YAML in every file it reads', () => {
  for (const kind of Object.keys(HEADS) as (keyof typeof HEADS)[]) {
    it(`refuses nesting past its bound in ${kind}, naming the file and where`, () => {
      for (const [shape, make] of Object.entries(SHAPES)) {
        // The block shape needs a key of its own line: a block list cannot follow `key: ` on one line.
        const head = shape === 'deep block lists' ? HEADS[kind].replace(/: $/, ':') : HEADS[kind];
        const problems = problemTexts(
          checkTexts(folderWith(kind, make(head, kind === 'annotation' ? ANNOTATION : LARGE))),
        );
        assert.equal(problems.length, 1, `${shape}: ${problems.join('\n')}`);
        assert.ok(problems[0].startsWith(`${FILES[kind]}: `), `${shape}: ${problems[0]}`);
        assert.match(
          problems[0],
          /nested too deeply to be read \(more than 64 mappings or lists inside each other\) at line \d+, column \d+( of the file)?: refused/,
          shape,
        );
      }
    });
  }

  it('refuses an alias bomb in the records, an annotation and the booking data at its 101st alias', () => {
    const bomb = `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: [${'*a, '.repeat(ANNOTATION / 4)}*a]\n`;
    assert.deepEqual(problemTexts(checkTexts(folderWith('records', bomb))), [
      'conf/services.yaml: YAML: uses aliases more than 100 times: refused, as a file that expands without bound would be',
    ]);
    assert.match(
      problemTexts(checkTexts(folderWith('annotation', bomb)))[0],
      /^conf\/services\.yaml: service quote: annotation gatehouse\.io\/config: YAML: uses aliases more than 100 times: refused/,
    );
    assert.deepEqual(problemTexts(checkTexts(folderWith('bookings', bomb))), [
      'conf/bookings.yaml: uses aliases more than 100 times: refused',
    ]);
  });

  it('refuses a stream of more documents than a file may hold, in every file kind, naming it and where', () => {
    for (const kind of ['records', 'emissary', 'limits', 'bookings'] as const) {
      const most = kind === 'limits' ? 4096 : 65_536;
      const problems = problemTexts(checkTexts(folderWith(kind, `a: 1\n${'---\n'.repeat(most + 1)}`)));
      assert.ok(problems[0]?.startsWith(`${FILES[kind]}: `), `${kind}: ${problems.join('\n')}`);
      assert.match(problems[0], new RegExp(`holds more than ${most} documents at line \\d+, column 1: refused`), kind);
    }
  });

  it('refuses aliases that expand a limits file past its bound, where they are counted once expanded', () => {
    const laughs = [
      'domain: d',
      'descriptors:',
      '  - &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from({ length: 9 }, (_, i) => {
        const [name, inner] = [String.fromCharCode(98 + i), String.fromCharCode(97 + i)];
        return `  - &${name} [${Array<string>(10).fill(`*${inner}`).join(', ')}]`;
      }),
    ].join('\n');
    assert.deepEqual(problemTexts(checkTexts(folderWith('limits', laughs))), [
      'conf/ratelimit.yaml: the aliases expand the document by more than 100000 values',
    ]);
  });

  it('refuses an annotation longer than a value may be, naming the file and the line it starts on', () => {
    const problems = problemTexts(checkTexts(folderWith('annotation', `a: ${'x'.repeat(LARGE)}`)));
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(
      problems[0],
      /^conf\/services\.yaml: YAML: a value is \d+ characters long, more than 1048576 at line 7, column 1: refused$/,
    );
  });

  it('refuses the same hostile file on the checking thread, naming it', async () => {
    const checked = await checkOffThread(folderWith('records', SHAPES['deep flow lists']('a: ')));
    assert.deepEqual(
      problemTexts(checked).map((p) => p.replace(/column \d+/, 'column N')),
      [
        'conf/services.yaml: YAML: nested too deeply to be read (more than 64 mappings or lists inside each other) at line 1, column N: refused',
      ],
    );
  });

  it('ends a check that outgrows the heap the checking thread is given, saying so, and lives on', async () => {
    // Sixty thousand small documents: well within the YAML bounds, well past a heap of 16 MiB.
    const many = Array.from(
      { length: 60_000 },
      (_, i) => `{apiVersion: gateway/v1, kind: Mapping, name: m${i}, prefix: /p${i}/, service: api}`,
    );
    await assert.rejects(
      checkOffThread({ records: [{ file: 'conf/services.yaml', text: many.join('\n---\n') }] }, undefined, 16),
      /it needs more than the 16 MiB the check may take: split the files, or make them simpler/,
    );
    const small = await checkOffThread(
      folderWith('records', 'apiVersion: gateway/v1\nkind: Mapping\nname: m\nprefix: /\nservice: api\n'),
    );
    assert.deepEqual(problemTexts(small), []);
  });
});
