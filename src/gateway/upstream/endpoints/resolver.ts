/**
 * @module gateway/upstream/endpoints/resolver
 * The addresses a DNS name stands for, looked up as Envoy's `strict_dns`
 * clusters look them up: every address is an endpoint, the name is looked up
 * again every 5 s (Envoy's `dns_refresh_rate`) while it is in use, or
 * once its records' TTL has passed (`respect_dns_ttl`), and a failed lookup
 * keeps the addresses of the last one that worked.
 */
import { promises as dns, type RecordWithTtl } from 'node:dns';

/** Which address families a lookup returns: Emissary's `enable_ipv4` / `enable_ipv6`. */
export type AddressFamily = 'v4' | 'v6' | 'auto';

/** Addresses with how long they hold: the smallest TTL of their records, in seconds. */
export interface TimedAddresses {
  readonly addresses: string[];
  readonly ttl: number;
}

/**
 * Looks a name up: resolves with its addresses, or rejects with an error whose
 * `code` is `ENOTFOUND` (or `ENODATA`) when the name does not exist, as
 * node:dns does. Asked `withTtl`, it may say how long they hold. Tests give
 * one of their own; the default is {@link systemResolve}.
 */
export type Resolve = (hostname: string, family: 0 | 4 | 6, withTtl?: boolean) => Promise<string[] | TimedAddresses>;

/** The records of one family, with their TTLs: node:dns's `resolve4` / `resolve6`. */
function resolveFamily(hostname: string, v6: boolean): Promise<RecordWithTtl[]> {
  return v6 ? dns.resolve6(hostname, { ttl: true }) : dns.resolve4(hostname, { ttl: true });
}

/** A name's records with TTLs (of both families for `0`); rejects when it has none. */
async function resolveWithTtl(hostname: string, family: 0 | 4 | 6): Promise<TimedAddresses> {
  const families = family === 0 ? [false, true] : [family === 6];
  const settled = await Promise.allSettled(families.map((v6) => resolveFamily(hostname, v6)));
  const records = settled.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
  if (records.length === 0) throw (settled.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason;
  return { addresses: records.map((r) => r.address), ttl: Math.min(...records.map((r) => r.ttl)) };
}

/**
 * node:dns's `lookup`, every address: it reads `/etc/hosts` and the
 * system's search domains as any program on the machine does, and gives no
 * TTL. Asked `withTtl`, the name's A and AAAA records are asked of the DNS
 * servers instead, with their TTLs; a name they do not know (`localhost`,
 * a name of `/etc/hosts`) is looked up as without.
 */
export const systemResolve: Resolve = async (hostname, family, withTtl) => {
  if (withTtl === true) {
    try {
      return await resolveWithTtl(hostname, family);
    } catch {
      // Not in DNS: looked up as any other name, refreshed at the default rate.
    }
  }
  const found = await dns.lookup(hostname, { all: true, family });
  return found.map((a) => a.address);
};

/** Envoy's default `dns_refresh_rate`: how old a lookup may be before the name is looked up again. */
export const DNS_REFRESH_MS = 5000;

function missing(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === 'ENOTFOUND' || code === 'ENODATA';
}

/** The addresses of one family from a lookup of both: IPv6 when there are any (Envoy's `AUTO`), else IPv4. */
function preferred(addresses: string[]): string[] {
  const v6 = addresses.filter((a) => a.includes(':'));
  return v6.length > 0 ? v6 : addresses;
}

/** Looks up `names` in order until one exists: its addresses, or throws the first lookup's error (or the last one's when no name exists). */
async function lookupFirst(
  resolve: Resolve,
  names: readonly string[],
  family: AddressFamily,
  withTtl: boolean,
): Promise<{ name: string; addresses: string[]; ttl?: number }> {
  let firstError: Error | undefined;
  for (const name of names) {
    try {
      const found = await resolve(name, family === 'v4' ? 4 : family === 'v6' ? 6 : 0, withTtl);
      const all = Array.isArray(found) ? found : found.addresses;
      const addresses = family === 'auto' ? preferred(all) : all;
      if (addresses.length > 0) return { name, addresses, ttl: Array.isArray(found) ? undefined : found.ttl };
    } catch (err) {
      // A name that exists but did not answer (EAI_AGAIN, a timeout) is no reason to try the next one.
      if (!missing(err)) throw err;
      firstError ??= err as Error;
    }
  }
  throw firstError ?? Object.assign(new Error(`no address for ${names.join(' or ')}`), { code: 'ENOTFOUND' });
}

/**
 * One DNS name (tried in the forms of {@link lookupNames}) and what it last
 * resolved to. `current()` answers at once once a lookup has worked; a stale
 * answer is refreshed in the background, one lookup at a time.
 */
export class DnsName {
  private addresses: readonly string[] | null = null;
  private lookedUpAt = -Infinity;
  private pending: Promise<readonly string[]> | null = null;
  private lastError: unknown = null;
  /** How long the last answer holds: its TTL with `respectTtl`, else Envoy's refresh rate. */
  private holdsMs = DNS_REFRESH_MS;

  /** `respectTtl`: Envoy's `respect_dns_ttl`, an answer is looked up again once its TTL has passed. */
  constructor(
    readonly names: readonly string[],
    private readonly family: AddressFamily,
    private readonly resolve: Resolve,
    private readonly now: () => number,
    private readonly onChange: (addresses: readonly string[]) => void,
    private readonly respectTtl = false,
  ) {}

  /** The addresses it resolved to last, refreshing them when stale; null before the first lookup worked. */
  current(): readonly string[] | null {
    if (this.pending === null && this.now() - this.lookedUpAt >= this.holdsMs) this.refresh();
    return this.addresses;
  }

  /** Waits for a lookup when none has worked yet; rejects with why the last one failed. */
  async ready(): Promise<readonly string[]> {
    const known = this.current();
    if (known !== null) return known;
    if (this.pending !== null) return this.pending;
    // Looked up and failed less than a refresh ago: the same answer, without asking DNS at the rate of requests.
    throw this.lastError;
  }

  private refresh(): void {
    const pending = lookupFirst(this.resolve, this.names, this.family, this.respectTtl).then(
      ({ addresses, ttl }) => {
        this.lastError = null;
        // A TTL of 0, or none known, is Envoy's refresh rate, as Envoy takes it.
        this.holdsMs = this.respectTtl && ttl !== undefined && ttl > 0 ? ttl * 1000 : DNS_REFRESH_MS;
        const sorted = [...new Set(addresses)].sort();
        const changed =
          this.addresses === null ||
          sorted.length !== this.addresses.length ||
          sorted.some((a, i) => a !== this.addresses![i]);
        this.addresses = sorted;
        if (changed) this.onChange(sorted);
        return sorted;
      },
      (err: unknown) => {
        this.lastError = err;
        this.holdsMs = DNS_REFRESH_MS;
        if (this.addresses !== null) return this.addresses;
        throw err;
      },
    );
    this.pending = pending;
    // Failed or not, the name is looked up again a refresh later, not at the rate of requests.
    void pending
      .catch(() => undefined)
      .finally(() => {
        this.lookedUpAt = this.now();
        this.pending = null;
      });
  }
}
