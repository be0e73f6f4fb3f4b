/**
 * @module test/gateway/config/warnings
 * What a valid configuration is warned of, as `gatehouse check` prints it
 * and a load logs it: a CORS policy that lets every site read answers sent
 * with a user's credentials.
 */
import assert from 'node:assert/strict';
import { checkTexts } from '../../../src/gatehouse/folder';

const record = (name: string, cors: string) =>
  `apiVersion: gateway/v1\nkind: Mapping\nname: ${name}\nprefix: /${name}/\nservice: 127.0.0.1:9\ncors: ${cors}\n`;

describe('gateway config warnings', () => {
  it('warns of origins "*" with credentials, on a Mapping and on the Module, and of nothing else', () => {
    const text = [
      record('open', "{origins: '*', credentials: true}"),
      record('listed', "{origins: ['https://app.example'], credentials: true}"),
      record('anonymous', "{origins: '*'}"),
      "apiVersion: gateway/v1\nkind: Module\nname: gateway\nconfig: {cors: {origins: ['https://a.example', '*'], credentials: true}}\n",
    ].join('---\n');
    const checked = checkTexts({ records: [{ file: 'services.yaml', text }] });
    assert.deepEqual(checked.problems, []);
    const says = 'origins "*" with credentials: true lets every web site read its answers';
    assert.equal(checked.warnings.length, 2, checked.warnings.join('\n'));
    assert.ok(checked.warnings[0].startsWith(`Module gateway: config.cors: ${says}`), checked.warnings[0]);
    assert.ok(checked.warnings[1].startsWith(`Mapping open: cors: ${says}`), checked.warnings[1]);
  });

  it('warns of labels whose domain no RateLimitService asks under, which would limit nothing', () => {
    const labelled = (name: string, domain: string) =>
      `apiVersion: gateway/v1\nkind: Mapping\nname: ${name}\nprefix: /${name}/\nservice: 127.0.0.1:9\nlabels: {${domain}: [{g: [{generic_key: x}]}]}\n`;
    const limits =
      'apiVersion: gateway/v1\nkind: RateLimitService\nname: limits\nservice: 127.0.0.1:8081\ndomain: shop\n';
    const checked = checkTexts({
      records: [
        {
          file: 'services.yaml',
          text: [labelled('served', 'shop'), labelled('stray', 'ambassador'), limits].join('---\n'),
        },
      ],
    });
    assert.deepEqual(checked.warnings, [
      'Mapping stray: labels.ambassador: the RateLimitService asks under domain shop, so these labels are never sent and limit nothing (as in Emissary, which drops them without a word)',
    ]);
    const alone = checkTexts({ records: [{ file: 'services.yaml', text: labelled('lonely', 'shop') }] });
    assert.match(alone.warnings[0], /^Mapping lonely: labels.shop: no RateLimitService is configured/);
  });
});
