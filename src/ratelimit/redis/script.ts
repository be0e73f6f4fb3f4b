/**
 * @module ratelimit/redis/script
 * The Lua scripts of the Redis store, and the layout of their arguments and
 * replies. One call of {@link DECIDE_SCRIPT} decides every request a process
 * gathered in one turn of its event loop, in order, each as the memory store
 * would: so a burst costs Redis one script call, not one per request.
 */
import type { WindowCheck } from '../store';

/**
 * The highest count a counter holds: every sum saturates there. Lua's
 * numbers are doubles, exact up to 2^53 - 1; past it a sum would round, and
 * past 2^63 INCRBY would fail. A count there is far past any limit (a Go
 * uint32), so a saturated counter decides as the memory store's does.
 */
export const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/**
 * Lua helpers shared by the scripts. `count` reads a GET reply as a count,
 * false for anything else: only the digits Redis itself writes for INCRBY
 * (no sign, leading zero, space, fraction, exponent or hex, which Lua's
 * tonumber takes and INCRBY refuses), so that no write can fail on a value
 * once read; a count past MAX was written before counts saturated. `int`
 * writes a count in whole digits: Redis would write a Lua number past 10^17
 * in an exponent (2.25e+17), which INCRBY refuses.
 */
const LUA_COUNTS = `
local MAX = ${MAX_COUNT}
local function count(v)
  if type(v) ~= 'string' then return v == false and 0 or false end
  if v ~= '0' and not string.match(v, '^[1-9]%d*$') then return false end
  return tonumber(v)
end
local function add(a, b) return math.min(a + b, MAX) end
local function int(n) return string.format('%.0f', n) end
`;

/**
 * KEYS: the counters of every decision, in order. ARGV, per decision: its
 * number of checks, its cutoff (Redis time in ms; 0 for none), then per
 * check hits, limit, ttl (ms), enforce (1/0), as {@link decideArguments}
 * writes them (whole hits from 0 to MAX_COUNT, a ttl of at least 1).
 *
 * Returns {Redis time in ms, then per decision: state, and each check's
 * counter before the decision}. State 1: admitted, its hits counted; 0:
 * refused, nothing counted; -1: run after its cutoff, nothing counted (the
 * caller has given up on it); -2: a counter holds something other than a
 * count, nothing counted.
 *
 * A decision reads everything first and counts only when no enforced counter
 * would pass its limit. A counter named twice in one decision is read once
 * and checked against its value plus the hits of the earlier checks on it
 * (`seen`), as the memory store counts. Every sum saturates at MAX_COUNT
 * (see LUA_COUNTS), so none rounds and no write overflows.
 *
 * The writes of the whole call are made at its end, one per counter, from
 * values already read and checked: none can fail on its value, so a call
 * writes all of its decisions or (should Redis refuse its first write, out of
 * memory or read-only) none. A counter that held nothing is SET with its
 * window; one that did grows by the exact difference.
 */
export const DECIDE_SCRIPT = `${LUA_COUNTS}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local out = {math.floor(now)}
local value, base, ttl, order = {}, {}, {}, {}
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
        -- A count past MAX decides as MAX, and stays as it is (nothing is added to MAX).
        local c = count(redis.pcall('GET', key))
        value[key] = c and math.min(c, MAX)
      end
      if value[key] == false then
        state = -2
      else
        if seen[key] == nil then seen[key] = value[key] end
        out[at + i] = value[key]
        local hits = tonumber(ARGV[b + 1])
        -- Unsaturated, this sum may round past 2^53, but never across a limit below it: the comparison is exact.
        if ARGV[b + 4] == '1' and seen[key] + hits > tonumber(ARGV[b + 2]) then state = 0 end
        seen[key] = add(seen[key], hits)
      end
    end
  end
  out[at] = state
  if state == 1 then
    for i = 1, n do
      local key, b = KEYS[k + i], a + (i - 1) * 4
      local hits = tonumber(ARGV[b + 1])
      if hits > 0 then
        if base[key] == nil then
          base[key], ttl[key] = value[key], ARGV[b + 3]
          order[#order + 1] = key
        end
        value[key] = add(value[key], hits)
      end
    end
  end
  k = k + n
  a = a + n * 4
end
for _, key in ipairs(order) do
  local from, to = base[key], value[key]
  -- A counter that held nothing before these hits is new: give it its window.
  if from == 0 then redis.call('SET', key, int(to), 'PX', ttl[key])
  elseif to > from then redis.call('INCRBY', key, int(to - from)) end
end
return out
`;

