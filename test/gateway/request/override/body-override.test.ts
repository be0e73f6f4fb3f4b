/**
 * @module test/gateway/request/override/body-override
 * A method override in the body of a POST (`_method=DELETE` in a form, a
 * multipart field, a JSON field), which Rails, Laravel, Symfony and Spring
 * obey: a POST the backend would act on as a DELETE, routed apart from a
 * DELETE, is refused; the body of any other POST reaches the backend whole.
 */
import assert from 'node:assert/strict';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { mapping } from '../../../support/records';
import { send } from '../../../support/client';
import { overrideRig, REFUSED } from '../../../support/override-rig';
const FORM = 'application/x-www-form-urlencoded';

/** `text` in UTF-32, big-endian. */
function utf32be(text: string): Buffer {
  const points = [...text].map((c) => c.codePointAt(0)!);
  const out = Buffer.alloc(points.length * 4);
  points.forEach((point, i) => out.writeUInt32BE(point, i * 4));
  return out;
}
const MULTIPART = 'multipart/form-data; boundary=----b0undary';

/** A multipart body of `fields`, as a browser sends a form. */
function multipart(fields: [string, string][], nameParameter = (name: string) => `name="${name}"`): string {
  return `${fields.map(([name, value]) => `------b0undary\r\nContent-Disposition: form-data; ${nameParameter(name)}\r\n\r\n${value}\r\n`).join('')}------b0undary--\r\n`;
}

