import assert from 'node:assert/strict';
import { DnsName, type Resolve } from '../../../../src/gateway/upstream/endpoints/resolver';

describe('the lookup of an upstream name', () => {
  /** A resolver answering every name with both families, and noting the family asked for. */
  function dualStack(): Resolve & { families: number[] } {
    const families: number[] = [];
    const resolve = (async (_name: string, family: 0 | 4 | 6) => {
      families.push(family);
      const all = ['10.0.0.2', 'fd00::2', '10.0.0.1', 'fd00::1'];
      return family === 0 ? all : all.filter((a) => a.includes(':') === (family === 6));
    }) as Resolve & { families: number[] };
    resolve.families = families;
    return resolve;
  }

  it('asks for IPv4 only by default, IPv6 only with enable_ipv6 alone, and prefers IPv6 with both, as Emissary does', async () => {
    const resolve = dualStack();
    const of = (family: 'v4' | 'v6' | 'auto') =>
      new DnsName(
        ['quote'],
        family,
        resolve,
        () => 0,
        () => undefined,
      ).ready();
    assert.deepEqual(await of('v4'), ['10.0.0.1', '10.0.0.2']);
    assert.deepEqual(await of('v6'), ['fd00::1', 'fd00::2']);
    assert.deepEqual(await of('auto'), ['fd00::1', 'fd00::2']);
    assert.deepEqual(resolve.families, [4, 6, 0]);
  });

  it('tries the next form of a name only when the first does not exist, not when DNS failed', async () => {
    const asked: string[] = [];
    const failing: Resolve = async (name) => {
      asked.push(name);
      throw Object.assign(new Error('timeout'), { code: 'EAI_AGAIN' });
    };
    await assert.rejects(
      new DnsName(
        ['quote.shop.svc.cluster.local', 'quote.shop'],
        'v4',
        failing,
        () => 0,
        () => undefined,
      ).ready(),
      /timeout/,
    );
    assert.deepEqual(asked, ['quote.shop.svc.cluster.local']);
  });
});
