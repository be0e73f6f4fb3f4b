/**
 * @module gateway/auth-stage
 * The gateway's side of an AuthService record.
 */
import type { AuthServiceRecord } from './config/schema';
import type { StageFactory } from './stage';

export const createAuthStage: StageFactory<AuthServiceRecord> = (record) => {
  throw new Error(`AuthService ${record.name}: auth delegation is not available in this build`);
};
