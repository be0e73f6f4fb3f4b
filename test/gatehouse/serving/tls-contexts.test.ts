import assert from 'node:assert/strict';
import type { SecureContext } from 'node:tls';
import { createContextStore, type ServedContext } from '../../../src/gatehouse/serving/tls-contexts';

/** A context told apart by its name: the store never looks inside one. */
function served(name: string, alpn?: string[]): ServedContext {
  return { context: { name } as unknown as SecureContext, alpn };
}

function nameOf(entry: ServedContext): string {
  return (entry.context as unknown as { name: string }).name;
}

describe('gatehouse/serving/tls-contexts', () => {
  it('picks the exact name, then the longest wildcard that covers it, then the default', () => {
    const store = createContextStore(served('default'));
    store.set('api.example.com', served('exact'));
    store.set('*.example.com', served('wide'));
    store.set('*.eu.example.com', served('narrow'));
    assert.equal(nameOf(store.pick('api.example.com')), 'exact');
    assert.equal(nameOf(store.pick('www.example.com')), 'wide');
    assert.equal(nameOf(store.pick('www.eu.example.com')), 'narrow');
    assert.equal(nameOf(store.pick('a.b.c.example.com')), 'wide');
    assert.equal(nameOf(store.pick('example.com')), 'default');
    assert.equal(nameOf(store.pick('other.org')), 'default');
    assert.equal(nameOf(store.pick(undefined)), 'default');
  });

  it('compares names without case and without the dot of a fully qualified name', () => {
    const store = createContextStore(served('default'));
    store.set('API.Example.COM', served('exact'));
    assert.equal(nameOf(store.pick('api.example.com.')), 'exact');
    store.delete('api.EXAMPLE.com');
    assert.equal(nameOf(store.pick('api.example.com')), 'default');
  });

  it("chooses the first protocol of the context's list that the client offers, or none", () => {
    const store = createContextStore(served('default'));
    store.set('old.example.com', served('old', ['http/1.1']));
    assert.equal(store.alpnCallback({ servername: 'x', protocols: ['http/1.1', 'h2'] }), 'h2');
    assert.equal(store.alpnCallback({ servername: 'old.example.com', protocols: ['h2', 'http/1.1'] }), 'http/1.1');
    assert.equal(store.alpnCallback({ servername: 'old.example.com', protocols: ['h2'] }), undefined);
    assert.equal(store.alpnCallback({ protocols: ['spdy/3'] }), undefined);
  });

  it('serves a new default to the names no other context is for', () => {
    const store = createContextStore(served('first'));
    store.setDefault(served('second'));
    let given: SecureContext | undefined;
    store.sniCallback('any.example.com', (_err, context) => (given = context));
    assert.equal((given as unknown as { name: string }).name, 'second');
  });
});
