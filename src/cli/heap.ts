/**
 * @module cli/heap
 * How the `gatehouse` process has V8 place what a request allocates.
 *
 * V8 "pretenures" an allocation site (makes its objects straight in the old
 * generation) when most of what it made survived a young collection. A
 * request's objects live for a millisecond, but once in a while many of them
 * are caught alive: a burst of load on a young generation V8 has just shrunk
 * (after an idle spell, or a process stopped and resumed), or a long pause.
 * Then the sites of the hot path are pretenured for the rest of the process's
 * life: every request fills the old generation, which takes a full
 * collection every second or two, and the young objects those old ones point
 * at survive too. Measured on `gatehouse start` under load: half the
 * requests a second, twice the CPU a request, a p99 of 15–30 ms instead of 3.
 * A gateway keeps nothing a request made, so its process goes without.
 */
import { setFlagsFromString } from 'node:v8';

const FLAG = 'allocation-site-pretenuring';

/**
 * Turns V8's allocation-site pretenuring off for this process, before the
 * hot path is compiled, unless the command line or `NODE_OPTIONS` names the
 * flag (`--allocation-site-pretenuring` keeps it on).
 */
export function keepRequestsYoung(): void {
  const named = process.execArgv.some((arg) => arg.includes(FLAG)) || (process.env.NODE_OPTIONS ?? '').includes(FLAG);
  if (!named) setFlagsFromString(`--no-${FLAG}`);
}
