import assert from 'node:assert/strict';
import { createGatehouse, resolveOptions } from '../../src/gatehouse';
import { DEMO_CONFIG } from './support/running';

describe('gatehouse options from code', () => {
  const refused: [string, Record<string, unknown>, RegExp][] = [
    ['a negative body limit', { bodyLimit: -5 }, /^bodyLimit must be a number of bytes \(0 or more\), got -5$/],
    ['a fractional body limit', { bodyLimit: 1.5 }, /^bodyLimit must be a number of bytes \(0 or more\), got 1\.5$/],
    ['a port over 65535', { port: 70000 }, /^port must be a port number \(0-65535\), got 70000$/],
    ['a gRPC port that is NaN', { grpcPort: NaN }, /^grpcPort must be a port number or false \(0-65535\), got NaN$/],
    ['a negative shutdown grace', { shutdownGraceMs: -1 }, /^shutdownGraceMs must be a number of milliseconds \(0 or more\), got -1$/],
    ['an infinite reload debounce', { reloadDebounceMs: Infinity }, /^reloadDebounceMs must be a number of milliseconds \(0 or more\), got Infinity$/],
    ['a fractional keep-alive timeout', { keepAliveTimeoutMs: 0.5 }, /^keepAliveTimeoutMs must be a number of milliseconds \(0 or more\), got 0\.5$/],
    ['a negative retry buffer', { retryBufferBytes: -1 }, /^retryBufferBytes must be a number of bytes \(0 or more\), got -1$/],
    ['a cluster domain that is no domain', { clusterDomain: 'cluster local' }, /^clusterDomain must be a DNS domain such as cluster\.local, got 'cluster local'$/],
  ];
  for (const [what, option, message] of refused) {
    it(`refuses ${what}, naming the option`, async () => {
      await assert.rejects(createGatehouse({ configDir: DEMO_CONFIG, grpcPort: false, watch: false, ...option }), (err: Error) => {
        assert.equal(err.name, 'RangeError');
        assert.match(err.message, message);
        return true;
      });
    });
  }

  it('keeps idle keep-alive connections 65 s, or as long as keepAliveTimeoutMs says, and tells clients so', async () => {
    for (const [option, header] of [[{}, 'timeout=65'], [{ keepAliveTimeoutMs: 620_000 }, 'timeout=620']] as const) {
      const gatehouse = await createGatehouse({ configDir: DEMO_CONFIG, port: 0, grpcPort: false, watch: false, ...option });
      const { url } = await gatehouse.start();
      try {
        const res = await fetch(`${url}/gateway/v0/check_alive`);
        assert.equal(res.headers.get('keep-alive'), header);
        await res.text();
      } finally {
        await gatehouse.stop();
      }
    }
  });

  it('takes 0 for the ports, the body limit and the times', async () => {
    const gatehouse = await createGatehouse({ configDir: DEMO_CONFIG, port: 0, grpcPort: false, bodyLimit: 0, shutdownGraceMs: 0, reloadDebounceMs: 0, watch: false });
    const { port } = await gatehouse.start();
    assert.ok(port > 0);
    await gatehouse.stop();
  });

  it('takes the cluster domain from GATEHOUSE_CLUSTER_DOMAIN, cluster.local without it, and names the variable when it is wrong', () => {
    assert.equal(resolveOptions({}, {}).clusterDomain, 'cluster.local');
    assert.equal(resolveOptions({}, { GATEHOUSE_CLUSTER_DOMAIN: 'k8s.example.com' }).clusterDomain, 'k8s.example.com');
    assert.equal(resolveOptions({ clusterDomain: 'mesh.local' }, { GATEHOUSE_CLUSTER_DOMAIN: 'k8s.example.com' }).clusterDomain, 'mesh.local');
    assert.throws(() => resolveOptions({}, { GATEHOUSE_CLUSTER_DOMAIN: 'cluster.local.' }), /^RangeError: GATEHOUSE_CLUSTER_DOMAIN must be a DNS domain such as cluster\.local, got 'cluster\.local\.'$/);
  });
});
