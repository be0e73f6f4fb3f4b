/**
 * @module test/http/response/formatters
 * The formatter registry: which representation an `Accept` header selects,
 * and what the JSON and XML formatters write.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { createFormatterRegistry, jsonFormatter, xmlFormatter, type Formatter } from '../../../src/http';

function requestAccepting(accept?: string): IncomingMessage {
  return { headers: accept === undefined ? {} : { accept } } as IncomingMessage;
}

describe('http/response/formatters', () => {
  describe('createFormatterRegistry().select', () => {
    const registry = createFormatterRegistry();
    const chosen = (accept?: string) => registry.select(requestAccepting(accept))?.type;

    it('lists JSON first, then XML', () => {
      assert.deepEqual(registry.types, ['application/json', 'application/xml']);
    });

    it('chooses JSON without an Accept header', () => {
      assert.equal(chosen(undefined), 'application/json');
    });

    it('chooses JSON for an empty Accept header and for */*', () => {
      assert.equal(chosen(''), 'application/json');
      assert.equal(chosen('*/*'), 'application/json');
    });

    it('chooses JSON for application/* and for a browser-like Accept', () => {
      assert.equal(chosen('application/*'), 'application/json');
      assert.equal(chosen('text/html,application/xhtml+xml;q=0.9,*/*;q=0.8'), 'application/json');
    });

    it('chooses XML when XML is asked for', () => {
      assert.equal(chosen('application/xml'), 'application/xml');
    });

    it('follows the quality values of the client', () => {
      assert.equal(chosen('application/json;q=0.5, application/xml'), 'application/xml');
      assert.equal(chosen('application/xml;q=0.1, application/json'), 'application/json');
    });

    it('matches a charset in Accept against the UTF-8 it writes', () => {
      assert.equal(chosen('application/json; charset=utf-8'), 'application/json');
      assert.equal(chosen('application/json;charset=UTF-8'), 'application/json');
      assert.equal(chosen('application/json; charset="utf-8"'), 'application/json');
      assert.equal(chosen('application/xml; charset=utf-8'), 'application/xml');
      assert.equal(chosen('application/xml; charset=utf-8, application/json;q=0.5'), 'application/xml');
    });

    it('chooses nothing for a charset or another parameter it does not write', () => {
      assert.equal(chosen('application/json; charset=iso-8859-1'), undefined);
      assert.equal(chosen('application/json; profile=strict'), undefined);
    });

    it('chooses nothing when nothing registered is acceptable', () => {
      assert.equal(chosen('text/html'), undefined);
      assert.equal(chosen('application/json;q=0'), undefined);
    });

    it('finds a formatter by its type', () => {
      assert.equal(registry.get('application/xml'), xmlFormatter);
      assert.equal(registry.get('text/csv'), undefined);
    });
  });

  describe('a custom registry', () => {
    const csv: Formatter = { type: 'text/csv', format: (body) => String(body) };

    it('uses its first formatter as the default', () => {
      const registry = createFormatterRegistry([csv, jsonFormatter]);
      assert.equal(registry.select(requestAccepting())?.type, 'text/csv');
      assert.equal(registry.select(requestAccepting('application/json'))?.type, 'application/json');
      assert.equal(registry.select(requestAccepting('application/xml')), undefined);
    });

    it('matches a charset against a formatter without a Content-Type of its own, which Koa writes as UTF-8', () => {
      const registry = createFormatterRegistry([jsonFormatter, csv]);
      assert.equal(registry.select(requestAccepting('text/csv; charset=utf-8'))?.type, 'text/csv');
    });

    it('refuses to be empty', () => {
      assert.throws(() => createFormatterRegistry([]), /at least one formatter/);
    });
  });

  describe('jsonFormatter', () => {
    it('writes JSON', () => {
      assert.equal(jsonFormatter.format({ a: [1, 'two'] }), '{"a":[1,"two"]}');
    });
  });

  describe('xmlFormatter', () => {
    it('writes an object as a response element with one element a field', () => {
      assert.equal(
        xmlFormatter.format({ id: '1', count: 2, ok: true }),
        '<?xml version="1.0" encoding="UTF-8"?>\n<response><id>1</id><count>2</count><ok>true</ok></response>',
      );
    });

    it('writes arrays as item elements', () => {
      assert.equal(
        xmlFormatter.format({ items: [{ id: 'a' }, { id: 'b' }] }),
        '<?xml version="1.0" encoding="UTF-8"?>\n<response><items><item><id>a</id></item><item><id>b</id></item></items></response>',
      );
      assert.match(xmlFormatter.format([1, 2]), /<items><item>1<\/item><item>2<\/item><\/items>$/);
    });

    it('escapes markup in text', () => {
      assert.match(xmlFormatter.format({ t: `<a href="x">&'` }), /<t>&lt;a href=&quot;x&quot;&gt;&amp;&apos;<\/t>/);
    });

    it('writes null and undefined as empty elements', () => {
      assert.match(xmlFormatter.format({ a: null, b: undefined }), /<response><a\/><b\/><\/response>$/);
    });

    it('turns keys that are not XML names into names', () => {
      assert.match(xmlFormatter.format({ '1st': 1, 'a b': 2 }), /<_1st>1<\/_1st><a_b>2<\/a_b>/);
    });

    it('leaves out characters that XML 1.0 cannot carry', () => {
      assert.match(xmlFormatter.format({ t: 'a\u0000b\u001bc\ud800d\udc00e\uffff' }), /<t>abcde<\/t>/);
    });

    it('keeps tabs, newlines and non-ASCII text', () => {
      assert.match(xmlFormatter.format({ t: 'a\tb\nc é 😀' }), /<t>a\tb\nc é 😀<\/t>/);
    });
  });
});
