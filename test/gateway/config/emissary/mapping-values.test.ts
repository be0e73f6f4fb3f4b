/**
 * Mapping fields Emissary users write that YAML or Emissary read loosely:
 * header values that are numbers or booleans, a v2 Mapping with both host
 * and hostname, a service written as a URL with a path; in Emissary's two forms and the gateway's own records,
 * through the gateway to a real upstream.
 */
import assert from 'node:assert/strict';
import { configOf, mapping } from '../../../support/records';
import { configRig } from '../../../support/routing-rig';
import { asAnnotation, emissaryRig, FORMS, loaded, notesOf, routeTo, written } from '../../../support/emissary';

const ADDED = {
  'x-count': 8,
  'x-flag': true,
  'x-off': false,
  'x-mode': { value: 'strict', append: false },
  'x-ratio': { value: 0.5 },
};

describe('added header values that are numbers or booleans', () => {
  for (const form of FORMS) {
    it(`are sent as written, in an Emissary ${form}`, async () => {
      const rig = await emissaryRig((up) =>
        written(
          form,
          routeTo(up, 'edit', {
            prefix: '/edit/',
            add_request_headers: ADDED,
            add_response_headers: { 'x-served': 1 },
          }),
        ),
      );
      try {
        const res = await rig.call('/edit/x', { headers: { 'X-Mode': 'loose' } });
        const got = res.received!.headers;
        assert.deepEqual(
          [got['x-count'], got['x-flag'], got['x-off'], got['x-mode'], got['x-ratio']],
          ['8', 'true', 'false', 'strict', '0.5'],
        );
        assert.equal(res.answer.headers['x-served'], '1');
      } finally {
        await rig.close();
      }
    });
  }

  it("are sent as written, in the gateway's own Mapping", async () => {
    const rig = await configRig((up) => configOf(mapping('/edit/', up, { add_request_headers: ADDED })));
    try {
      const res = await rig.call('/edit/x');
      assert.deepEqual([res.received!.headers['x-count'], res.received!.headers['x-flag']], ['8', 'true']);
    } finally {
      await rig.close();
    }
  });
});

describe('a v2 Mapping with both host and hostname', () => {
  it('routes by hostname, which wins, and says that host is ignored', async () => {
    const text = (up: string) =>
      asAnnotation('s', routeTo(up, 'both', { prefix: '/both/', host: 'old.example', hostname: 'new.example' }));
    const result = loaded(text('127.0.0.1:9'));
    assert.equal(result.config.mappings[0].hostname, 'new.example');
    assert.ok(
      notesOf(result, 'both').includes(
        'host: ignored: hostname is given too, and wins, as in Emissary (which logs the same)',
      ),
    );
    const rig = await emissaryRig(text);
    try {
      assert.equal((await rig.call('/both/x', { headers: { Host: 'new.example' } })).route, 'both');
      assert.equal((await rig.call('/both/x', { headers: { Host: 'old.example' } })).status, 404);
    } finally {
      await rig.close();
    }
  });
});

describe('a service written as a URL with a path', () => {
  for (const form of FORMS) {
    it(`is read as Emissary reads it, host and port alone, with a note for the rest, in an Emissary ${form}`, async () => {
      const text = (up: string) =>
        written(form, routeTo(up, 'api', { prefix: '/api/', service: `http://${up}/v1/base?x=1` }));
      const notes = notesOf(loaded(text('127.0.0.1:9')), 'api');
      const field = form === 'resource' ? 'spec.service' : 'service';
      assert.ok(
        notes.includes(
          `${field}: /v1/base?x=1 is ignored: Emissary reads a service's host and port alone, and warns of the rest`,
        ),
      );
      const rig = await emissaryRig(text);
      try {
        const res = await rig.call('/api/users');
        assert.deepEqual([res.route, res.url], ['api', '/users']);
      } finally {
        await rig.close();
      }
    });
  }

  it("keeps the path of the gateway's own Mapping, where it is the upstream's base path", async () => {
    const rig = await configRig((up) =>
      configOf(mapping('/api/', `http://${up}/v1`, { add_request_headers: { 'X-Route': 'api' } })),
    );
    try {
      assert.equal((await rig.call('/api/users')).url, '/v1/users');
    } finally {
      await rig.close();
    }
  });

  it("cuts the path of a RateLimitService's and an AuthService's service alike", () => {
    const result = loaded(
      written(
        'resource',
        { kind: 'AuthService', name: 'auth', spec: { auth_service: 'http://auth.example:3000/extauth' } },
        {
          kind: 'RateLimitService',
          name: 'limits',
          spec: { service: 'limits.example:8081/rls', protocol_version: 'v3' },
        },
      ),
    );
    assert.deepEqual(
      [result.config.authService?.auth_service, result.config.rateLimitService?.service],
      ['http://auth.example:3000', 'limits.example:8081'],
    );
    assert.ok(notesOf(result, 'auth').some((n) => n.startsWith('spec.auth_service: /extauth is ignored')));
  });
});

describe("keepalive written with Emissary's documented time", () => {
  it('drops time with a note, as Emissary never reads it, and keeps interval and probes, in a Mapping and the Module', () => {
    const result = loaded(
      written(
        'resource',
        { kind: 'Module', name: 'ambassador', spec: { config: { keepalive: { time: 100, interval: 10, probes: 9 } } } },
        {
          kind: 'Mapping',
          name: 'own',
          spec: { prefix: '/own/', service: 'own.example:80', keepalive: { time: 2, probes: 3 } },
        },
        { kind: 'Mapping', name: 'plain', spec: { prefix: '/plain/', service: 'plain.example:80' } },
      ),
    );
    const [own, plain] = result.config.mappings;
    assert.deepEqual([own.keepalive, plain.keepalive], [{ probes: 3 }, { interval: 10, probes: 9 }]);
    assert.ok(notesOf(result, 'own').some((n) => n.startsWith('spec.keepalive.time: ignored, as Emissary ignores it')));
    assert.ok(notesOf(result, 'ambassador').some((n) => n.startsWith('spec.config.keepalive.time: ignored')));
  });
});
