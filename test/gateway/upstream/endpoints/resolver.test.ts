/**
 * The lookup of an upstream's name, as Envoy's strict_dns clusters look one
 * up: the address families asked for, the forms of a name tried, and how
 * long an answer holds, with and without respect_dns_ttl (against a real
 * DNS server on the loopback for the TTL it gives).
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { promises as dns } from 'node:dns';
import { DnsName, systemResolve, type Resolve } from '../../../../src/gateway/upstream/endpoints/resolver';
import { mapping } from '../../../support/records';
import { send } from '../../../support/client';
import { testClock } from '../../../support/clock';
import { testGateway } from '../../../support/reporting-gateway';
import { testUpstream } from '../../../support/upstreams';

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

/** A DNS server on a free loopback port that answers A queries for `name` with `address` and `ttl`, and NXDOMAIN for others. */
async function dnsServer(name: string, address: string, ttl: number): Promise<{ port: number; close(): void }> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, peer) => {
    // The question: labels from byte 12 to the zero byte, then its type and class.
    let at = 12;
    const labels: string[] = [];
    while (query[at] !== 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]).toString());
      at += query[at] + 1;
    }
    const question = query.subarray(12, at + 5);
    const known = labels.join('.') === name && query.readUInt16BE(at + 1) === 1;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(known ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(known ? 1 : 0, 6);
    const answer = Buffer.alloc(16);
    answer.writeUInt16BE(0xc00c, 0);
    answer.writeUInt16BE(1, 2);
    answer.writeUInt16BE(1, 4);
    answer.writeUInt32BE(ttl, 6);
    answer.writeUInt16BE(4, 10);
    address.split('.').forEach((part, i) => answer.writeUInt8(Number(part), 12 + i));
    socket.send(Buffer.concat(known ? [header, question, answer] : [header, question]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, close: () => socket.close() };
}

describe('respect_dns_ttl', () => {
  /** A resolver whose answers hold `ttl` seconds when asked with TTLs, counting its lookups. */
  function timed(ttl: number): Resolve & { lookups: boolean[] } {
    const lookups: boolean[] = [];
    const resolve = (async (_name: string, _family: 0 | 4 | 6, withTtl?: boolean) => {
      lookups.push(withTtl === true);
      return withTtl === true ? { addresses: ['10.0.0.1'], ttl } : ['10.0.0.1'];
    }) as Resolve & { lookups: boolean[] };
    resolve.lookups = lookups;
    return resolve;
  }

  it("looks a name up again once its records' TTL has passed, not every 5 s; without it, every 5 s", async () => {
    let now = 0;
    const lookUpAt = async (name: DnsName, at: number) => {
      now = at;
      name.current();
      await name.ready();
      // The lookup is settled once the turn after its answer is over.
      await new Promise(setImmediate);
    };
    const respecting = timed(30);
    const name = new DnsName(
      ['quote'],
      'v4',
      respecting,
      () => now,
      () => undefined,
      true,
    );
    for (const at of [0, 6_000, 29_000, 30_500, 36_000]) await lookUpAt(name, at);
    assert.deepEqual(respecting.lookups, [true, true]);

    const plain = timed(30);
    const other = new DnsName(
      ['quote'],
      'v4',
      plain,
      () => now,
      () => undefined,
    );
    for (const at of [0, 6_000, 29_000]) await lookUpAt(other, at);
    assert.deepEqual(plain.lookups, [false, false, false]);
  });

  it('takes a TTL of 0 as Envoy does: looked up again at the default rate', async () => {
    let now = 0;
    const zero = timed(0);
    const name = new DnsName(
      ['quote'],
      'v4',
      zero,
      () => now,
      () => undefined,
      true,
    );
    for (const at of [0, 4_000, 5_000]) {
      now = at;
      name.current();
      await name.ready();
      await new Promise(setImmediate);
    }
    assert.deepEqual(zero.lookups, [true, true]);
  });

  it("reads the TTL from a real DNS server's answer, and looks a name DNS does not know up as without", async () => {
    const server = await dnsServer('ttl.gatehouse.test', '10.9.8.7', 42);
    const servers = dns.getServers();
    try {
      dns.setServers([`127.0.0.1:${server.port}`]);
      assert.deepEqual(await systemResolve('ttl.gatehouse.test', 4, true), { addresses: ['10.9.8.7'], ttl: 42 });
      assert.deepEqual(await systemResolve('localhost', 4, true), ['127.0.0.1']);
    } finally {
      dns.setServers(servers);
      server.close();
    }
  });
});

describe('respect_dns_ttl, through the gateway to a real upstream', () => {
  it("sends requests to the name's addresses, looking it up again only once the TTL has passed", async () => {
    const up = await testUpstream('127.0.0.1');
    const clock = testClock();
    const lookups: string[] = [];
    const resolve: Resolve = async (name, _family, withTtl) => {
      lookups.push(name);
      return withTtl === true ? { addresses: ['127.0.0.1'], ttl: 60 } : ['127.0.0.1'];
    };
    const rig = await testGateway(
      [
        mapping('/ttl/', `kitchen.example:${up.port}`, { name: 'ttl', respect_dns_ttl: true }),
        mapping('/plain/', `pantry.example:${up.port}`, { name: 'plain' }),
      ],
      { resolve, now: clock.now },
    );
    try {
      const statuses: number[] = [];
      for (const step of [0, 10_000, 10_000, 45_000]) {
        clock.advance(step);
        for (const path of ['/ttl/x', '/plain/x']) {
          statuses.push((await send(rig.base, path)).status);
          // A refresh started by this request is settled before the clock moves again.
          await new Promise(setImmediate);
        }
      }
      assert.deepEqual(statuses, Array(8).fill(200));
      assert.deepEqual(
        [lookups.filter((n) => n.startsWith('kitchen.')).length, lookups.filter((n) => n.startsWith('pantry.')).length],
        [2, 4],
      );
    } finally {
      await rig.close();
      await up.close();
    }
  });
});
