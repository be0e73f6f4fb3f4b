/**
 * @module test/support/large-config
 * A config of many Mappings, with the work each kind costs a reload or a
 * diag page, and a measure of how long the event loop is held while some
 * work runs, with check_alive asked all along.
 */
import assert from 'node:assert/strict';

/**
 * `count` Mappings in one file (4 MB for 30 000), with the work each kind
 * costs: most route to the api module; one in ten is a remote upstream with
 * retries and breakers (100 clusters), one in ten a redirect, two in ten a
 * canary pair; one in a hundred is a pattern that bypasses auth, held
 * against the one in a hundred that needs it.
 */
export function manyMappings(count: number): string {
  const docs: string[] = [];
  for (let i = 0; i < count; i++) {
    const base = `apiVersion: gateway/v1, kind: Mapping, name: m${i}`;
    if (i % 10 === 0) {
      const service = `http://127.0.0.1:${1024 + ((i / 10) % 100)}`;
      docs.push(
        `{${base}, prefix: /u${i}/, service: '${service}', retry_policy: {retry_on: 5xx, num_retries: 2}, circuit_breakers: [{max_connections: 64}], bypass_auth: true}`,
      );
    } else if (i % 100 === 1)
      docs.push(`{${base}, prefix: '/r${i}/[a-z]+/.*', prefix_regex: true, service: api, bypass_auth: true}`);
    else if (i % 10 === 2)
      docs.push(`{${base}, prefix: /c${i}/, service: api, rewrite: /v1/, weight: 10, bypass_auth: true}`);
    else if (i % 10 === 3) docs.push(`{${base}, prefix: /c${i - 1}/, service: api, rewrite: /v2/, bypass_auth: true}`);
    else if (i % 10 === 4)
      docs.push(`{${base}, prefix: /o${i}/, service: 'https://example.org', host_redirect: true, bypass_auth: true}`);
    else if (i % 100 === 5) docs.push(`{${base}, prefix: /g${i}/, service: api, rewrite: /v1/}`);
    else docs.push(`{${base}, prefix: /p${i}/, service: api, rewrite: /v1/, bypass_auth: true}`);
  }
  return `${docs.join('\n---\n')}\n`;
}

/** How long `during` took, the longest the event loop was held meanwhile, and how check_alive was answered. */
export interface Stall {
  stallMs: number;
  tookMs: number;
  answers: number;
  /** The longest a check_alive waited for its answer. */
  longestAnswerMs: number;
}

/**
 * Measures the longest gap between the turns of a timer due every
 * millisecond: how long the event loop was held at the most. (A histogram
 * of monitorEventLoopDelay misses a stall that begins within its first
 * interval, as a request's work does when it starts at once.)
 */
function watchTurns(): () => number {
  let watching = true;
  let last = performance.now();
  let longest = 0;
  const turn = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (watching) setTimeout(turn, 1);
  };
  setTimeout(turn, 1);
  return () => {
    watching = false;
    return Math.max(longest, performance.now() - last);
  };
}

/** The longest the event loop was held while `during` ran, with check_alive asked all along (every answer must be a 200). */
export async function longestStall(url: string, during: () => Promise<unknown>): Promise<Stall> {
  let asking = true;
  let answers = 0;
  let longestAnswerMs = 0;
  const loop = (async () => {
    while (asking) {
      const asked = performance.now();
      const res = await fetch(`${url}/gateway/v0/check_alive`);
      await res.arrayBuffer();
      assert.equal(res.status, 200);
      answers++;
      longestAnswerMs = Math.max(longestAnswerMs, performance.now() - asked);
    }
  })();
  const started = performance.now();
  const stopWatching = watchTurns();
  let stallMs: number;
  try {
    await during();
  } finally {
    stallMs = stopWatching();
    asking = false;
    await loop;
  }
  return { stallMs, tookMs: performance.now() - started, answers, longestAnswerMs };
}
