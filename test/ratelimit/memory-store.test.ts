/**
 * @module test/ratelimit/memory-store
 * The memory store decides, expires and bounds its counters as the
 * behaviour every synchronous store shares says.
 */
import { createMemoryStore } from '../../src/ratelimit';
import { itDecidesAsTheMemoryStore } from '../support/store-behaviour';

describe('memory store', () => {
  itDecidesAsTheMemoryStore(createMemoryStore);
});
