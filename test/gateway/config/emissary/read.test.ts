/**
 * How Emissary's files are read: resources and the flat records of the
 * `getambassador.io/config` annotation alike, multi-document files and
 * `kind: List`, beside the gateway's own records; every document of
 * Emissary's that is not served said so by name; problems placed where the
 * resource has them.
 */
import assert from 'node:assert/strict';
import { serviceManifest } from '../../../support/records';
import {
  asAnnotation,
  asResources,
  emissaryRig,
  FORMS,
  load,
  loaded,
  notesOf,
  problems,
  routeTo,
  written,
  type Fixture,
} from '../../../support/emissary';

const QUOTE: Fixture = {
  kind: 'Mapping',
  name: 'quote',
  spec: { prefix: '/quote/', service: '127.0.0.1:9001', timeout_ms: 1500, precedence: 2 },
};

describe('Emissary resources and annotations', () => {
  it('reads a Mapping resource and the same Mapping in the getambassador.io/config annotation as one record', () => {
    const records = FORMS.map((form) => loaded(written(form, QUOTE)).config.mappings[0]);
    for (const m of records)
      assert.deepEqual(
        [m.name, m.prefix, m.service, m.timeout_ms, m.precedence, m.rewrite],
        ['quote', '/quote/', '127.0.0.1:9001', 1500, 2, '/'],
      );
    assert.deepEqual(loaded(written('annotation', QUOTE)).emissary?.records[0].source, {
      file: 'config/emissary.yaml',
      service: 'emissary',
    });
  });

  it('serves the paths of a Service whose only annotation is getambassador.io/config, which used to load as no Mapping', async () => {
    for (const form of FORMS) {
      const rig = await emissaryRig((up) => written(form, routeTo(up, 'quote', { prefix: '/quote/' })));
      try {
        const res = await rig.call('/quote/today');
        assert.deepEqual([res.status, res.route, res.received?.url], [200, 'quote', '/today'], form);
      } finally {
        await rig.close();
      }
    }
  });

  it("reads every document of a file, the items of a kind: List and the gateway's own records beside them", () => {
    const list = `apiVersion: v1
kind: List
items:
${asResources({ kind: 'Mapping', name: 'listed', spec: { prefix: '/listed/', service: '127.0.0.1:9002' } })
  .split('\n')
  .filter(Boolean)
  .map((line, i) => (i === 0 ? `  - ${line}` : `    ${line}`))
  .join('\n')}
`;
    const own = 'apiVersion: gateway/v1\nkind: Mapping\nname: own\nprefix: /own/\nservice: 127.0.0.1:9003\n';
    const result = loaded(
      `${asResources(QUOTE)}---\n${list}---\n${own}---\n${asAnnotation('legacy', { kind: 'Mapping', name: 'legacy', spec: { prefix: '/legacy/', service: '127.0.0.1:9004' } })}`,
    );
    assert.deepEqual(
      result.config.mappings.map((m) => m.name),
      ['quote', 'listed', 'own', 'legacy'],
    );
  });

  it("reads Emissary's records in the gateway's own annotation", () => {
    const result = loaded(
      serviceManifest(
        'quote',
        `apiVersion: getambassador.io/v2\nkind: Mapping\nname: quote\nprefix: /quote/\nservice: 127.0.0.1:9001\n`,
      ),
    );
    assert.deepEqual(
      result.config.mappings.map((m) => [m.name, m.prefix]),
      [['quote', '/quote/']],
    );
  });

  it('reads getambassador.io/v1 and ambassador/v1 as v2, and refuses v0 and versions Emissary does not serve', () => {
    for (const apiVersion of ['getambassador.io/v1', 'ambassador/v1']) {
      assert.equal(loaded(asAnnotation('q', { ...QUOTE, apiVersion })).config.mappings[0].name, 'quote', apiVersion);
    }
    assert.deepEqual(problems(asAnnotation('q', { ...QUOTE, apiVersion: 'ambassador/v0' })), [
      'config/emissary.yaml: service q: Mapping quote: apiVersion: ambassador/v0 is the v0 form, which Emissary 2 and 3 no longer read either: write getambassador.io/v3alpha1, getambassador.io/v2 or getambassador.io/v1',
    ]);
    assert.match(
      problems(asResources({ ...QUOTE, apiVersion: 'getambassador.io/v3alpha2' }))[0],
      /Mapping quote: apiVersion: getambassador.io\/v3alpha2 is not a version Emissary serves/,
    );
  });

  it("refuses the resources of Emissary 2.0's previews (x.getambassador.io), which used to load as no Mapping, naming the kind to write", () => {
    const preview = asResources({ ...QUOTE, apiVersion: 'x.getambassador.io/v3alpha1', kind: 'AmbassadorMapping' });
    assert.deepEqual(problems(preview), [
      "config/emissary.yaml: AmbassadorMapping quote: apiVersion: x.getambassador.io/v3alpha1 is the group of Emissary 2.0's previews, which Emissary 2 and 3 no longer read: write getambassador.io/v3alpha1, kind Mapping",
    ]);
    const host = asResources({
      kind: 'AmbassadorHost',
      name: 'edge',
      apiVersion: 'x.getambassador.io/v3alpha1',
      spec: { hostname: '*' },
    });
    assert.match(problems(host)[0], /AmbassadorHost edge: apiVersion: .* write getambassador.io\/v3alpha1, kind Host$/);
  });

  it("refuses the records of Ambassador 0.x's annotation, ambassador, which used to load as no Mapping, and leaves another use of that name alone", () => {
    const old = asAnnotation('legacy', QUOTE).replace('getambassador.io/config:', 'ambassador:');
    assert.deepEqual(problems(old), [
      "config/emissary.yaml: service legacy: metadata.annotations.ambassador: is Ambassador 0.x's annotation, which Emissary no longer reads: move its records to the getambassador.io/config annotation (apiVersion getambassador.io/v2)",
    ]);
    const unrelated = asAnnotation('legacy', QUOTE).replace(
      '  annotations:\n',
      '  annotations:\n    ambassador: owned by the platform team\n',
    );
    assert.deepEqual(
      loaded(unrelated).config.mappings.map((m) => m.name),
      ['quote'],
    );
  });

  it('reads a field written empty as one left out, as Kubernetes stores it, in either form', () => {
    const empty = { ...QUOTE, spec: { ...QUOTE.spec, rewrite: null, timeout_ms: null, labels: null } };
    const limits = {
      kind: 'RateLimitService',
      name: 'limits',
      spec: { service: '127.0.0.1:8081', protocol_version: null, timeout_ms: null },
    };
    for (const form of FORMS) {
      const result = loaded(written(form, empty, limits));
      const m = result.config.mappings[0];
      assert.deepEqual([m.rewrite, m.timeout_ms, m.labels], ['/', 3000, undefined], form);
      assert.deepEqual(
        [result.config.rateLimitService?.protocol_version, result.config.rateLimitService?.timeout_ms],
        [undefined, 20],
        form,
      );
      assert.ok(
        notesOf(result, 'limits').includes(
          `${form === 'resource' ? 'spec.' : ''}protocol_version: not set: v3, the only protocol asked here; Emissary 3 takes v2 then, which it no longer speaks, and reports an error`,
        ),
        form,
      );
    }
  });

  it("refuses a document of Emissary's annotation that is no Emissary record, rather than pass it over", () => {
    const own = serviceManifest(
      'q',
      'apiVersion: gateway/v1\nkind: Mapping\nname: own\nprefix: /own/\nservice: 127.0.0.1:9',
      'getambassador.io',
    );
    assert.deepEqual(problems(own), [
      "config/emissary.yaml: service q: Mapping own: apiVersion: 'gateway/v1' is not Emissary's: getambassador.io/config holds Emissary's records (getambassador.io/v3alpha1, getambassador.io/v2 or getambassador.io/v1)",
    ]);
  });

  it('says where a problem is in the resource: under spec, at metadata.name, at the host a v2 record wrote', () => {
    const bad = { ...QUOTE, spec: { ...QUOTE.spec, timeout_ms: 'soon' } };
    assert.deepEqual(problems(asResources(bad)), [
      'config/emissary.yaml: Mapping quote: spec.timeout_ms: expected number, received string',
    ]);
    assert.deepEqual(problems(asAnnotation('q', bad)), [
      'config/emissary.yaml: service q: Mapping quote: timeout_ms: expected number, received string',
    ]);
    assert.deepEqual(problems(asResources(QUOTE, QUOTE)), [
      "config/emissary.yaml: Mapping quote: metadata.name: duplicate name: another Mapping is named 'quote' (in config/emissary.yaml)",
    ]);
    const [host] = problems(asAnnotation('q', { ...QUOTE, spec: { ...QUOTE.spec, host: 'api.*.com' } }));
    assert.match(host, /^config\/emissary.yaml: service q: Mapping quote: host: /);
  });

  it('refuses a resource without a name, and fields written beside spec', () => {
    const text = `apiVersion: getambassador.io/v3alpha1
kind: Mapping
metadata: {namespace: shop}
prefix: /quote/
spec: {prefix: /quote/, service: 127.0.0.1:9}
`;
    assert.deepEqual(problems(text), [
      'config/emissary.yaml: Mapping #1: metadata.name: required',
      "config/emissary.yaml: Mapping #1: prefix: is outside spec: a resource's fields go under spec",
    ]);
  });

  it('names two resources of one name in two namespaces apart, as Emissary does', () => {
    const result = loaded(
      asResources(
        { ...QUOTE, namespace: 'shop' },
        { ...QUOTE, namespace: 'blog', spec: { ...QUOTE.spec, prefix: '/blog/' } },
      ),
    );
    assert.deepEqual(
      result.config.mappings.map((m) => m.name),
      ['quote', 'quote.blog'],
    );
    const blog = result.emissary?.records.find((r) => r.namespace === 'blog');
    assert.ok(
      blog?.notes.some(
        (n) =>
          `${n.field}: ${n.note}` ===
          'metadata.name: named quote.blog: another Mapping in namespace shop is named quote',
      ),
    );
  });

  it("qualifies an upstream's Kubernetes name with the namespace of its resource, or of the Service whose annotation holds it", () => {
    const inShop = loaded(asResources({ ...QUOTE, namespace: 'shop', spec: { prefix: '/q/', service: 'quote:8080' } }))
      .config.mappings[0];
    assert.equal(inShop.service, 'quote.shop:8080');
    const manifest = asAnnotation('legacy', { ...QUOTE, spec: { prefix: '/q/', service: 'http://quote' } }).replace(
      'name: legacy',
      'name: legacy\n  namespace: web',
    );
    assert.equal(loaded(manifest).config.mappings[0].service, 'http://quote.web');
    for (const service of ['quote.other:80', '127.0.0.1:9001', 'localhost:9001', 'https://api.example.com']) {
      assert.equal(
        loaded(asResources({ ...QUOTE, namespace: 'shop', spec: { prefix: '/q/', service } })).config.mappings[0]
          .service,
        service,
      );
    }
    assert.equal(load(asResources({ ...QUOTE, spec: { prefix: '/q/', service: '127.0.0.1:9' } })).ok, true);
  });

  it("refuses a key of a resource's metadata that Kubernetes has not, and a name or namespace that is not a string, rather than drop the namespace", () => {
    const typo = `apiVersion: getambassador.io/v3alpha1
kind: Mapping
metadata: {name: quote, namepsace: shop}
spec: {prefix: /quote/, service: quote}
`;
    assert.deepEqual(problems(typo), [
      'config/emissary.yaml: Mapping quote: metadata.namepsace: unknown field: metadata has name, namespace, labels, annotations and the fields Kubernetes sets itself',
    ]);
    assert.deepEqual(problems(typo.replace('namepsace: shop', 'namespace: 7')), [
      'config/emissary.yaml: Mapping quote: metadata.namespace: expected a string',
    ]);
    // What kubectl get -o yaml writes back is read as it is.
    const exported = typo.replace(
      'namepsace: shop}',
      'namespace: shop, uid: 4f1c, resourceVersion: "81", generation: 2, creationTimestamp: "2026-01-02T03:04:05Z", labels: {app: quote}, annotations: {note: x}}',
    );
    assert.equal(loaded(exported).config.mappings[0].service, 'quote.shop');
  });

  it('refuses a misspelt key in the metadata of a Service whose annotation holds records, which would lose its namespace', () => {
    const manifest = asAnnotation('legacy', { ...QUOTE, spec: { prefix: '/q/', service: 'http://quote' } }).replace(
      'name: legacy',
      'name: legacy\n  namspace: web',
    );
    assert.deepEqual(problems(manifest), [
      'config/emissary.yaml: service legacy: metadata.namspace: unknown field: metadata has name, namespace, labels, annotations and the fields Kubernetes sets itself',
    ]);
    // A manifest that holds no records is not the gateway's to check.
    assert.equal(
      load(`${asResources(QUOTE)}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, custom: 1}\n`).ok,
      true,
    );
  });

  it('reads YAML merge keys as Kubernetes and Emissary read them: a namespace merged into metadata qualifies the service', () => {
    const text = `apiVersion: getambassador.io/v3alpha1
kind: Mapping
metadata:
  <<: {namespace: shop}
  name: merged
spec:
  <<: {prefix: /merged/, timeout_ms: 900}
  service: quote
`;
    const [mapping] = loaded(text).config.mappings;
    assert.deepEqual(
      [mapping.name, mapping.prefix, mapping.service, mapping.timeout_ms],
      ['merged', '/merged/', 'quote.shop', 900],
    );
  });

  it('says a document nested too deeply to parse is so, rather than that a stack ran out', () => {
    const [problem] = problems(`a: ${'['.repeat(5000)}${']'.repeat(5000)}\n`);
    assert.match(
      problem,
      /^config\/emissary\.yaml: YAML: nested too deeply to be read \(more than 64 mappings or lists inside each other\) at line 1, column \d+: refused$/,
    );
  });
});
