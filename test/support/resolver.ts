/**
 * @module test/support/resolver
 * A DNS resolver for the gateway's `resolve` option that knows only the
 * names a test gives it.
 */
import type { Resolve } from '../../src/gateway';

/** A resolver that knows `names` (name → addresses; a name it does not know is ENOTFOUND), and counts its lookups. */
export function testResolver(names: Record<string, string[]>): Resolve & { lookups: string[] } {
  const lookups: string[] = [];
  const resolve = (async (hostname: string): Promise<string[]> => {
    lookups.push(hostname);
    const found = names[hostname];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  }) as unknown as Resolve & { lookups: string[] };
  resolve.lookups = lookups;
  return resolve;
}
