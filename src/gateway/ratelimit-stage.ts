/**
 * @module gateway/ratelimit-stage
 * The gateway's side of a RateLimitService record.
 */
import type { RateLimitServiceRecord } from './config/schema';
import type { StageFactory } from './stage';

export const createRateLimitStage: StageFactory<RateLimitServiceRecord> = (record) => {
  throw new Error(`RateLimitService ${record.name}: rate limiting is not available in this build`);
};
