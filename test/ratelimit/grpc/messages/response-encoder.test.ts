/**
 * @module test/ratelimit/grpc/messages/response-encoder
 * The service's answers are written with the bytes proto-loader (protobufjs)
 * writes for them, for both services, whatever they hold; what the encoder
 * does not write itself is proto-loader's to write, as before.
 */
import assert from 'node:assert/strict';
import {
  ENVOY_V3_SERVICE,
  LYFT_SERVICE,
  type DescriptorStatus,
  type RateLimitResponse,
  type RateLimitUnit,
} from '../../../../src/ratelimit';
import { responseToProto, type ProtoResponse } from '../../../../src/ratelimit/grpc/messages/codec';
import { methodOf } from '../../../../src/ratelimit/grpc/protos';
import { responseEncoder } from '../../../../src/ratelimit/grpc/messages/response-encoder';

const status = (over: Partial<DescriptorStatus> = {}): DescriptorStatus => ({
  code: 'OK',
  currentLimit: { requestsPerUnit: 10, unit: 'MINUTE' },
  limitRemaining: 9,
  durationUntilResetMs: 60_000,
  ...over,
});
const answer = (over: Partial<RateLimitResponse> = {}): RateLimitResponse => ({
  overallCode: 'OK',
  statuses: [status()],
  ...over,
});

/** Answers a service gives, each with a name for the test's title. */
const ANSWERS: [string, RateLimitResponse][] = [
  ['one status', answer()],
  ['no status', answer({ statuses: [] })],
  [
    'over the limit',
    answer({ overallCode: 'OVER_LIMIT', statuses: [status({ code: 'OVER_LIMIT', limitRemaining: 0 }), status()] }),
  ],
  [
    'no current limit (an unlimited or unmatched descriptor)',
    answer({
      statuses: [status({ currentLimit: undefined, durationUntilResetMs: undefined, limitRemaining: 4_294_967_295 })],
    }),
  ],
  ['a status in shadow mode, which the wire does not carry', answer({ statuses: [status({ shadow: true })] })],
  [
    'a named limit',
    answer({ statuses: [status({ currentLimit: { name: 'per-user', requestsPerUnit: 5, unit: 'SECOND' } })] }),
  ],
  ['an empty name', answer({ statuses: [status({ currentLimit: { name: '', requestsPerUnit: 5, unit: 'DAY' } })] })],
  [
    'a name out of ASCII',
    answer({ statuses: [status({ currentLimit: { name: 'prix-€-😀', requestsPerUnit: 5, unit: 'HOUR' } })] }),
  ],
  [
    'the largest counts and a long reset',
    answer({
      statuses: [
        status({
          currentLimit: { requestsPerUnit: 4_294_967_295, unit: 'DAY' },
          limitRemaining: 4_294_967_295,
          durationUntilResetMs: 31_536_000_000_999,
        }),
      ],
    }),
  ],
  [
    'zeros everywhere',
    answer({
      statuses: [
        status({ currentLimit: { requestsPerUnit: 0, unit: 'SECOND' }, limitRemaining: 0, durationUntilResetMs: 0 }),
      ],
    }),
  ],
  ['a reset of a fraction of a second', answer({ statuses: [status({ durationUntilResetMs: 1234.75 })] })],
  [
    'every unit',
    answer({
      statuses: (['SECOND', 'MINUTE', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'YEAR'] as RateLimitUnit[]).map((unit) =>
        status({ currentLimit: { requestsPerUnit: 3, unit } }),
      ),
    }),
  ],
  [
    'varints of every length',
    answer({
      statuses: [127, 128, 16_383, 16_384, 2_097_152, 268_435_456].map((n) =>
        status({
          limitRemaining: n,
          currentLimit: { requestsPerUnit: n, unit: 'SECOND' },
          durationUntilResetMs: n * 1000 + (n % 1000),
        }),
      ),
    }),
  ],
  [
    'headers',
    answer({
      responseHeadersToAdd: [
        { key: 'x-ratelimit-limit', value: '10' },
        { key: 'x-note', value: 'é ü' },
        { key: '', value: '' },
      ],
    }),
  ],
  ['many statuses', answer({ statuses: Array.from({ length: 40 }, (_, i) => status({ limitRemaining: i * 1000 })) })],
];

/** Answers the encoder leaves to proto-loader. */
const LEFT_OVER: [string, RateLimitResponse][] = [
  ['dynamic metadata', answer({ dynamicMetadata: { quota: 'x' } })],
  [
    'a unit the protos do not name',
    answer({ statuses: [status({ currentLimit: { requestsPerUnit: 1, unit: 'FORTNIGHT' as RateLimitUnit } })] }),
  ],
  ['a remaining count past 2^53', answer({ statuses: [status({ limitRemaining: 2 ** 60 })] })],
];

for (const service of [ENVOY_V3_SERVICE, LYFT_SERVICE]) {
  describe(`the answers of ${service}`, () => {
    const general = methodOf(service, 'ShouldRateLimit').responseSerialize as (r: ProtoResponse) => Buffer;
    const encode = responseEncoder(service, general);
    /** What proto-loader writes for the answer, made the plain object it takes. */
    const expected = (response: RateLimitResponse) => general(responseToProto(response)).toString('hex');

    for (const [name, response] of ANSWERS) {
      it(`are written as proto-loader writes them: ${name}`, () => {
        const written = encode(response);
        assert.ok(Buffer.isBuffer(written));
        assert.deepEqual(written.toString('hex'), expected(response));
      });
    }

    for (const [name, response] of LEFT_OVER) {
      it(`are left to proto-loader with ${name}`, () => {
        let asked = 0;
        const left = responseEncoder(service, (r) => {
          asked++;
          return general(r);
        });
        assert.deepEqual(left(response).toString('hex'), expected(response));
        assert.equal(asked, 1);
      });
    }

    it('read back as they were written, through proto-loader', () => {
      const read = methodOf(service, 'ShouldRateLimit').responseDeserialize as (b: Buffer) => ProtoResponse;
      const back = read(encode(ANSWERS[2][1]));
      assert.equal(back.overall_code, 'OVER_LIMIT');
      assert.deepEqual(
        back.statuses.map((s) => [
          s.code,
          s.limit_remaining,
          s.current_limit?.requests_per_unit,
          s.current_limit?.unit,
        ]),
        [
          ['OVER_LIMIT', 0, 10, 'MINUTE'],
          ['OK', 9, 10, 'MINUTE'],
        ],
      );
    });
  });
}
