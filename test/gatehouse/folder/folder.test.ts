import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileSystemSource } from '../../../src/files';
import { loadFolder, MAX_PROBLEMS, type FolderWants } from '../../../src/gatehouse';
import { checkTexts } from '../../../src/gatehouse/folder';
import { checkOffThread } from '../../../src/gatehouse/folder/off-thread';
import { aliasBomb, padded } from '../../support/hostile-yaml';
import { copyConfig, DEMO_CONFIG } from '../../support/config-folder';

const START: FolderWants = { records: true, limits: true, users: 'present', bookings: 'present' };
const options = { source: fileSystemSource, fileSizeLimit: 8 * 1024 * 1024 };

describe('a config folder read and checked whole', function () {
  it('gives the same records, sources, users, limits and data checked on a worker thread as on the event loop', async () => {
    const here = await loadFolder(DEMO_CONFIG, START, options);
    const there = await loadFolder(DEMO_CONFIG, START, { ...options, offThreadBytes: 0 });
    assert.deepEqual(here.problems, []);
    assert.deepEqual(there, here);
    assert.equal(
      there.config!.recordSources!.get(there.config!.mappings[0])?.file,
      here.config!.recordSources!.get(here.config!.mappings[0])?.file,
    );
    assert.equal(there.users!.users.get('alice')?.scheme, 'bcrypt');
    assert.ok(there.limits!.table.domains.has('gateway'));
  });

  it('checks the match, canary, redirect, upstream and label fields of Mappings alike on a worker thread and on the event loop', async () => {
    const mapping = (name: string, fields: string) =>
      `apiVersion: gateway/v1\nkind: Mapping\nname: ${name}\nservice: 127.0.0.1:9\n${fields}\n`;
    const good = [
      mapping('catalog', "prefix: '(?i)/(en|fr)/catalog/.*'\nprefix_regex: true\nbypass_auth: true"),
      mapping('reads', "prefix: /orders/\nmethod: 'GET|HEAD'\nmethod_regex: true"),
      mapping(
        'phones',
        "prefix: /shop/\nregex_headers: {User-Agent: '.*Android.*'}\nquery_parameters: {view: mobile, debug: true}\nregex_query_parameters: {page: '[0-9]+'}",
      ),
      mapping('regional', "prefix: /eu/\nhost: 'eu-[0-9]+\\.example\\.org'\nhost_regex: true"),
      mapping('legacy', "prefix: /legacy/\nregex_rewrite: {pattern: '^/legacy/([0-9]+)$', substitution: '/items/\\1'}"),
      mapping('stable', 'prefix: /quotes/'),
      mapping('canary', 'prefix: /quotes/\nweight: 10'),
      mapping(
        'quote',
        'prefix: /quote/\nnamespace: shop\nendpoints: [10.0.0.1, "10.0.0.2:8081"]\nretry_policy: {retry_on: "5xx,reset", num_retries: 2, per_try_timeout: 1.5s}\ncircuit_breakers: [{max_connections: 10}]\nload_balancer: {policy: ring_hash, header: X-User}',
      ),
      mapping(
        'labelled',
        'prefix: /labelled/\nlabels: {gateway: [{request_label_group: [{request_headers: {key: user, header_name: X-User}}, {generic_key: {value: hotels}}, remote_address]}]}',
      ),
      mapping('raw', 'prefix: /raw/\nallow_unsafe_path_escapes: true'),
      'apiVersion: gateway/v1\nkind: Mapping\nname: moved\nprefix: /old/\nservice: https://blog.example.org\nhost_redirect: true\nprefix_redirect: /new/\nredirect_response_code: 308\n',
      'apiVersion: gateway/v1\nkind: Module\nname: ambassador\nconfig: {regex_max_size: 300}\n',
    ].join('---\n');
    const bad = [
      mapping('ahead', "prefix: /a/\nregex_headers: {User-Agent: '(?=.*Android).*'}"),
      mapping('heavy', 'prefix: /b/\nweight: 150'),
      mapping('groups', "prefix: /c/\nregex_rewrite: {pattern: '^/c/(x)$', substitution: '/\\2'}"),
      mapping('stray', 'prefix: /d/\npath_redirect: /e/'),
      mapping('teapot', 'prefix: /f/\nretry_policy: {retry_on: "5xx,teapot"}'),
      mapping('label', 'prefix: /g/\nlabels: {gateway: [{request_label_group: [{a: 1, b: 2}]}]}'),
    ].join('---\n');
    for (const text of [good, bad]) {
      const texts = { records: [{ file: 'match.yaml', text }] };
      const here = checkTexts(texts);
      const there = await checkOffThread(texts);
      assert.deepEqual(there, here);
      assert.equal(there.config === undefined, text === bad);
    }
    assert.deepEqual(
      checkTexts({ records: [{ file: 'match.yaml', text: bad }] }).problems.map(
        (p) => /^match\.yaml: (Mapping \w+: [\w.-]+):/.exec(p.text)?.[1],
      ),
      [
        'Mapping ahead: regex_headers.User-Agent',
        'Mapping heavy: weight',
        'Mapping groups: regex_rewrite.substitution',
        'Mapping stray: path_redirect',
        'Mapping teapot: retry_policy.retry_on',
        'Mapping label: labels.gateway.0.request_label_group.0',
      ],
    );
  });

  it('ends the checking thread when the check is called off, and rejects with why', async () => {
    const texts = {
      records: [
        {
          file: 'many.yaml',
          text: padded('apiVersion: gateway/v1\nkind: Mapping\nname: m\nprefix: /m/\nservice: api\n', 64 * 1024),
        },
      ],
    };
    const stop = new AbortController();
    const checking = checkOffThread(texts, stop.signal);
    stop.abort(new Error('the gateway is stopping'));
    await assert.rejects(checking, /^Error: the check was called off: the gateway is stopping$/);
    await assert.rejects(checkOffThread(texts, stop.signal), /called off/);
    // Not called off, the same texts check.
    assert.deepEqual((await checkOffThread(texts)).problems, []);
  });

  it('rejects, saying why, when the checking thread itself fails, and a check after it runs on a thread of its own', async () => {
    const texts = {
      records: [
        { file: 'ok.yaml', text: 'apiVersion: gateway/v1\nkind: Mapping\nname: m\nprefix: /m/\nservice: api\n' },
      ],
    };
    // A limits entry that is no file: the thread throws where no problem of a file can catch it.
    await assert.rejects(checkOffThread({ ...texts, limits: [null as never] }), /^Error: the checking thread failed: /);
    assert.deepEqual((await checkOffThread(texts)).problems, []);
  });

  it('refuses a folder named ratelimit.yaml, users.htpasswd or bookings.yaml, naming it, where a sub-folder of ratelimit/ is passed over', async () => {
    for (const name of ['ratelimit.yaml', 'users.htpasswd', 'bookings.yaml']) {
      const config = copyConfig();
      try {
        rmSync(join(config.dir, name));
        mkdirSync(join(config.dir, name));
        mkdirSync(join(config.dir, 'ratelimit', 'nested.yaml'), { recursive: true });
        const loaded = await loadFolder(
          config.dir,
          { records: true, limits: true, users: true, bookings: true },
          options,
        );
        assert.deepEqual(
          loaded.problems.map((p) => p.text.replace(`${config.dir}/`, '')),
          [`${name}: is a folder, not a file`],
        );
      } finally {
        config.remove();
      }
    }
  });

  it('refuses each file of the folder that is not UTF-8, naming it and the line, on the event loop and on the worker thread', async () => {
    const config = copyConfig();
    try {
      writeFileSync(
        join(config.dir, 'latin1.yaml'),
        Buffer.from(
          'apiVersion: gateway/v1\nkind: Mapping\nname: caf\xE9\nprefix: /caf\xE9/\nservice: api\n',
          'latin1',
        ),
      );
      const users = config.read('users.htpasswd');
      writeFileSync(
        join(config.dir, 'users.htpasswd'),
        Buffer.concat([Buffer.from(users), Buffer.from('j\xFCrgen:$2y$10$x\n', 'latin1')]),
      );
      const usersLine = users.split('\n').length;
      const expected = [
        `${config.dir}/latin1.yaml: is not UTF-8 text: line 3 holds a byte that is not UTF-8; save the file as UTF-8`,
        `${config.dir}/users.htpasswd: is not UTF-8 text: line ${usersLine} holds a byte that is not UTF-8; save the file as UTF-8`,
      ];
      for (const offThreadBytes of [Infinity, 0]) {
        const loaded = await loadFolder(config.dir, START, { ...options, offThreadBytes });
        assert.deepEqual(
          loaded.problems.map((p) => p.text),
          expected,
        );
      }
    } finally {
      config.remove();
    }
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
    const records = Array.from(
      { length: 150 },
      (_, i) => `apiVersion: gateway/v1\nkind: Mapping\nname: m${i}\nservice: api\n`,
    ).join('---\n');
    const checked = checkTexts({ records: [{ file: 'many.yaml', text: records }] });
    assert.equal(checked.problems.length, MAX_PROBLEMS + 1);
    assert.equal(checked.problems[0].text, 'many.yaml: Mapping m0: prefix: required (expected string)');
    assert.equal(checked.problems[MAX_PROBLEMS].text, 'and 50 more problems: put these right first');
  });
});
