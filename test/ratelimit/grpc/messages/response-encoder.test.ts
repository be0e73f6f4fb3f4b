/**
 * @module test/ratelimit/grpc/messages/response-encoder
 * The service's answers are written with the bytes proto-loader (protobufjs)
 * writes for them, for both services, whatever they hold; what the encoder
 * does not write itself is proto-loader's to write, as before.
 */
import assert from 'node:assert/strict';
import { ENVOY_V3_SERVICE, LYFT_SERVICE } from '../../../../src/ratelimit';
import type { ProtoResponse, ProtoStatus } from '../../../../src/ratelimit/grpc/messages/codec';
import { methodOf } from '../../../../src/ratelimit/grpc/protos';
import { responseEncoder } from '../../../../src/ratelimit/grpc/messages/response-encoder';

const status = (over: Partial<ProtoStatus> = {}): ProtoStatus => ({
  code: 'OK',
  current_limit: { requests_per_unit: 10, unit: 'MINUTE' },
  limit_remaining: 9,
  duration_until_reset: { seconds: 60, nanos: 0 },
  ...over,
});
const answer = (over: Partial<ProtoResponse> = {}): ProtoResponse => ({ overall_code: 'OK', statuses: [status()], response_headers_to_add: [], headers: [], ...over });

/** Answers a service gives, each with a name for the test's title. */
const ANSWERS: [string, ProtoResponse][] = [
  ['one status', answer()],
  ['no status', answer({ statuses: [] })],
  ['over the limit', answer({ overall_code: 'OVER_LIMIT', statuses: [status({ code: 'OVER_LIMIT', limit_remaining: 0 }), status()] })],
  ['no current limit (an unlimited or unmatched descriptor)', answer({ statuses: [status({ current_limit: null, duration_until_reset: null, limit_remaining: 4_294_967_295 })] })],
  ['a named limit', answer({ statuses: [status({ current_limit: { name: 'per-user', requests_per_unit: 5, unit: 'SECOND' } })] })],
  ['an empty name', answer({ statuses: [status({ current_limit: { name: '', requests_per_unit: 5, unit: 'DAY' } })] })],
  ['a name out of ASCII', answer({ statuses: [status({ current_limit: { name: 'prix-€-😀', requests_per_unit: 5, unit: 'HOUR' } })] })],
  ['the largest counts and a long reset', answer({ statuses: [status({ current_limit: { requests_per_unit: 4_294_967_295, unit: 'DAY' }, limit_remaining: 4_294_967_295, duration_until_reset: { seconds: 31_536_000_000, nanos: 999_000_000 } })] })],
  ['zeros everywhere', answer({ overall_code: 'UNKNOWN', statuses: [status({ code: 'UNKNOWN', current_limit: { requests_per_unit: 0, unit: 'UNKNOWN' }, limit_remaining: 0, duration_until_reset: { seconds: 0, nanos: 0 } })] })],
  ['varints of every length', answer({ statuses: [127, 128, 16_383, 16_384, 2_097_152, 268_435_456].map((n) => status({ limit_remaining: n, current_limit: { requests_per_unit: n, unit: 'SECOND' }, duration_until_reset: { seconds: n, nanos: n } })) })],
  ['headers', answer({ response_headers_to_add: [{ key: 'x-ratelimit-limit', value: '10' }, { key: 'x-note', value: 'é ü' }, { key: '', value: '' }], headers: [{ key: 'x-lyft', value: '1' }] })],
  ['many statuses', answer({ statuses: Array.from({ length: 40 }, (_, i) => status({ limit_remaining: i * 1000 })) })],
];

/** Answers the encoder leaves to proto-loader. */
const LEFT_OVER: [string, ProtoResponse][] = [
  ['dynamic metadata', answer({ dynamic_metadata: { fields: { quota: { stringValue: 'x' } } } })],
  ['a code the protos do not name', answer({ overall_code: 'MAYBE' })],
  ['a unit the protos do not name', answer({ statuses: [status({ current_limit: { requests_per_unit: 1, unit: 'FORTNIGHT' } })] })],
];

for (const service of [ENVOY_V3_SERVICE, LYFT_SERVICE]) {
  describe(`the answers of ${service}`, () => {
    const general = methodOf(service, 'ShouldRateLimit').responseSerialize as (r: ProtoResponse) => Buffer;
    const encode = responseEncoder(service, general);

    for (const [name, response] of ANSWERS) {
      it(`are written as proto-loader writes them: ${name}`, () => {
        const written = encode(response);
        assert.ok(Buffer.isBuffer(written));
        assert.deepEqual(written.toString('hex'), general(response).toString('hex'));
      });
    }

    for (const [name, response] of LEFT_OVER) {
      it(`are left to proto-loader with ${name}`, () => {
        let asked = 0;
        const left = responseEncoder(service, (r) => {
          asked++;
          return general(r);
        });
        assert.deepEqual(left(response).toString('hex'), general(response).toString('hex'));
        assert.equal(asked, 1);
      });
    }

    it('read back as they were written, through proto-loader', () => {
      const read = methodOf(service, 'ShouldRateLimit').responseDeserialize as (b: Buffer) => ProtoResponse;
      const back = read(encode(ANSWERS[2][1]));
      assert.equal(back.overall_code, 'OVER_LIMIT');
      assert.deepEqual(
        back.statuses.map((s) => [s.code, s.limit_remaining, s.current_limit?.requests_per_unit, s.current_limit?.unit]),
        [
          ['OVER_LIMIT', 0, 10, 'MINUTE'],
          ['OK', 9, 10, 'MINUTE'],
        ],
      );
    });
  });
}
