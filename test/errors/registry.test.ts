/**
 * @module test/errors/registry
 * The registry of named errors: each raised with its status, its detail
 * filled in and its headers, the values it takes checked by the compiler,
 * and docs/api.md listing every one as the registry declares it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERRORS, ERROR_GROUPS, HttpError, type ErrorCode } from '../../src/errors';
import { withErrorTable } from '../../src/errors/table';
import { REPO_ROOT } from '../support/process';

describe('errors/registry', () => {
  it('raises an error by its name, with its status and its code', () => {
    const err = HttpError.of('NOT_FOUND');
    assert.ok(err instanceof HttpError);
    assert.equal(err.status, 404);
    assert.equal(err.code, 'NOT_FOUND');
    assert.equal(err.detail, undefined);
    assert.equal(err.message, '404: Not Found');
  });

  it('fills the detail with the values it is raised with', () => {
    const err = HttpError.of('FIELD_UNKNOWN', { field: 'colour', known: 'id, name' });
    assert.equal(err.status, 400);
    assert.equal(err.detail, "fields: unknown field 'colour'; known fields: id, name");
  });

  it('keeps the cause and the headers it is raised with', () => {
    const cause = new Error('under it');
    const err = HttpError.of('METHOD_NOT_ALLOWED', { headers: { Allow: 'GET, HEAD' }, cause });
    assert.deepEqual(err.headers, { Allow: 'GET, HEAD' });
    assert.equal(err.cause, cause);
  });

  it('leaves an error made with new without a code', () => {
    assert.equal(new HttpError(418, 'short and stout').code, undefined);
  });

  it('checks the values of each error when the code is compiled', () => {
    const raise = (): HttpError[] => [
      // @ts-expect-error the detail takes a limit
      HttpError.of('BODY_TOO_LARGE'),
      // @ts-expect-error the detail takes `limit`, not `size`
      HttpError.of('BODY_TOO_LARGE', { size: 1 }),
      // @ts-expect-error the detail takes no value
      HttpError.of('NOT_FOUND', { id: 1 }),
      // @ts-expect-error no error has that name
      HttpError.of('NO_SUCH_ERROR'),
    ];
    assert.equal(typeof raise, 'function');
  });

  it('declares each name in one module only, in UPPER_SNAKE_CASE, with an error status', () => {
    const declared = ERROR_GROUPS.flatMap((group) => Object.keys(group.errors));
    assert.equal(new Set(declared).size, declared.length);
    assert.deepEqual(Object.keys(ERRORS).sort(), [...declared].sort());
    for (const [code, spec] of Object.entries(ERRORS) as [ErrorCode, { status: number }][]) {
      assert.match(code, /^[A-Z][A-Z0-9_]*$/);
      assert.ok(spec.status >= 400 && spec.status <= 599, code);
    }
  });

  it('is listed whole in docs/api.md, as the registry declares it (npm run docs:errors writes it)', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'api.md'), 'utf8');
    assert.equal(doc, withErrorTable(doc), 'docs/api.md lists other errors than src/errors: run npm run docs:errors');
  });
});
