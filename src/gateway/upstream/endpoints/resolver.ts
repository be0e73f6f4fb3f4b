/**
 * @module gateway/upstream/endpoints/resolver
 * The addresses a DNS name stands for, looked up as Envoy's `strict_dns`
 * clusters look them up: every address is an endpoint, the name is looked up
 * again every 5 s (Envoy's `dns_refresh_rate`) while it is in use, and a
 * failed lookup keeps the addresses of the last one that worked.
 */
import { promises as dns } from 'node:dns';

/** Which address families a lookup returns: Emissary's `enable_ipv4` / `enable_ipv6`. */
export type AddressFamily = 'v4' | 'v6' | 'auto';

/**
 * Looks a name up: resolves with its addresses, or rejects with an error whose
 * `code` is `ENOTFOUND` (or `ENODATA`) when the name does not exist, as
 * node:dns does. Tests give one of their own; the default is node:dns's
 * `lookup`, which reads `/etc/hosts` and the system's search domains as any
 * program on the machine does.
 */
export type Resolve = (hostname: string, family: 0 | 4 | 6) => Promise<string[]>;

/** node:dns's `lookup`, every address. */
export const systemResolve: Resolve = async (hostname, family) => {
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
): Promise<{ name: string; addresses: string[] }> {
  let firstError: Error | undefined;
  for (const name of names) {
    try {
      const found = await resolve(name, family === 'v4' ? 4 : family === 'v6' ? 6 : 0);
      const addresses = family === 'auto' ? preferred(found) : found;
      if (addresses.length > 0) return { name, addresses };
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

  constructor(
    readonly names: readonly string[],
    private readonly family: AddressFamily,
    private readonly resolve: Resolve,
    private readonly now: () => number,
    private readonly onChange: (addresses: readonly string[]) => void,
  ) {}

  /** The addresses it resolved to last, refreshing them when stale; null before the first lookup worked. */
  current(): readonly string[] | null {
    if (this.pending === null && this.now() - this.lookedUpAt >= DNS_REFRESH_MS) this.refresh();
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
    const pending = lookupFirst(this.resolve, this.names, this.family).then(
      ({ addresses }) => {
        this.lastError = null;
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
