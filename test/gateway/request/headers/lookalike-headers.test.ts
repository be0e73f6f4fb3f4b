/**
 * Spellings of a header name that CGI, WSGI, Rack and PHP backends read as
 * that header (`X_Api_Key`, `X.Api.Key` for `X-Api-Key`): none of those the
 * gateway routes, limits or edits by, or writes itself, reaches a backend.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { createGateway, type Gateway, type GatehouseModule } from '../../../../src/gateway';
import { dropLookalikes, isLookalike } from '../../../../src/gateway/request/headers/lookalike-headers';
import { createRateLimitService, type RateLimitService } from '../../../../src/ratelimit';
import { memoryLogger } from '../../../support/memory-logger';
import { rateLimitRecord, configOf, mapping } from '../../../support/records';
import { close, listen } from '../../../support/server';
import { echoModule } from '../../../support/modules';
import { recordingUpstream, type Received } from '../../../support/upstreams';
import { send } from '../../../support/client';

/** The header names a backend received, as CGI reads them: lower case, `_` and `.` as `-`. */
function cgiNames(received: Received): string[] {
  return received.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase().replace(/[_.]/g, '-'));
}

describe('header names a backend reads as another', () => {
  let backend: Awaited<ReturnType<typeof recordingUpstream>>;
  let limits: RateLimitService;
  let gateway: Gateway;
  let server: Server;
  let base = '';

  before(async () => {
    backend = await recordingUpstream();
    limits = createRateLimitService({
      logger: memoryLogger(),
      limits: [
        { domain: 'gateway', descriptors: [{ key: 'api-key', rate_limit: { unit: 'minute', requests_per_unit: 1 } }] },
      ],
    });
    const labels = { gateway: [{ request_label_group: [{ 'api-key': { header: 'x-api-key' } }] }] };
    const config = configOf(
      mapping('/api/', backend.url, { name: 'limited', rewrite: '', bypass_auth: true, labels }),
      mapping('/zone/', 'inner', { name: 'inner', headers: { 'X-Zone': 'inner' } }),
      mapping('/zone/', backend.url, { name: 'zone-open', rewrite: '' }),
      mapping('/under/', 'inner', { name: 'under-inner', headers: { x_area: 'inner' } }),
      mapping('/under/', backend.url, { name: 'under-open', rewrite: '' }),
      mapping('/edits/', backend.url, {
        name: 'edits',
        rewrite: '',
        add_request_headers: { 'X-Tenant-Id': '42' },
        remove_request_headers: ['x-debug'],
      }),
    );
    config.rateLimitService = rateLimitRecord({ service: 'ratelimit' });
    gateway = createGateway({
      modules: new Map<string, GatehouseModule>([
        ['inner', echoModule('inner')],
        ['ratelimit', limits],
      ]),
      config,
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });
  after(async () => {
    await close(server);
    await gateway.close();
    await limits.close();
    await close(backend.server);
  });

  it('tells a lookalike spelling from the name itself', () => {
    assert.equal(isLookalike('X_Api_Key', 'x-api-key'), true);
    assert.equal(isLookalike('x.api.key', 'x-api-key'), true);
    assert.equal(isLookalike('X-Area', 'x_area'), true);
    assert.equal(isLookalike('X-API-KEY', 'x-api-key'), false);
    assert.equal(isLookalike('x_area', 'x_area'), false);
    assert.equal(isLookalike('X-Api-Keys', 'x-api-key'), false);
    assert.equal(isLookalike('X-Api_Kez', 'x-api-key'), false);
  });

  it('keeps a header spelt as one of the names itself, when a configuration names two lookalikes', () => {
    const req = {
      headers: { x_zone: 'a', 'x-zone': 'b', 'x.zone': 'c' },
      rawHeaders: ['X_Zone', 'a', 'X-Zone', 'b', 'X.Zone', 'c'],
    };
    dropLookalikes(req as unknown as IncomingMessage, ['x-zone', 'x_zone']);
    assert.deepEqual(req.rawHeaders, ['X_Zone', 'a', 'X-Zone', 'b']);
    assert.deepEqual(req.headers, { x_zone: 'a', 'x-zone': 'b' });
  });

  it('lets no spelling of a rate-limit label header past the limit to the backend', async () => {
    assert.equal((await send(base, '/api/x', { headers: { 'X-Api-Key': 'k' } })).status, 200);
    assert.equal((await send(base, '/api/x', { headers: { 'X-Api-Key': 'k' } })).status, 429);
    for (const spelling of ['X_Api_Key', 'X.Api.Key', 'x-api_key']) {
      const res = await send(base, '/api/x', { headers: { [spelling]: 'k' } });
      assert.equal(res.status, 200, spelling);
      const names = cgiNames(backend.received.at(-1)!);
      assert.ok(!names.includes('x-api-key'), `${spelling}: ${names.join(' ')}`);
    }
  });

  it('lets no spelling of a header a Mapping matches reach the Mapping that does not match it', async () => {
    for (const [path, spelling] of [
      ['/zone/x', 'X_Zone'],
      ['/zone/x', 'X.Zone'],
      ['/under/x', 'X-Area'],
    ]) {
      const res = await send(base, path, { headers: { [spelling]: 'inner' } });
      assert.equal(res.status, 200, `${path} ${spelling}`);
      assert.equal(res.text, 'ok', 'the open Mapping answered');
      const names = cgiNames(backend.received.at(-1)!);
      assert.ok(
        !names.includes(spelling.toLowerCase().replace(/[_.]/g, '-')),
        `${path} ${spelling}: ${names.join(' ')}`,
      );
    }
    const inner = await send(base, '/under/x', { headers: { x_area: 'inner' } });
    assert.equal(inner.json().module, 'inner', 'the name as the Mapping writes it still matches');
  });

  it('lets no spelling of a header the Mapping removes or adds, nor of X-Forwarded-*, reach the backend', async () => {
    const res = await send(base, '/edits/x', {
      headers: {
        X_Debug: '1',
        'X.Tenant.Id': '7',
        X_Tenant_Id: '8',
        X_Forwarded_For: '10.0.0.1',
        'X.Forwarded.Host': 'admin.internal',
        X_Forwarded_Proto: 'https',
      },
    });
    assert.equal(res.status, 200);
    const received = backend.received.at(-1)!;
    assert.equal(received.headers['x-debug'], undefined);
    assert.equal(received.headers['x-tenant-id'], '42');
    assert.equal(received.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(received.headers['x-forwarded-proto'], 'http');
    const names = cgiNames(received);
    for (const name of ['x-debug', 'x-tenant-id', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto']) {
      assert.equal(
        names.filter((n) => n === name).length,
        name === 'x-debug' ? 0 : 1,
        `${name}: ${received.rawHeaders.join(' ')}`,
      );
    }
  });

  it('passes on other headers with underscores and dots as they came', async () => {
    const res = await send(base, '/edits/x', { headers: { X_Custom: 'a', 'X.Other': 'b' } });
    assert.equal(res.status, 200);
    const received = backend.received.at(-1)!;
    assert.equal(received.headers.x_custom, 'a');
    assert.equal(received.headers['x.other'], 'b');
  });
});
