/**
 * `ambassador_id` as Emissary reads it: a record names the gateways that
 * serve it (a name or a list), `default` when it names none; records of
 * another gateway are skipped, not refused, and listed as such.
 */
import assert from 'node:assert/strict';
import { serviceManifest } from '../../../support/records';
import { asAnnotation, asResources, loaded, problems, type Fixture } from '../../../support/emissary';

const mapping = (name: string, ambassadorId?: unknown): Fixture => ({
  kind: 'Mapping',
  name,
  spec: {
    prefix: `/${name}/`,
    service: '127.0.0.1:9001',
    ...(ambassadorId !== undefined ? { ambassador_id: ambassadorId } : {}),
  },
});

const FIXTURES = [
  mapping('none'),
  mapping('blue', ['blue']),
  mapping('both', ['blue', 'default']),
  mapping('green', 'green'),
  mapping('named-default', 'default'),
];

describe('Emissary ambassador_id', () => {
  it('serves the records of the default id, and those that name none, when the gateway has no id of its own', () => {
    for (const text of [asResources(...FIXTURES), asAnnotation('svc', ...FIXTURES)]) {
      const result = loaded(text);
      assert.deepEqual(
        result.config.mappings.map((m) => m.name),
        ['none', 'both', 'named-default'],
      );
      assert.deepEqual(
        result.emissary?.skipped.map((s) => [s.kind, s.name, s.ids.join(',')]),
        [
          ['Mapping', 'blue', 'blue'],
          ['Mapping', 'green', 'green'],
        ],
      );
    }
  });

  it("serves only the records that name the gateway's id when it has one, a list matching when it holds it", () => {
    const result = loaded(asResources(...FIXTURES), 'blue');
    assert.deepEqual(
      result.config.mappings.map((m) => m.name),
      ['blue', 'both'],
    );
    assert.equal(result.emissary?.ambassadorId, 'blue');
    assert.deepEqual(
      result.emissary?.skipped.map((s) => s.name),
      ['none', 'green', 'named-default'],
    );
  });

  it('reports no problem of a record it skips, and every problem of one it serves', () => {
    const broken = (id: string): Fixture => ({
      kind: 'Mapping',
      name: `broken-${id}`,
      spec: { prefix: 'no-slash', service: '127.0.0.1:9', ambassador_id: [id], stats_name: 1 },
    });
    assert.equal(loaded(asResources(broken('green'), mapping('ok'))).config.mappings.length, 1);
    assert.deepEqual(problems(asResources(broken('default'))), [
      'config/emissary.yaml: Mapping broken-default: spec.prefix: must start with /',
    ]);
    const tcp: Fixture = {
      kind: 'TCPMapping',
      name: 'db',
      spec: { port: 5432, service: 'db:5432', ambassador_id: 'green' },
    };
    assert.equal(loaded(asResources(tcp)).emissary?.skipped[0].name, 'db');
  });

  it("selects the gateway's own records by the same rule", () => {
    const own = (name: string, id?: string) =>
      `apiVersion: gateway/v1\nkind: Mapping\nname: ${name}\nprefix: /${name}/\nservice: 127.0.0.1:9\n${id ? `ambassador_id: ${id}\n` : ''}`;
    const text = `${own('plain')}---\n${own('blue-only', 'blue')}---\n${serviceManifest('s', own('annotated-blue', '[blue, default]'))}`;
    assert.deepEqual(
      loaded(text).config.mappings.map((m) => m.name),
      ['plain', 'annotated-blue'],
    );
    assert.deepEqual(
      loaded(text, 'blue').config.mappings.map((m) => m.name),
      ['blue-only', 'annotated-blue'],
    );
  });

  it('refuses an ambassador_id that names no gateway', () => {
    assert.deepEqual(problems(asResources(mapping('odd', { blue: true }))), [
      'config/emissary.yaml: Mapping odd: spec.ambassador_id: must be a name or a list of names (the ambassador_id of the gateways that serve the record)',
    ]);
    assert.deepEqual(
      problems(
        'apiVersion: gateway/v1\nkind: Mapping\nname: own\nprefix: /own/\nservice: 127.0.0.1:9\nambassador_id: [3]\n',
      ),
      [
        'config/emissary.yaml: Mapping own: ambassador_id: must be a name or a list of names (the ambassador_id of the gateways that serve the record)',
      ],
    );
  });

  it("refuses an Ingress of Ambassador's class, reading its ambassador_id from its getambassador.io/ambassador-id annotation, and leaves others alone", () => {
    const ingress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  annotations:
    kubernetes.io/ingress.class: ambassador
    getambassador.io/ambassador-id: green
spec:
  rules: [{http: {paths: [{path: /shop, pathType: Prefix, backend: {service: {name: shop, port: {number: 80}}}}]}}]
`;
    assert.equal(loaded(ingress).emissary?.skipped[0].name, 'shop');
    assert.match(
      problems(ingress, 'green')[0],
      /Ingress shop: an Ingress of class ambassador is not read: write each rule's paths as Mappings/,
    );
    const knative = `apiVersion: networking.internal.knative.dev/v1alpha1
kind: Ingress
metadata:
  name: hello
  annotations: {networking.knative.dev/ingress.class: ambassador.ingress.networking.knative.dev}
spec: {rules: []}
`;
    assert.match(problems(knative)[0], /Ingress hello: an Ingress of class ambassador is not read/);
    const nginx = ingress.replace('kubernetes.io/ingress.class: ambassador', 'kubernetes.io/ingress.class: nginx');
    assert.equal(loaded(nginx).config.mappings.length, 0);
  });
});
