/**
 * Emissary's kinds that become no record: read where what they ask is what
 * the gateway does anyway, each field said to be ignored; refused by name
 * where a client or upstream would feel their absence.
 */
import assert from 'node:assert/strict';
import { asResources, loaded, notesOf, problems, type Fixture } from '../../../support/emissary';

const of = (kind: string, spec: Record<string, unknown>, name = kind.toLowerCase()): Fixture => ({ kind, name, spec });

describe('Emissary kinds that become no record', () => {
  it('reads a Listener, the resolvers and the log service, with what each field stands for', () => {
    const result = loaded(
      asResources(
        of('Listener', {
          port: 8080,
          protocol: 'HTTPS',
          securityModel: 'XFP',
          hostBinding: { namespace: { from: 'ALL' } },
        }),
        of('KubernetesServiceResolver', {}),
        of('KubernetesEndpointResolver', {}),
        of('ConsulResolver', { address: 'consul:8500', datacenter: 'dc1' }),
        of('LogService', { service: 'logs:9000', driver: 'http' }),
      ),
    );
    assert.deepEqual([result.config.mappings.length, result.emissary?.records.length], [0, 5]);
    assert.deepEqual(
      notesOf(result, 'listener').map((n) => n.slice(0, n.indexOf(':'))),
      ['spec.port', 'spec.protocol', 'spec.securityModel', 'spec.hostBinding'],
    );
    assert.equal(
      result.emissary?.records.find((r) => r.kind === 'LogService')?.became,
      'nothing: the access log is written on stdout, one JSON line a request',
    );
  });

  it('refuses TCPMapping, the Edge Stack kinds and a kind Emissary does not have, by name', () => {
    const texts = problems(
      asResources(
        of('TCPMapping', { port: 5432, service: 'db:5432' }),
        of('FilterPolicy', { rules: [{ host: '*', path: '*', filters: [{ name: 'jwt' }] }] }),
        of('Mapper', { prefix: '/' }),
      ),
    );
    const expected = [
      'config/emissary.yaml: TCPMapping tcpmapping: not supported: TCP connections are not proxied, only HTTP',
      'config/emissary.yaml: FilterPolicy filterpolicy: not supported: an Ambassador Edge Stack kind, whose authentication or limits would not be applied',
      "config/emissary.yaml: Mapper mapper: kind: 'Mapper' is not a kind this gateway reads: Mapping, AuthService, RateLimitService, Module, Host, TLSContext",
    ];
    assert.equal(texts.length, expected.length, texts.join('\n'));
    texts.forEach((text, i) => assert.ok(text.startsWith(expected[i]), text));
  });
});
