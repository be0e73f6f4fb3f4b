import assert from 'node:assert/strict';
import Koa from 'koa';
import request from 'supertest';
import { createCorsPolicies, corsMiddleware, corsPolicyProblems, isPreflight, type CorsPolicy } from '../../src/cors';
import { errorHandler, HttpError } from '../../src/http';

const A = 'https://a.example';
const B = 'https://b.example';

function policy(fields: Partial<CorsPolicy>): CorsPolicy {
  return { origins: [A], credentials: false, ...fields };
}

/**
 * A gateway-shaped app: error handler, the mapping's CORS middleware (when
 * there is one), then a stand-in for auth that refuses requests without
 * credentials, then the backend.
 */
function appFor(cors: Koa.Middleware | undefined, backend: Koa.Middleware = defaultBackend) {
  const reached: string[] = [];
  const app = new Koa();
  app.silent = true;
  app.use(errorHandler());
  if (cors) app.use(cors);
  app.use(async (ctx, next) => {
    reached.push(ctx.method);
    if (!ctx.get('Authorization'))
      throw new HttpError(401, 'credentials needed', { headers: { 'WWW-Authenticate': 'Basic' } });
    await next();
  });
  app.use(backend);
  return { server: app.callback(), reached };
}

const defaultBackend: Koa.Middleware = (ctx) => {
  ctx.set('RateLimit', 'limit=10, remaining=9, reset=60');
  ctx.set('Location', '/v1/hotels/bookings/1');
  ctx.body = { ok: true };
};

function exposed(res: request.Response): string[] {
  return String(res.headers['access-control-expose-headers'] ?? '').split(',');
}

