/**
 * @module bench/hardening/regex
 * The event loop held by pattern matching: for each configuration below,
 * eight connections send requests whose path or header the patterns read,
 * back to back for a few seconds, while check_alive is asked every 10 ms.
 * The longest check_alive answer is the longest the loop was held; the
 * access log's longest duration is the longest one request took.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAtOnce } from '../../src/gateway/slices';
import { DEFAULT_MATCH_BUDGET } from '../../src/gateway/match/meter';
import { compileSubstitutionSteps, isSubstitution, SEARCH_BASE_STEPS } from '../../src/gateway/match/substitution';
import { cpuMicros } from '../harness/processes';
import { probeWhile, quantile, startGateway, timedGet, type Probe } from './gateway';

/** One configuration and the request that makes its patterns work hardest. */
interface Scenario {
  /** What it is. */
  readonly about: string;
  /** Its records, one YAML document each. */
  readonly records: string[];
  readonly path: string;
  readonly headers?: Record<string, string>;
}

const MODULE = 'apiVersion: gateway/v1\nkind: Module\nname: ambassador\nconfig: {regex_max_size: 5000}';
const mapping = (name: string, fields: string) =>
  `apiVersion: gateway/v1\nkind: Mapping\nname: ${name}\nservice: api\nbypass_auth: true\n${fields}`;
const LONG_PATH = `/${'a'.repeat(14_000)}`;

/** A program of about 4000 instructions, as a Module that raises regex_max_size to 5000 lets through. */
const FOUR_THOUSAND = `/${'.*a'.repeat(1300)}`;

/**
 * Two lazy groups of alternatives: of the rewrites tried, the one whose
 * capturing search takes the longest for each step it is charged.
 */
const REWRITE = '^/r/((x|.)*?)((y|.)*?)$';

/** The longest path a search by REWRITE may read within the budget, as the gateway charges it. */
function longestRewritten(): string {
  const rewrite = runAtOnce(compileSubstitutionSteps({ pattern: REWRITE, substitution: '/' }, 5000));
  if (!isSubstitution(rewrite)) throw new Error(rewrite.message);
  const longest = Math.floor((DEFAULT_MATCH_BUDGET - 2 * SEARCH_BASE_STEPS) / rewrite.stepsPerCharacter) - 2;
  return `/r/${'aaaab'.repeat(longest).slice(0, longest - 3)}`;
}

export const SCENARIOS: Record<string, Scenario> = {
  'one-4000-instruction-pattern': {
    about: "regex_max_size 5000 and one prefix_regex of 3903 instructions ('.*a' 1300 times); 14 KB paths",
    records: [MODULE, mapping('big', `prefix: '${FOUR_THOUSAND}'\nprefix_regex: true`)],
    path: LONG_PATH,
  },
  'many-patterns-reading-the-whole-path': {
    about: "300 prefix_regex Mappings '/.*z<i>', each reading all of a 14 KB path",
    records: Array.from({ length: 300 }, (_, i) => mapping(`p${i}`, `prefix: '/.*z${i}'\nprefix_regex: true`)),
    path: LONG_PATH,
  },
  'header-patterns-beyond-latin-1': {
    about: "100 regex_headers '(?i)[\\pL\\pN]*z<i>' against a header of 6000 Cyrillic letters (UTF-8)",
    records: Array.from({ length: 100 }, (_, i) =>
      mapping(`h${i}`, `prefix: /h/\nregex_headers: {x-u: '(?i)[\\pL\\pN]*z${i}'}`),
    ),
    path: '/h/x',
    headers: { 'x-u': Buffer.from('ж'.repeat(6000), 'utf8').toString('latin1') },
  },
  'regex-rewrite-at-its-budget': {
    about: 'a regex_rewrite of two lazy groups of alternatives, with the longest path its budget lets through',
    records: [MODULE, mapping('rw', `prefix: /r/\nregex_rewrite: {pattern: '${REWRITE}', substitution: '/\\1'}`)],
    path: longestRewritten(),
  },
};

/** What one scenario gave against one build. */
export interface RegexResult {
  about: string;
  /** The config's refusal, when the gateway would not start with it. */
  refused?: string;
  statuses?: Record<string, number>;
  /** How long the attacking requests took, seen by the client, in ms. */
  requestMedianMs?: number;
  requestMaxMs?: number;
  /** The longest duration the access log gives an attacking request, in ms: the gateway's own time. */
  loggedMaxMs?: number;
  /**
   * The gateway's CPU time for one such request, sent one after the other
   * on one connection, in ms: how long each holds the event loop, whatever
   * else the machine runs (read in 10 ms ticks, over many requests).
   */
  cpuMsPerRequest?: number;
  checkAlive?: Probe;
}

/** The gateway's CPU time a request of `scenario`, in ms: at least 40 of them, or as many as 20 s allow. */
async function cpuPerRequest(url: string, scenario: Scenario, pid: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  // The first ones warm the code up.
  for (let i = 0; i < 5; i++) await timedGet(url, scenario.path, agent, scenario.headers);
  const before = cpuMicros([pid]);
  const until = performance.now() + 20_000;
  let count = 0;
  for (;;) {
    await timedGet(url, scenario.path, agent, scenario.headers);
    count++;
    // Enough ticks to read a few milliseconds a request; a slow one stops at 20 s.
    if (count >= 400 || (count >= 40 && cpuMicros([pid]) - before >= 500_000)) break;
    if (count >= 5 && performance.now() > until) break;
  }
  agent.destroy();
  return Math.round(((cpuMicros([pid]) - before) / count / 1000) * 100) / 100;
}

/** Runs one scenario against `dist` for `seconds`. */
export async function runRegexScenario(dist: string, name: string, seconds = 5): Promise<RegexResult> {
  const scenario = SCENARIOS[name];
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-regex-'));
  const config = join(dir, 'config');
  mkdirSync(config);
  writeFileSync(join(config, 'routes.yaml'), `${scenario.records.join('\n---\n')}\n`);
  const gateway = await startGateway(dist, config, join(dir, 'data'));
  try {
    if (gateway.url === undefined) {
      const line = /problems?[^\n]*\n?[^\n]*/i.exec(gateway.log())?.[0] ?? gateway.log().slice(-600);
      return { about: scenario.about, refused: line.replace(/(\.\*a){4,}/g, '.*a…').trim() };
    }
    const url = gateway.url;
    const statuses: Record<string, number> = {};
    const times: number[] = [];
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const until = performance.now() + seconds * 1000;
    const attack = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() < until) {
          const { status, ms } = await timedGet(url, scenario.path, agent, scenario.headers);
          statuses[status] = (statuses[status] ?? 0) + 1;
          times.push(ms);
        }
      }),
    );
    const checkAlive = await probeWhile(url, attack);
    await attack;
    agent.destroy();
    const cpu = await cpuPerRequest(url, scenario, gateway.child.pid!);
    const logged = [...gateway.log().matchAll(/"path":"\/(?:r\/|h\/|a)[^"]*".*?"duration_ms":([\d.]+)/g)].map((m) =>
      Number(m[1]),
    );
    return {
      about: scenario.about,
      statuses,
      requestMedianMs: Math.round(quantile(times, 0.5) * 10) / 10,
      requestMaxMs: Math.round(Math.max(...times) * 10) / 10,
      loggedMaxMs: logged.length > 0 ? Math.max(...logged) : undefined,
      cpuMsPerRequest: cpu,
      checkAlive,
    };
  } finally {
    await gateway.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
