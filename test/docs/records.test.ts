/**
 * @module test/docs/records
 * Every configuration example of the docs, loaded through `gatehouse
 * check`'s own code as a file of a config folder: whole records (`yaml
 * record`), the fields of a Mapping (`yaml mapping`, given to a Mapping of
 * their own), limits files (`yaml limits`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkFolder } from '../../src/cli/check';
import { allBlocks, where, type Block } from '../support/doc-blocks';

/** A Mapping for fields shown alone, to a remote upstream so that every field applies. */
const MAPPING_OF_FIELDS = `apiVersion: gateway/v1
kind: Mapping
name: example
prefix: /example/
service: example.internal:8080
`;

/** The RateLimitService a Mapping's labels are sent to, beside fields that give labels (of the gateway's domain). */
const RATE_LIMIT_SERVICE = `---
apiVersion: gateway/v1
kind: RateLimitService
name: limits
service: ratelimit.internal:8081
`;

/** The folder file an example is, and its text. */
function asFile(block: Block): [string, string] {
  switch (block.kind) {
    case 'record':
      return ['services.yaml', block.text];
    case 'mapping':
      return [
        'services.yaml',
        MAPPING_OF_FIELDS + block.text + (/^labels:/m.test(block.text) ? RATE_LIMIT_SERVICE : ''),
      ];
    default:
      return ['ratelimit.yaml', block.text];
  }
}

describe('the configuration examples of the docs', function () {
  const examples = allBlocks().filter((b) => b.lang === 'yaml' && ['record', 'mapping', 'limits'].includes(b.kind));

  it('are found', () => {
    for (const kind of ['record', 'mapping', 'limits'])
      assert.ok(
        examples.some((b) => b.kind === kind),
        kind,
      );
  });

  for (const block of examples) {
    it(`${where(block)} (${block.kind}) is a valid config, without a warning`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gatehouse-docs-records-'));
      try {
        const [file, text] = asFile(block);
        writeFileSync(join(dir, file), text);
        const report = await checkFolder(dir);
        assert.ok(report.ok, `${where(block)}:\n${report.text}`);
        assert.doesNotMatch(report.text, /^warning:/m);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