describe('cors', () => {
  describe('off by default', () => {
    it('gives no middleware without a gateway-wide policy or a mapping policy', () => {
      const policies = createCorsPolicies();
      assert.equal(policies.forMapping({ cors: undefined }), undefined);
      assert.equal(policies.forMapping(), undefined);
    });
  });

  describe('preflight', () => {
    const cors = corsMiddleware(policy({ methods: ['GET', 'put'], headers: 'Content-Type, X-Custom', max_age: 600 }));

    it('is answered 204 for an allowed origin, without credentials and without reaching auth', async () => {
      const { server, reached } = appFor(cors);
      const res = await request(server)
        .options('/v1/hotels/bookings/')
        .set('Origin', A)
        .set('Access-Control-Request-Method', 'PUT')
        .set('Access-Control-Request-Headers', 'content-type,x-custom')
        .expect(204);
      assert.equal(res.headers['access-control-allow-origin'], A);
      assert.equal(res.headers['access-control-allow-methods'], 'GET,PUT');
      assert.equal(res.headers['access-control-allow-headers'], 'Content-Type,X-Custom');
      assert.equal(res.headers['access-control-max-age'], '600');
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
      assert.match(String(res.headers.vary), /Origin/);
      assert.deepEqual(reached, []);
    });

    it('is refused with 403 and no Access-Control-Allow-Origin for another origin', async () => {
      const { server, reached } = appFor(cors);
      const res = await request(server)
        .options('/v1/hotels/bookings/')
        .set('Origin', B)
        .set('Access-Control-Request-Method', 'PUT')
        .expect(403);
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      assert.equal(res.body.code, 403);
      assert.match(res.body.detail, /origin https:\/\/b\.example is not allowed/);
      assert.match(String(res.headers.vary), /Origin/);
      assert.deepEqual(reached, []);
    });

    it('allows the requested headers when the policy lists none', async () => {
      const { server } = appFor(corsMiddleware(policy({})));
      const res = await request(server)
        .options('/x')
        .set('Origin', A)
        .set('Access-Control-Request-Method', 'DELETE')
        .set('Access-Control-Request-Headers', 'x-anything')
        .expect(204);
      assert.equal(res.headers['access-control-allow-headers'], 'x-anything');
      assert.equal(res.headers['access-control-allow-methods'], 'GET,HEAD,PUT,POST,DELETE,PATCH');
    });

    it('leaves an OPTIONS request that is no preflight to the routes behind', async () => {
      const { server, reached } = appFor(cors);
      await request(server).options('/x').set('Origin', A).expect(401);
      assert.deepEqual(reached, ['OPTIONS']);
    });
  });

  describe('actual requests', () => {
    it('get the allowed origin and the exposed headers, always including the gateway ones', async () => {
      const { server } = appFor(corsMiddleware(policy({ exposed_headers: ['X-Trace', 'location'] })));
      const res = await request(server).get('/x').set('Origin', A).set('Authorization', 'Basic x').expect(200);
      assert.equal(res.headers['access-control-allow-origin'], A);
      assert.deepEqual(exposed(res), ['Link', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'Location', 'X-Trace']);
      assert.match(String(res.headers.vary), /Origin/);
    });

    it('from another origin are served without CORS headers, so the browser keeps the answer from the page', async () => {
      const { server } = appFor(corsMiddleware(policy({})));
      const res = await request(server).get('/x').set('Origin', B).set('Authorization', 'Basic x').expect(200);
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      assert.equal(res.headers['access-control-expose-headers'], undefined);
    });

    it('without an Origin get no CORS headers', async () => {
      const { server } = appFor(corsMiddleware(policy({ origins: '*' })));
      const res = await request(server).get('/x').set('Authorization', 'Basic x').expect(200);
      assert.equal(res.headers['access-control-allow-origin'], undefined);
    });

    it('keep the CORS headers on an error answer, so that the page can read it', async () => {
      const { server } = appFor(corsMiddleware(policy({})));
      const res = await request(server).get('/x').set('Origin', A).expect(401);
      assert.equal(res.headers['access-control-allow-origin'], A);
      assert.equal(res.headers['www-authenticate'], 'Basic');
      assert.ok(exposed(res).includes('Retry-After'));
      assert.match(String(res.headers.vary), /Origin/);
    });
  });

  describe('origins', () => {
    it('* allows any origin with Access-Control-Allow-Origin: *', async () => {
      const { server } = appFor(corsMiddleware(policy({ origins: '*' })));
      const res = await request(server).get('/x').set('Origin', B).set('Authorization', 'Basic x').expect(200);
      assert.equal(res.headers['access-control-allow-origin'], '*');
    });

    it('* with credentials echoes the origin instead, with Vary: Origin', async () => {
      const { server } = appFor(corsMiddleware(policy({ origins: ['*'], credentials: true })));
      const res = await request(server).get('/x').set('Origin', B).set('Authorization', 'Basic x').expect(200);
      assert.equal(res.headers['access-control-allow-origin'], B);
      assert.equal(res.headers['access-control-allow-credentials'], 'true');
      assert.match(String(res.headers.vary), /Origin/);
    });

    it('take the comma-separated spelling and the form browsers send', async () => {
      const { server } = appFor(corsMiddleware(policy({ origins: 'HTTPS://A.example:443/, http://localhost:3000' })));
      for (const origin of [A, 'http://localhost:3000']) {
        const res = await request(server).get('/x').set('Origin', origin).set('Authorization', 'Basic x').expect(200);
        assert.equal(res.headers['access-control-allow-origin'], origin);
      }
      const other = await request(server)
        .get('/x')
        .set('Origin', 'http://localhost:3001')
        .set('Authorization', 'Basic x');
      assert.equal(other.headers['access-control-allow-origin'], undefined);
    });

    it('report what cannot be applied', () => {
      assert.deepEqual(corsPolicyProblems(policy({})), []);
      assert.deepEqual(corsPolicyProblems(policy({ origins: [] })), ['origins: at least one origin, or *, is needed']);
      assert.match(corsPolicyProblems(policy({ origins: ['a.example'] }))[0], /'a\.example' is not an origin/);
      assert.match(corsPolicyProblems(policy({ origins: ['https://a.example/app'] }))[0], /is not an origin/);
      assert.match(corsPolicyProblems(policy({ max_age: 'a day' }))[0], /max_age: 'a day' is not a number of seconds/);
      assert.throws(() => corsMiddleware(policy({ origins: 'nope' })), /invalid CORS policy: origins: 'nope'/);
    });
  });

  describe('per mapping', () => {
    const global = policy({ origins: [A] });
    const hotels = { name: 'hotels', cors: policy({ origins: [B] }) };
    const cars = { name: 'cars', cors: undefined };

    it("uses the mapping's policy in place of the gateway-wide one", async () => {
      const policies = createCorsPolicies(global);
      const { server } = appFor(policies.forMapping(hotels));
      const fromB = await request(server).get('/x').set('Origin', B).set('Authorization', 'Basic x');
      assert.equal(fromB.headers['access-control-allow-origin'], B);
      const fromA = await request(server).get('/x').set('Origin', A).set('Authorization', 'Basic x');
      assert.equal(fromA.headers['access-control-allow-origin'], undefined);
    });

    it('uses the gateway-wide policy for a mapping without one, and for unmatched paths', async () => {
      const policies = createCorsPolicies(global);
      assert.equal(policies.forMapping(cars), policies.forMapping());
      const { server } = appFor(policies.forMapping(cars));
      const res = await request(server).get('/x').set('Origin', A).set('Authorization', 'Basic x');
      assert.equal(res.headers['access-control-allow-origin'], A);
    });

    it('applies a mapping policy even when there is no gateway-wide one', () => {
      const policies = createCorsPolicies();
      assert.equal(typeof policies.forMapping(hotels), 'function');
      assert.equal(policies.forMapping(cars), undefined);
    });

    it('builds one middleware per mapping object', () => {
      const policies = createCorsPolicies();
      assert.equal(policies.forMapping(hotels), policies.forMapping(hotels));
      assert.notEqual(policies.forMapping(hotels), policies.forMapping({ ...hotels }));
    });
  });

  describe('isPreflight', () => {
    function ctx(method: string, headers: Record<string, string>) {
      const app = new Koa();
      const req = { method, url: '/', headers, socket: {} } as never;
      const res = { getHeader: () => undefined, setHeader: () => {} } as never;
      return app.createContext(req, res);
    }

    it('is true only for OPTIONS with Origin and Access-Control-Request-Method', () => {
      const full = { origin: A, 'access-control-request-method': 'PUT' };
      assert.equal(isPreflight(ctx('OPTIONS', full)), true);
      assert.equal(isPreflight(ctx('GET', full)), false);
      assert.equal(isPreflight(ctx('OPTIONS', { origin: A })), false);
      assert.equal(isPreflight(ctx('OPTIONS', { 'access-control-request-method': 'PUT' })), false);
    });
  });
});