describe('method overrides in the body of a POST', () => {
  const rig = overrideRig((url) => [
    mapping('/open/', url, { name: 'open', rewrite: '', bypass_auth: true }),
    // Open to every method but one no list of override methods holds, which needs auth.
    mapping('/pp/', url, { name: 'purge-guarded', rewrite: '', method: 'PURGE' }),
    mapping('/pp/', url, { name: 'pp-open', rewrite: '', bypass_auth: true }),
  ]);

  const overriding: [string, string, string][] = [
    ['a form', FORM, 'title=x&_method=DELETE'],
    ['a form, its name encoded', FORM, 'title=x&%5fmethod=delete'],
    ['a form, as PHP mangles the name', FORM, '_method%5B%5D=DELETE'],
    ['a form, as Rack 2 reads the name', FORM, ']_method]=DELETE'],
    ['a form naming the header', FORM, 'X-HTTP-Method-Override=PUT'],
    [
      'a multipart form',
      MULTIPART,
      multipart([
        ['title', 'x'],
        ['_method', 'DELETE'],
      ]),
    ],
    ['a multipart form, the name in brackets as Rack 2 reads it', MULTIPART, multipart([['[_method', 'DELETE']])],
    ['a multipart form, the name unquoted', MULTIPART, multipart([['_method', 'PATCH']], (name) => `name=${name}`)],
    [
      'a multipart form, the name in RFC 5987 form',
      MULTIPART,
      multipart([['_method', 'DELETE']], (name) => `name*=UTF-8''${name}`),
    ],
    ['a JSON object', 'application/json; charset=utf-8', '{"title":"x","_method":"DELETE"}'],
    ['a JSON:API document', 'application/vnd.api+json', '{"_METHOD":"put"}'],
    // Laravel reads as JSON any Content-Type holding /json or +json, its parameters included.
    ['a JSON object sent as text/json', 'text/json', '{"_method":"DELETE"}'],
    ['a JSON object of a type with /json in a parameter', 'text/plain; x=/json', '{"_method":"DELETE"}'],
    // Rack and PHP end the media type at a comma, PHP at a space too.
    ['a form whose type a comma ends', `${FORM}, text/plain`, '_method=DELETE'],
    ['a form whose type a space ends', `${FORM} x`, '_method=DELETE'],
    // Rack reads a POST without a Content-Type as a form.
    ['a form without a Content-Type', '', '_method=DELETE'],
  ];
  for (const [what, type, body] of overriding) {
    it(`answers 400 to a POST on a Mapping for POST without auth whose body, ${what}, names another method, and the backend sees nothing`, async () => {
      const seen = rig.backend.received.length;
      const res = await send(rig.base, '/m/x', {
        method: 'POST',
        headers: type === '' ? {} : { 'Content-Type': type },
        body,
      });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json(), REFUSED);
      assert.equal(rig.backend.received.length, seen);
    });
  }

  it('answers 400 to an override in the body naming any method a route asks for, not only those of a list (PURGE)', async () => {
    for (const [type, body] of [
      [FORM, '_method=PURGE'],
      ['application/json', '{"_method":"PURGE"}'],
      [MULTIPART, multipart([['_method', 'PURGE']])],
    ]) {
      const res = await send(rig.base, '/pp/a', { method: 'POST', headers: { 'Content-Type': type }, body });
      assert.equal(res.status, 400, `${type}: ${res.text}`);
      assert.deepEqual(res.json(), REFUSED);
    }
    assert.equal(
      (await send(rig.base, '/pp/a', { method: 'POST', headers: { 'Content-Type': FORM }, body: 'title=x' })).status,
      200,
    );
  });

  const decoded: [string, Record<string, string>, Buffer][] = [
    [
      'a gzipped form, which body-parser inflates',
      { 'Content-Type': FORM, 'Content-Encoding': 'gzip' },
      gzipSync('_method=DELETE'),
    ],
    [
      'a deflated JSON object',
      { 'Content-Type': 'application/json', 'Content-Encoding': 'deflate' },
      deflateSync('{"_method":"DELETE"}'),
    ],
    [
      'a brotli JSON object',
      { 'Content-Type': 'application/json', 'Content-Encoding': 'br' },
      brotliCompressSync('{"_method":"DELETE"}'),
    ],
    [
      'a JSON object in UTF-16LE, which body-parser decodes',
      { 'Content-Type': 'application/json; charset=utf-16le' },
      Buffer.from('{"_method":"DELETE"}', 'utf16le'),
    ],
    [
      'a JSON object in UTF-32BE',
      { 'Content-Type': 'application/json; charset=utf-32be' },
      utf32be('{"_method":"DELETE"}'),
    ],
    [
      'a multipart/mixed body, which Rack reads as a form',
      { 'Content-Type': 'multipart/mixed; boundary=----b0undary' },
      Buffer.from(multipart([['_method', 'DELETE']])),
    ],
    [
      'a multipart/related body',
      { 'Content-Type': 'multipart/related; boundary=----b0undary' },
      Buffer.from(multipart([['_method', 'DELETE']])),
    ],
    // PHP takes the first `boundary` anywhere in the type; the parameter names another, which a part header fakes.
    [
      'a multipart body whose boundary PHP reads in xboundary',
      { 'Content-Type': 'multipart/form-data; xboundary=AAA; boundary=BBB' },
      Buffer.from('--AAA\r\nContent-Disposition: form-data; name="_method"\r\nX-A: --BBB\r\n\r\nDELETE\r\n--AAA--\r\n'),
    ],
    // Rack takes the last boundary=.
    [
      'a multipart body of two boundaries, Rack reading the last',
      { 'Content-Type': 'multipart/form-data; boundary=BBB; boundary=AAA' },
      Buffer.from('--AAA\r\nContent-Disposition: form-data; name="_method"\r\nX-A: --BBB\r\n\r\nDELETE\r\n--AAA--\r\n'),
    ],
  ];
  for (const [what, headers, body] of decoded) {
    it(`answers 400 to an override in ${what}, read as its backend decodes it`, async () => {
      const seen = rig.backend.received.length;
      const res = await send(rig.base, '/m/x', { method: 'POST', headers, body });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json(), REFUSED);
      assert.equal(rig.backend.received.length, seen);
    });
  }

  it('answers 413 to a compressed body that decodes to more than the body limit, which could not be read whole for an override', async () => {
    const res = await send(rig.base, '/m/x', {
      method: 'POST',
      headers: { 'Content-Type': FORM, 'Content-Encoding': 'gzip' },
      body: gzipSync(Buffer.alloc(2 * 1024 * 1024, 'a')),
    });
    assert.equal(res.status, 413, res.text);
    assert.match(res.json().detail, /^the request body, decoded, is larger than \d+ bytes$/);
  });

  it('reads an override in a chunked body too', async () => {
    const res = await send(rig.base, '/m/x', {
      method: 'POST',
      headers: { 'Content-Type': FORM },
      body: ['title=x&', '_meth', 'od=DELETE'],
    });
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(res.json(), REFUSED);
  });

  it('passes every other POST to its Mapping with its body whole', async () => {
    const passing: [string, string][] = [
      [FORM, 'title=x&_method=POST'],
      [FORM, 'title=_method&my_method=DELETE'],
      [MULTIPART, multipart([['title', '_method=DELETE']])],
      ['application/json', '{"title":"x","nested":{"_method":"DELETE"}}'],
      ['application/json', '["_method", "DELETE"]'],
      ['application/json', '{not json'],
      ['text/plain', '_method=DELETE'],
    ];
    for (const [type, body] of passing) {
      const res = await send(rig.base, '/m/x', { method: 'POST', headers: { 'Content-Type': type }, body });
      assert.equal(res.status, 200, `${body}: ${res.text}`);
      const got = rig.backend.received.at(-1)!;
      assert.deepEqual([got.method, got.body.toString(), got.headers['x-travel-user']], ['POST', body, undefined]);
    }
  });

  it('reads no body where the method does not decide the route, and passes an override there on', async () => {
    const res = await send(rig.base, '/open/x', {
      method: 'POST',
      headers: { 'Content-Type': FORM },
      body: '_method=DELETE',
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(rig.backend.received.at(-1)!.body.toString(), '_method=DELETE');
  });
});
