/**
 * @module test/http/request/client-path
 * The client's path for a path of the app, behind the Mapping a gateway
 * recorded: its rewrite undone for what it covers, the module's own path
 * (under what is in front of the gateway) for the rest.
 */
import assert from 'node:assert/strict';
import Koa, { type Context } from 'koa';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { APP_MOUNT, clientPath, ORIGINAL_PATH } from '../../../src/http/request/client-path';

interface Seen {
  /** The client's path, as the gateway recorded it. */
  original: string;
  /** The path inside the app. */
  path: string;
  mapping?: Record<string, unknown>;
  /** Where the app is mounted within the module. */
  mount?: string;
}

function contextOf({ original, path, mapping, mount }: Seen): Context {
  const req = { url: path, method: 'GET', headers: {}, socket: {} } as unknown as IncomingMessage;
  const ctx = new Koa().createContext(req, {} as ServerResponse);
  ctx.state[ORIGINAL_PATH] = original;
  if (mapping) ctx.state.mapping = mapping;
  if (mount !== undefined) ctx.state[APP_MOUNT] = mount;
  return ctx;
}

const M = { prefix: '/m/', rewrite: '/v1/messages/' };

describe('http/request/client-path', () => {
  it('writes what the rewrite covers under the prefix, keeping a query', () => {
    const ctx = contextOf({ original: '/m/1', path: '/messages/1', mapping: M, mount: '/v1' });
    assert.equal(clientPath(ctx, '/messages/2'), '/m/2');
    assert.equal(clientPath(ctx, '/messages/?offset=1'), '/m/?offset=1');
  });

  it('writes what it does not cover as the module answers it', () => {
    const ctx = contextOf({ original: '/m/1', path: '/messages/1', mapping: M, mount: '/v1' });
    assert.equal(clientPath(ctx, '/accounts/1'), '/v1/accounts/1');
    assert.equal(clientPath(ctx, '/messagesX'), '/v1/messagesX');
    assert.equal(clientPath(ctx, ''), '/v1');
  });

  it('keeps what is in front of the gateway, in either case of the prefix', () => {
    const ctx = contextOf({ original: '/host/M/1', path: '/messages/1', mapping: M, mount: '/v1' });
    assert.equal(clientPath(ctx, '/messages/2'), '/host/M/2');
    assert.equal(clientPath(ctx, '/accounts/1'), '/host/v1/accounts/1');
    const own = contextOf({
      original: '/host/v1/hotels/x',
      path: '/v1/hotels/x',
      mapping: { prefix: '/v1/hotels', rewrite: '' },
    });
    assert.equal(clientPath(own, '/v1/hotels/y'), '/host/v1/hotels/y');
  });

  it('undoes a prefix without a slash, to a rewrite with or without one', () => {
    const bare = contextOf({
      original: '/m',
      path: '/messages/',
      mapping: { prefix: '/m', rewrite: '/v1/messages/' },
      mount: '/v1',
    });
    assert.equal(clientPath(bare, '/messages/1'), '/m/1');
    assert.equal(clientPath(bare, '/messages/?offset=1'), '/m/?offset=1');
    const root = contextOf({ original: '/only1', path: '/v1', mapping: { prefix: '/only1', rewrite: '/v1' } });
    assert.equal(clientPath(root, '/v1/'), '/only1/');
  });

  it('puts a whole prefix back for the default rewrite', () => {
    const ctx = contextOf({
      original: '/api/v2/messages/1',
      path: '/messages/1',
      mapping: { prefix: '/api/', rewrite: '/' },
      mount: '/v2',
    });
    assert.equal(clientPath(ctx, '/accounts/1'), '/api/v2/accounts/1');
  });

  it('maps only the one path of an exact prefix', () => {
    const mapping = { prefix: '/latest', prefix_exact: true, rewrite: '/v2/messages/' };
    const ctx = contextOf({ original: '/latest', path: '/messages/', mapping, mount: '/v2' });
    assert.equal(clientPath(ctx, '/messages/?offset=5'), '/latest?offset=5');
    assert.equal(clientPath(ctx, '/messages/1'), '/v2/messages/1');
  });

  it('falls back on the mounts for a rewrite it cannot undo, and without a recorded path', () => {
    const regex = contextOf({
      original: '/r/x/1',
      path: '/messages/1',
      mapping: { prefix: '/r/', rewrite: '/', regex_rewrite: {} },
      mount: '/v1',
    });
    assert.equal(clientPath(regex, '/messages/2'), '/messages/2');
    const req = { url: '/messages/1', method: 'GET', headers: {}, socket: {} } as unknown as IncomingMessage;
    const unrecorded = new Koa().createContext(req, {} as ServerResponse);
    unrecorded.state.mapping = M;
    unrecorded.originalUrl = '/v1/messages/1';
    assert.equal(clientPath(unrecorded, '/messages/2'), '/v1/messages/2');
  });
});
