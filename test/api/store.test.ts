/**
 * @module test/api/store
 * The message store: the demo data, its lookups, and that it cannot be changed.
 */
import assert from 'node:assert/strict';
import { createMessageStore, demoData } from '../../src/api';

describe('api/store', () => {
  it('holds three accounts and 45 messages in id order', () => {
    const store = createMessageStore();
    assert.deepEqual(
      store.accounts().map((a) => [a.id, a.name]),
      [
        ['1', 'Alice'],
        ['2', 'Bob'],
        ['3', 'Carol'],
      ],
    );
    assert.deepEqual(
      store.messages().map((m) => m.id),
      Array.from({ length: 45 }, (_, i) => String(i + 1)),
    );
  });

  it('gives Alice 25 messages and Bob and Carol 10 each', () => {
    const store = createMessageStore();
    assert.deepEqual(
      ['1', '2', '3'].map((id) => store.messages(id).length),
      [25, 10, 10],
    );
    assert.ok(store.messages('1').every((m) => m.account_id === '1'));
  });

  it('finds a message and an account by id, and nothing for other spellings', () => {
    const store = createMessageStore();
    assert.equal(store.message('1')?.text, 'Welcome to **Gatehouse**, Alice.');
    assert.equal(store.account('3')?.name, 'Carol');
    for (const id of ['0', '46', '01', '1.0', ' 1', 'abc', '', 'constructor', '__proto__']) {
      assert.equal(store.message(id), undefined, id);
    }
    assert.equal(store.account('4'), undefined);
    assert.deepEqual(store.messages('4'), []);
  });

  it('cannot be changed through what it returns', () => {
    const store = createMessageStore();
    assert.throws(() => (store.messages() as unknown as unknown[]).push({}), TypeError);
    assert.throws(() => {
      (store.message('1') as { text: string }).text = 'changed';
    }, TypeError);
    assert.throws(() => (store.messages('1') as unknown as unknown[]).pop(), TypeError);
    assert.equal(store.message('1')?.text, 'Welcome to **Gatehouse**, Alice.');
  });

  it('builds a separate store each time', () => {
    const data = demoData();
    const a = createMessageStore(data);
    (data.messages as unknown as unknown[]).length = 0;
    assert.equal(a.messages().length, 45, 'the store copied what it was given');
    assert.notEqual(createMessageStore().messages(), createMessageStore().messages());
  });

  it('serves other data when given it', () => {
    const store = createMessageStore({
      accounts: [{ id: 'x', name: 'X', created_at: '2025-01-01T00:00:00.000Z' }],
      messages: [{ id: 'm', account_id: 'x', text: 'hi', language: 'en', created_at: '2025-01-01T00:00:00.000Z' }],
    });
    assert.equal(store.messages('x')[0].text, 'hi');
  });

  it('refuses a message of an unknown account and ids used twice', () => {
    const account = { id: 'a', name: 'A', created_at: '2025-01-01T00:00:00.000Z' };
    const message = { id: '1', account_id: 'a', text: 't', language: 'en', created_at: '2025-01-01T00:00:00.000Z' };
    assert.throws(() => createMessageStore({ accounts: [], messages: [message] }), /unknown account a/);
    assert.throws(
      () => createMessageStore({ accounts: [account, account], messages: [] }),
      /account id a is used twice/,
    );
    assert.throws(
      () => createMessageStore({ accounts: [account], messages: [message, message] }),
      /message id 1 is used twice/,
    );
  });
});