/**
 * KEYS: counters; ARGV: the hits to take back from each (what the decision
 * added, see {@link addedHits}). Takes back at most what a counter holds,
 * and deletes one that comes back to nothing, so that its next hits give it
 * its window again. A counter that holds no count, or one past MAX_COUNT
 * (written before counts saturated), is left as it is.
 */
export const UNDO_SCRIPT = `${LUA_COUNTS}
for i = 1, #KEYS do
  local v = count(redis.pcall('GET', KEYS[i]))
  if v and v <= MAX then
    local take = math.min(v, tonumber(ARGV[i]))
    if take > 0 then
      if take == v then redis.call('DEL', KEYS[i]) else redis.call('DECRBY', KEYS[i], int(take)) end
    end
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

/**
 * Why `check` cannot go to {@link DECIDE_SCRIPT}, or undefined when it can:
 * the script adds whole hits and compares them with a number. Found before
 * the call is sent, such a check fails its own decision alone, rather than
 * the script call and the other clients' decisions it carries.
 */
export function uncountable(check: WindowCheck): string | undefined {
  const { hits, limit, ttlMs } = check;
  // Hits past MAX_COUNT count as MAX_COUNT (see scriptHits): any number that large is whole.
  if (typeof hits !== 'number' || !(hits >= 0) || (hits <= MAX_COUNT && !Number.isInteger(hits)))
    return `hits ${String(hits)} are not a whole number from 0`;
  if (typeof limit !== 'number' || !Number.isFinite(limit)) return `limit ${String(limit)} is not a finite number`;
  if (typeof ttlMs !== 'number' || Number.isNaN(ttlMs)) return `ttl ${String(ttlMs)} is not a number of ms`;
  return undefined;
}

/**
 * The hits the script adds for a check: at most MAX_COUNT, where a counter
 * saturates anyway, so that the script's sums stay exact. The memory store
 * adds more, and answers alike: both counters are past any limit.
 */
function scriptHits(hits: number): number {
  return Math.min(hits, MAX_COUNT);
}

/** The arguments of one call of {@link DECIDE_SCRIPT} for `decisions` (each passed {@link uncountable}), keys first, without the key count. */
export function decideArguments(
  decisions: readonly ScriptDecision[],
  prefix: string,
): { keys: number; args: (string | number)[] } {
  const keys: string[] = [];
  const argv: (string | number)[] = [];
  for (const d of decisions) {
    argv.push(d.checks.length, d.cutoff);
    for (const c of d.checks) {
      keys.push(prefix + c.key);
      // A ttl of at least 1 ms (PX refuses 0), and within what PX takes.
      argv.push(scriptHits(c.hits), c.limit, Math.min(MAX_COUNT, Math.max(1, Math.ceil(c.ttlMs))), c.enforce ? 1 : 0);
    }
  }
  return { keys: keys.length, args: (keys as (string | number)[]).concat(argv) };
}

/**
 * The checks of an admitted decision with, as hits, what the script added to
 * each counter from `before` (its reply): less than asked where the counter
 * saturated, so that taking a decision back takes back no more than it added.
 */
export function addedHits(checks: readonly WindowCheck[], before: readonly number[]): WindowCheck[] {
  const reached = new Map<string, number>();
  return checks.map((c, i) => {
    const from = reached.get(c.key) ?? Math.min(before[i], MAX_COUNT);
    const to = Math.min(from + scriptHits(c.hits), MAX_COUNT);
    reached.set(c.key, to);
    return { ...c, hits: to - from };
  });
}

/** The arguments of one call of {@link UNDO_SCRIPT} taking back the hits of `decisions` (see {@link addedHits}), keys first. */
export function undoArguments(
  decisions: readonly (readonly WindowCheck[])[],
  prefix: string,
): { keys: number; args: (string | number)[] } {
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
