import assert from 'node:assert/strict';
import { compileDocuments, createLimitTableBuilder, findRule, limitEntries } from '../../../src/ratelimit';

describe('a limit table carried as its entries', () => {
  const table = compileDocuments([
    {
      domain: 'edge',
      descriptors: [
        {
          key: 'client',
          rate_limit: { unit: 'minute', requests_per_unit: 10 },
          descriptors: [{ key: 'path', value: '/admin', rate_limit: { unit: 'second', requests_per_unit: 1 } }],
        },
        { key: 'client', value: 'vip*', rate_limit: { unit: 'minute', requests_per_unit: 1000 } },
        { key: 'client', value: 'v*p', rate_limit: { unit: 'minute', requests_per_unit: 500 } },
        { key: 'client', value: 'alice', rate_limit: { unit: 'hour', requests_per_unit: 3 } },
      ],
    },
    { domain: 'other', descriptors: [{ key: 'k', rate_limit: { unit: 'day', requests_per_unit: 7 } }] },
  ]);

  it('is built back, as the entries come, into a table that finds every rule the first one finds', () => {
    const builder = createLimitTableBuilder();
    // Through a copy, as a message between threads carries them.
    for (const entry of structuredClone([...limitEntries(table)])) builder.add(entry);
    const rebuilt = builder.table(table.hasReplaces, table.ruleCount);
    assert.deepEqual(rebuilt, table);
    const cases: [string, [string, string][]][] = [
      ['edge', [['client', 'bob']]],
      [
        'edge',
        [
          ['client', 'bob'],
          ['path', '/admin'],
        ],
      ],
      ['edge', [['client', 'vip-1']]],
      ['edge', [['client', 'vxp']]],
      ['edge', [['client', 'alice']]],
      ['other', [['k', 'x']]],
      ['nowhere', [['k', 'x']]],
    ];
    for (const [domain, entries] of cases) {
      const descriptor = entries.map(([key, value]) => ({ key, value }));
      assert.equal(
        findRule(rebuilt, domain, descriptor)?.fullKey,
        findRule(table, domain, descriptor)?.fullKey,
        JSON.stringify(entries),
      );
    }
    assert.equal(findRule(rebuilt, 'edge', [{ key: 'client', value: 'vip-1' }])?.requestsPerUnit, 1000);
  });
});
