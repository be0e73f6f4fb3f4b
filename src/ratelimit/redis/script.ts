/**
 * @module ratelimit/redis/script
 * The Lua scripts of the Redis store, and the layout of their arguments and
 * replies. One call of {@link DECIDE_SCRIPT} decides every request a process
 * gathered in one turn of its event loop, in order, each as the memory store
 * would: so a burst costs Redis one script call, not one per request.
 */
import type { WindowCheck } from '../store';

/**
 * KEYS: the counters of every decision, in order. ARGV, per decision: its
 * number of checks, its cutoff (Redis time in ms; 0 for none), then per
 * check hits, limit, ttl (ms), enforce (1/0).
 *
 * Returns {Redis time in ms, then per decision: state, and each check's
 * counter before the decision}. State 1: admitted, its hits counted; 0:
 * refused, nothing counted; -1: run after its cutoff, nothing counted (the
 * caller has given up on it); -2: a counter holds something other than a
 * whole number, nothing counted.
 *
 * A decision reads everything first and counts only when no enforced counter
 * would pass its limit. A counter named twice in one decision is read once
 * and checked against its value plus the hits of the earlier checks on it
 * (`seen`), as the memory store counts. The writes of the whole call are
 * made at its end, one INCRBY per counter.
 */
export const DECIDE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local out = {math.floor(now)}
local value, added, ttl, order = {}, {}, {}, {}
local k, a = 0, 0
while a < #ARGV do
  local n, cutoff = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  a = a + 2
  local at = #out + 1
  local state = 1
  if cutoff > 0 and now > cutoff then state = -1 end
  local seen = {}
  for i = 1, n do
    local key, b = KEYS[k + i], a + (i - 1) * 4
    out[at + i] = 0
    if state >= 0 then
      if value[key] == nil then
        local v = redis.pcall('GET', key)
        local n = type(v) ~= 'table' and tonumber(v or '0')
        value[key] = n and n == math.floor(n) and n or false
      end
      if value[key] == false then
        state = -2
      else
        if seen[key] == nil then seen[key] = value[key] end
        out[at + i] = value[key]
        local hits = tonumber(ARGV[b + 1])
        if ARGV[b + 4] == '1' and seen[key] + hits > tonumber(ARGV[b + 2]) then state = 0 end
        seen[key] = seen[key] + hits
      end
    end
  end
  out[at] = state
  if state == 1 then
    for i = 1, n do
      local key, b = KEYS[k + i], a + (i - 1) * 4
      local hits = tonumber(ARGV[b + 1])
      if hits > 0 then
        if added[key] == nil then
          added[key], ttl[key] = 0, ARGV[b + 3]
          order[#order + 1] = key
        end
        added[key] = added[key] + hits
        value[key] = value[key] + hits
      end
    end
  end
  k = k + n
  a = a + n * 4
end
for _, key in ipairs(order) do
  -- A counter that held nothing before these hits is new: give it its window.
  if redis.call('INCRBY', key, added[key]) == added[key] then redis.call('PEXPIRE', key, ttl[key]) end
end
return out
`;

/**
 * KEYS: counters; ARGV: the hits to take back from each. Takes back at most
 * what a counter holds, and deletes one that comes back to nothing, so that
 * its next hits give it its window again.
 */
export const UNDO_SCRIPT = `
for i = 1, #KEYS do
  local v = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  local take = math.min(v, tonumber(ARGV[i]))
  if take > 0 then
    if take == v then redis.call('DEL', KEYS[i]) else redis.call('DECRBY', KEYS[i], take) end
  end
end
return 1
`;

/** States of a decision in a reply of {@link DECIDE_SCRIPT}. */
export const DECISION_STATE = { notCounter: -2, pastCutoff: -1, refused: 0, admitted: 1 } as const;

/** A decision to send: its checks and its cutoff in Redis time (0: none). */
export interface ScriptDecision {
  readonly checks: readonly WindowCheck[];
  cutoff: number;
}

/** The arguments of one call of {@link DECIDE_SCRIPT} for `decisions`, keys first, without the key count. */
export function decideArguments(decisions: readonly ScriptDecision[], prefix: string): { keys: number; args: (string | number)[] } {
  const keys: string[] = [];
  const argv: number[] = [];
  for (const d of decisions) {
    argv.push(d.checks.length, d.cutoff);
    for (const c of d.checks) {
      keys.push(prefix + c.key);
      argv.push(c.hits, c.limit, Math.max(1, Math.ceil(c.ttlMs)), c.enforce ? 1 : 0);
    }
  }
  return { keys: keys.length, args: (keys as (string | number)[]).concat(argv) };
}

/** The arguments of one call of {@link UNDO_SCRIPT} taking back the hits of `decisions`, keys first. */
export function undoArguments(decisions: readonly (readonly WindowCheck[])[], prefix: string): { keys: number; args: (string | number)[] } {
  const keys: string[] = [];
  const hits: number[] = [];
  for (const checks of decisions) {
    for (const c of checks) {
      if (c.hits === 0) continue;
      keys.push(prefix + c.key);
      hits.push(c.hits);
    }
  }
  return { keys: keys.length, args: (keys as (string | number)[]).concat(hits) };
}

/** Each check's counter before the decision whose state is at `offset` of a reply. */
export function countersBefore(reply: readonly number[], offset: number, checks: number): number[] {
  return reply.slice(offset + 1, offset + 1 + checks);
}
