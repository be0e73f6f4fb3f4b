/**
 * @module test/platform/koa-router
 * What src/platform/koa-router relies on in koa-router, checked against the
 * koa-router installed.
 */
import Router from 'koa-router';
import {
  KOA_ROUTER_VERSION,
  layerCaptures,
  layerName,
  layerParams,
  routerPathOption,
  routerTakesHost,
  runsMostSpecificOnly,
} from '../../src/platform';
import { pinnedAt, relies } from '../support/reliance';

const rely = (what: string, holds: boolean, detail?: string) =>
  relies('koa-router', KOA_ROUTER_VERSION, what, holds, detail);

describe('platform/koa-router: what Gatehouse relies on in koa-router', () => {
  it('is the koa-router it was written against', () => pinnedAt('koa-router', KOA_ROUTER_VERSION));

  it("keeps a router's routerPath and exclusive options where they are read", () => {
    rely('keeps the routerPath option (opts.routerPath)', routerPathOption(new Router({ routerPath: '/v' })) === '/v');
    rely('has no routerPath unless given', routerPathOption(new Router()) === undefined);
    rely(
      'keeps the exclusive option (exclusive)',
      runsMostSpecificOnly(new Router({ exclusive: true } as Router.IRouterOptions)),
    );
    rely('is not exclusive unless asked', !runsMostSpecificOnly(new Router()));
  });

  it('matches a host only for a router bound to one, and reads the host only then', () => {
    let read = 0;
    const ctx = (host: string) => ({
      get host() {
        read++;
        return host;
      },
    });
    rely('takes every host without a host option', routerTakesHost(new Router(), ctx('any.example')) && read === 0);
    const bound = new Router({ host: 'api.example' } as Router.IRouterOptions);
    rely('matches its host option (matchHost)', routerTakesHost(bound, ctx('api.example')));
    rely('refuses another host', !routerTakesHost(bound, ctx('www.example')));
  });

  it("reads a layer's name, captures and params as its routes() sets them on the context", () => {
    const router = new Router();
    router.get('item', '/items/:id/parts/:part', () => undefined);
    const layer = router.stack[0];
    rely('names a layer (name)', layerName(layer) === 'item');
    const captures = layerCaptures(layer, '/items/7/parts/wheel');
    rely(
      'captures the path segments (captures())',
      JSON.stringify(captures) === '["7","wheel"]',
      JSON.stringify(captures),
    );
    const params = layerParams(layer, '/items/7/parts/wheel', captures, {});
    rely('names the params (params())', params.id === '7' && params.part === 'wheel', JSON.stringify(params));
  });
});
