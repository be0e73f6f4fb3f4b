/**
 * @module test/files/yaml
 * YAML streams parsed as the `yaml` package parses them, a key written twice
 * refused where it is written, in time that grows with the text rather than
 * with its square.
 */
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { parseYamlStream } from '../../src/files';
import { timeGrowth } from '../support/growth';

/** The first line of each error of each document. */
function errorsOf(docs: readonly { errors: readonly Error[] }[]): string[][] {
  return docs.map((doc) => doc.errors.map((err) => err.message.split('\n', 1)[0]));
}

/** A mapping of `keys` keys in flow style, one line, as a generated file writes it. */
function flowMapping(keys: number): string {
  return `a: {${Array.from({ length: keys }, (_, i) => `k${i}: ${i}`).join(', ')}}\n`;
}

describe('YAML streams parsed in time linear in their size', () => {
  it('refuses a key written twice in one mapping where the yaml package does, with its message and position', () => {
    const texts = [
      'a: 1\nb: 2\na: 3\n',
      'x:\n  - {k: 1, k: 2}\n  - k: 1\n    j: 2\n    k: 3\n',
      'a: 1\n---\nb: 1\nb: 2\n---\n"c": 1\nc: 2\n',
      '1: a\n"1": b\n1: c\n',
      'a: {b: {c: 1, c: 2}, b: 3}\n',
      '? [a]\n: 1\n? [a]\n: 2\n',
      'a: 1\nb: [\n',
    ];
    for (const text of texts) {
      for (const prettyErrors of [true, false]) {
        assert.deepEqual(
          errorsOf(parseYamlStream(text, { prettyErrors })),
          errorsOf(parseAllDocuments(text, { prettyErrors })),
          text,
        );
      }
    }
    assert.deepEqual(errorsOf(parseYamlStream('a: 1\nb: 2\na: 3\n')), [
      ['Map keys must be unique at line 3, column 1:'],
    ]);
  });

  it('gives the values the yaml package gives', () => {
    const text = 'apiVersion: gateway/v1\nkind: Mapping\nlist: [1, two, {three: 3}]\n---\n- &a {x: 1}\n- *a\n';
    assert.deepEqual(
      parseYamlStream(text).map((doc) => doc.toJS()),
      parseAllDocuments(text).map((doc) => doc.toJS()),
    );
  });

  it('takes a mapping of 64 000 keys about 64 times as long as one of 1 000, not 4 000 times', function () {
    // The yaml package's own check compared each key with every key before it: 200 000 keys in a 3 MB file took minutes.
    const growth = timeGrowth(
      (keys) => {
        const text = flowMapping(keys);
        return () => assert.equal(parseYamlStream(text)[0].errors.length, 0);
      },
      1_000,
      64_000,
    );
    assert.ok(growth < 1_000, `64 times the keys took ${Math.round(growth)} times as long`);
  });
});
