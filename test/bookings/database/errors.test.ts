/**
 * @module test/bookings/database/errors
 * Which failures of the bookings database are an outage (a 503 to retry)
 * and which are a fault of the query (a 500 to look into).
 */
import assert from 'node:assert/strict';
import { asUnavailable, DatabaseUnavailableError, isUnavailable } from '../../../src/bookings/database/errors';

/** An error as pg and PGlite give one: a message and a code. */
const failure = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('bookings/database/errors: what is an outage', () => {
  it('takes a server that cannot write now for an outage: a read-only transaction, a full disk, an I/O error of its files', () => {
    for (const err of [
      failure('cannot execute INSERT in a read-only transaction', '25006'),
      failure('could not extend file "base/5/16397_fsm": No space left on device', '53100'),
      failure('could not read block 0 in file "base/5/16384": read only 0 of 8192 bytes', '58030'),
      failure('terminating connection due to administrator command', '57P01'),
    ]) {
      assert.equal(isUnavailable(err), true, err.message);
    }
  });

  it('takes a file of the embedded database that cannot be written for an outage: no space, over quota, read-only, failing', () => {
    for (const code of ['ENOSPC', 'EDQUOT', 'EROFS', 'EIO'])
      assert.equal(isUnavailable(failure(`${code}: write`, code)), true, code);
  });

  it('takes a query the server refuses for a fault of the query, not an outage', () => {
    for (const err of [
      failure('syntax error at or near "SELEC"', '42601'),
      failure('duplicate key value violates unique constraint', '23505'),
      failure('relation "gatehouse.nope" does not exist', '42P01'),
      new TypeError('x is not a function'),
    ]) {
      assert.equal(isUnavailable(err), false, err.message);
      assert.equal(asUnavailable(err), err);
    }
  });

  it('says why in the outage it makes of a failure, without the password', () => {
    const made = asUnavailable(failure('password authentication failed for "travel" with s3cret', '28P01'), 's3cret');
    assert.ok(made instanceof DatabaseUnavailableError);
    assert.equal(made.kind, 'unavailable');
    assert.equal(made.reason, 'password authentication failed for "travel" with ***');
  });
});
