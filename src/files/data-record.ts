/**
 * @module files/data-record
 * A map read from a file or the environment, keyed by its data (header
 * names, labels, Secret keys), as a zod schema. zod's own `z.record` builds
 * its result by assignment, so a key written `__proto__` would set the
 * result's prototype instead of being kept: it would vanish from the map
 * without a word. Such a key is refused, by name, instead.
 */
import { z } from 'zod';

/** The words of the refusal of a `__proto__` key. */
export const PROTO_KEY_REFUSED = 'a key named __proto__ is not accepted here';

/** `z.record(key, value)`, refusing a key named `__proto__` rather than losing it. */
export function dataRecord<Key extends z.core.$ZodRecordKey, Value extends z.ZodType>(key: Key, value: Value) {
  return z.preprocess(
    (input, ctx) => {
      if (typeof input === 'object' && input !== null && Object.hasOwn(input, '__proto__'))
        ctx.addIssue({ code: 'custom', message: PROTO_KEY_REFUSED, path: ['__proto__'], input });
      return input;
    },
    z.record(key, value),
  );
}
