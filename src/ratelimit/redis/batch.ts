/**
 * @module ratelimit/redis/batch
 * The decisions the Redis store has in hand: each waiting for its answer,
 * and the script calls that carry them.
 */
import type { AttentionDeadline } from '../deadline';
import type { StoreDecision } from '../store';
import type { ScriptDecision } from './script';

/** A decision waiting for Redis. */
export interface Pending extends ScriptDecision {
  readonly timeoutMs: number;
  readonly gone: (() => boolean) | undefined;
  readonly resolve: (decision: StoreDecision) => void;
  readonly reject: (err: Error) => void;
  /** The latest the caller waits, however held up this process is (store clock); 0 until first sent. */
  capAt: number;
  settled: boolean;
}

/** One script call and the decisions it carries. */
export interface Batch {
  readonly decisions: Pending[];
  readonly sentAt: number;
  deadline: AttentionDeadline | undefined;
  answered: boolean;
}

/** Rejects `d` with `err`, once and for all. */
export function settle(d: Pending, err: Error): void {
  d.settled = true;
  d.reject(err);
}
