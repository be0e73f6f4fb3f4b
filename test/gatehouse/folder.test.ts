import assert from 'node:assert/strict';
import { fileSystemSource } from '../../src/files';
import { loadFolder, MAX_PROBLEMS, type FolderWants } from '../../src/gatehouse';
import { checkTexts } from '../../src/gatehouse/folder';
import { aliasBomb, padded } from './support/hostile';
import { copyConfig, DEMO_CONFIG } from './support/running';

const START: FolderWants = { records: true, limits: true, users: 'present', bookings: 'present' };
const options = { source: fileSystemSource, fileSizeLimit: 8 * 1024 * 1024 };

describe('a config folder read and checked whole', function () {
  this.timeout(60_000);

  it('gives the same records, sources, users, limits and data checked on a worker thread as on the event loop', async () => {
    const here = await loadFolder(DEMO_CONFIG, START, options);
    const there = await loadFolder(DEMO_CONFIG, START, { ...options, offThreadBytes: 0 });
    assert.deepEqual(here.problems, []);
    assert.deepEqual(there, here);
    assert.equal(there.config!.recordSources!.get(there.config!.mappings[0])?.file, here.config!.recordSources!.get(here.config!.mappings[0])?.file);
    assert.equal(there.users!.users.get('alice')?.scheme, 'bcrypt');
    assert.ok(there.limits!.table.domains.has('gateway'));
  });

  it('names the file of a fault found on the worker thread, and the others are still checked', async () => {
    const config = copyConfig();
    try {
      config.write('bomb.yaml', padded(aliasBomb(), 40 * 1024));
      config.write('users.htpasswd', 'mallory:open-sesame\n');
      const loaded = await loadFolder(config.dir, START, options);
      assert.deepEqual(
        loaded.problems.map((p) => p.text),
        [
          `${config.dir}/bomb.yaml: YAML: uses aliases more than 100 times: refused, as a file that expands without bound would be`,
          `${config.dir}/users.htpasswd: line 1: user 'mallory': the password is not hashed: plaintext and crypt() are refused (use htpasswd -B)`,
        ],
      );
    } finally {
      config.remove();
    }
  });

  it(`reports the first ${MAX_PROBLEMS} problems of a folder and how many more there are`, () => {
    const records = Array.from({ length: 150 }, (_, i) => `apiVersion: gateway/v1\nkind: Mapping\nname: m${i}\nservice: api\n`).join('---\n');
    const checked = checkTexts({ records: [{ file: 'many.yaml', text: records }] });
    assert.equal(checked.problems.length, MAX_PROBLEMS + 1);
    assert.equal(checked.problems[0].text, 'many.yaml: Mapping m0: prefix: required (expected string)');
    assert.equal(checked.problems[MAX_PROBLEMS].text, 'and 50 more problems: put these right first');
  });
});
