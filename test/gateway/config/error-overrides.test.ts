/**
 * `error_response_overrides` refused as written wrong, each at its place:
 * a status that is no error, two bodies or none, an Envoy command the
 * gateway cannot fill in, a stray `%`, a JSON value that is no scalar, a
 * file that cannot be read; in the gateway's own records and in Emissary's.
 */
import assert from 'node:assert/strict';
import { configFromRecords } from '../../../src/gateway';
import { problems, written } from '../../support/emissary';

const moduleWith = (overrides: unknown) => ({
  apiVersion: 'gateway/v1',
  kind: 'Module',
  name: 'ambassador',
  config: { error_response_overrides: overrides },
});

function problemsOf(overrides: unknown): string[] {
  const result = configFromRecords([moduleWith(overrides)]);
  return result.ok
    ? []
    : result.problems.map((p) => p.text.replace(/^.*Module ambassador: config\.error_response_overrides/, ''));
}

describe('error_response_overrides, written wrong', () => {
  it('refuses a status that is no error, a body of two formats or none, and a status given twice', () => {
    assert.deepEqual(
      problemsOf([
        { on_status_code: 302, body: { text_format: 'moved' } },
        { on_status_code: 404, body: { text_format: 'a', json_format: { b: 'c' } } },
        { on_status_code: 500, body: { content_type: 'text/html' } },
        { on_status_code: 404, body: { text_format: 'again' } },
      ]),
      [
        '.0.on_status_code: must be an error status, 400 to 599, as in Emissary',
        '.1.body: give one of text_format, json_format and text_format_source',
        '.2.body: give one of text_format, json_format and text_format_source',
        '.3.on_status_code: 404 is overridden twice',
      ],
    );
  });

  it('refuses an Envoy command it cannot fill in, and a % that starts none, as Envoy refuses it', () => {
    const [unknown, stray, header] = [
      problemsOf([{ on_status_code: 404, body: { text_format: 'sent %BYTES_SENT%' } }]),
      problemsOf([{ on_status_code: 404, body: { text_format: '100% gone' } }]),
      problemsOf([{ on_status_code: 404, body: { json_format: { who: '%REQ()%' } } }]),
    ];
    assert.match(
      unknown[0],
      /^\.0\.body\.text_format: uses Envoy's %BYTES_SENT%, which the gateway does not fill in; it knows %RESPONSE_CODE%/,
    );
    assert.deepEqual(stray, [
      '.0.body.text_format: has a % at 3 that starts no command, which Envoy refuses: write %% for a literal %',
    ]);
    assert.match(header[0], /^\.0\.body\.json_format\.who: uses Envoy's %REQ\(\)%/);
  });

  it('refuses a JSON value that is a list or an object, as Emissary does, and a file it cannot read', () => {
    assert.deepEqual(problemsOf([{ on_status_code: 404, body: { json_format: { nested: { a: 'b' } } } }]), [
      '.0.body.json_format.nested: must be text, a number or a boolean, as Emissary takes it',
    ]);
    assert.deepEqual(
      problemsOf([{ on_status_code: 404, body: { text_format_source: { filename: '/no/such/page.html' } } }]),
      ['.0.body.text_format_source.filename: cannot be read (ENOENT)'],
    );
  });

  it("refuses them in Emissary's Module and Mapping at the field, and an empty list", () => {
    assert.deepEqual(
      problems(
        written(
          'resource',
          {
            kind: 'Module',
            name: 'ambassador',
            spec: { config: { error_response_overrides: [{ on_status_code: 200, body: { text_format: 'x' } }] } },
          },
          { kind: 'Mapping', name: 'shop', spec: { prefix: '/shop/', service: 'shop', error_response_overrides: [] } },
        ),
      ),
      [
        'config/emissary.yaml: Module ambassador: spec.config.error_response_overrides.0.on_status_code: must be an error status, 400 to 599, as in Emissary',
        'config/emissary.yaml: Mapping shop: spec.error_response_overrides: gives at least one override',
      ],
    );
  });
});
