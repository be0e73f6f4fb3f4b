import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseHtpasswd, UsersFileError } from '../../../src/auth';
import { quickHash } from '../../support/credentials';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', name), 'utf8');

describe('reading an htpasswd file', () => {
  it('reads the bcrypt user of a file written by Apache htpasswd -B', () => {
    const { users, problems, warnings } = parseHtpasswd(fixture('apache.htpasswd'));
    assert.deepEqual(problems, []);
    assert.deepEqual(warnings, []);
    const entry = users.get('apache-user');
    assert.equal(entry?.scheme, 'bcrypt');
    assert.equal(entry?.cost, 5);
    assert.equal(entry?.line, 2);
  });

  it('reads user names with UTF-8 characters, as Apache htpasswd writes them', () => {
    const { users, problems } = parseHtpasswd(fixture('apache-utf8.htpasswd'));
    assert.deepEqual(problems, []);
    assert.deepEqual([...users.keys()], ['utf8ü', 'Łukasz']);
    assert.equal(users.get('utf8ü')?.line, 2);
  });

  it('reads a file that starts with a byte order mark', () => {
    const { users, problems } = parseHtpasswd(`\ufeffalice:${quickHash('w')}\nbob:${quickHash('b')}\n`);
    assert.deepEqual(problems, []);
    assert.deepEqual([...users.keys()], ['alice', 'bob']);
  });

  it('reads $2a$, $2b$ and $2y$ bcrypt hashes, and verifies $2y$ as $2b$', () => {
    const text = ['a:' + quickHash('x', '2a'), 'b:' + quickHash('x', '2b'), 'y:' + quickHash('x', '2y')].join('\n');
    const { users, problems } = parseHtpasswd(text);
    assert.deepEqual(problems, []);
    assert.match(users.get('a')!.hash, /^\$2a\$04\$/);
    assert.match(users.get('b')!.hash, /^\$2b\$04\$/);
    assert.match(users.get('y')!.hash, /^\$2b\$04\$/);
  });

  it('accepts apr1-MD5 and SHA-1 users with a warning naming the line', () => {
    const { users, problems, warnings } = parseHtpasswd(fixture('apache-legacy.htpasswd'));
    assert.deepEqual(problems, []);
    assert.equal(users.get('apr1-user')?.scheme, 'apr1');
    assert.equal(users.get('sha-user')?.scheme, 'sha1');
    assert.deepEqual(
      warnings.map((w) => w.line),
      [2, 3, 4, 5],
    );
    assert.match(warnings[1].message, /sha-user.*SHA-1.*weak/);
  });

  it('skips comments and blank lines and takes CRLF line ends', () => {
    const text = `# users\r\n\r\n   \r\n  # indented comment\r\nalice:${quickHash('w')}\r\n`;
    const { users, problems } = parseHtpasswd(text);
    assert.deepEqual(problems, []);
    assert.deepEqual([...users.keys()], ['alice']);
    assert.equal(users.get('alice')?.line, 5);
  });

  it("takes what follows the hash after another colon as a comment, as Apache and nginx's name:password:comment do", () => {
    const text = `alice:${quickHash('w')}:Alice Liddell, ops\nbob:{SHA}GpHWL3ymc5liWkNopqtdSjuqYHM=:\ncarol:${quickHash('c')}  :  on call\n`;
    const { users, problems } = parseHtpasswd(text);
    assert.deepEqual(problems, []);
    assert.deepEqual([...users.keys()], ['alice', 'bob', 'carol']);
    assert.match(users.get('alice')!.hash, /^\$2b\$04\$[./A-Za-z0-9]{53}$/);
    assert.equal(users.get('bob')!.hash, '{SHA}GpHWL3ymc5liWkNopqtdSjuqYHM=');
  });

  it('refuses a $2x$ bcrypt hash by its name, not as a malformed one', () => {
    const { problems } = parseHtpasswd(`old:${quickHash('w').replace(/^\$2y\$/, '$2x$')}\n`);
    assert.equal(problems.length, 1);
    assert.equal(problems[0].line, 1);
    assert.match(problems[0].message, /^user 'old': \$2x\$ .*not supported.*htpasswd -B/);
  });

  it('refuses a file with nothing in it, which is what a reload sees of a file being written over; a file of comments only names no user', () => {
    for (const text of ['', '\n\n', ' \r\n\t\n', '\ufeff']) {
      const { problems, users } = parseHtpasswd(text);
      assert.equal(users.size, 0);
      assert.deepEqual(problems, [
        {
          line: 0,
          message:
            'the file is empty: refused, since a file caught while it is being written would shut every user out; for no users, write a comment line',
        },
      ]);
    }
    assert.deepEqual(parseHtpasswd('# nobody yet\n').problems, []);
  });

  it('refuses a plaintext password, naming the line and not the password', () => {
    const text = `alice:${quickHash('w')}\nbob:builder\n`;
    const { problems } = parseHtpasswd(text);
    assert.equal(problems.length, 1);
    assert.equal(problems[0].line, 2);
    assert.match(problems[0].message, /bob.*not hashed.*plaintext/);
    assert.doesNotMatch(problems[0].message, /builder/);
  });

  it('refuses malformed lines, each with its line number', () => {
    const text = [
      `ok:${quickHash('w')}`,
      'no colon here',
      ':$2y$04$abcdefghijklmnopqrstuv',
      'nohash:',
      'badbcrypt:$2y$04$tooshort',
      'unknown:$6$salt$hash',
      'cost:$2y$99$' + 'a'.repeat(53),
      `ok:${quickHash('again')}`,
      ' padded:' + quickHash('w'),
      'tab\there:' + quickHash('w'),
      'c1\u0085:' + quickHash('w'),
      'latin1\ufffd:' + quickHash('w'),
    ].join('\n');
    const { problems, users } = parseHtpasswd(text);
    assert.deepEqual(
      problems.map((p) => p.line),
      [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    );
    assert.match(problems[0].message, /user:hash/);
    assert.match(problems[1].message, /empty/);
    assert.match(problems[2].message, /no password hash/);
    assert.match(problems[3].message, /bcrypt hash is malformed/);
    assert.match(problems[4].message, /not supported/);
    assert.match(problems[5].message, /cost 99/);
    assert.match(problems[6].message, /already defined on line 1/);
    assert.match(problems[7].message, /no space at either end/);
    assert.match(problems[8].message, /no control characters/);
    assert.match(problems[9].message, /no control characters/);
    assert.match(problems[10].message, /not valid UTF-8/);
    assert.deepEqual([...users.keys()], ['ok']);
  });

  it('lists every problem in the error it throws for the whole file', () => {
    const err = new UsersFileError('users.htpasswd', [
      { line: 2, message: 'first' },
      { line: 7, message: 'second' },
    ]);
    assert.equal(err.message, 'users.htpasswd: line 2: first; line 7: second');
  });
});
