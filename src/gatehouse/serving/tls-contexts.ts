/**
 * @module gatehouse/serving/tls-contexts
 * What a TLS connection is served with, chosen by the name the client asks
 * for (SNI), as Envoy chooses among its filter chains: the context of that
 * exact name, else of the longest wildcard that covers it, else the
 * default. Each context says which application protocols (ALPN) it offers,
 * in the order it prefers them. The HTTPS listener asks the store once per
 * handshake; whoever holds the certificates (the TLS files, a config's
 * secrets) puts contexts in and takes them out while it serves.
 */
import type { SecureContext } from 'node:tls';

/** The application protocols an HTTPS listener offers by default, preferred first. */
export const DEFAULT_ALPN: readonly string[] = ['h2', 'http/1.1'];

/** What a TLS connection is served with. */
export interface ServedContext {
  /** The certificate, key and TLS settings. */
  readonly context: SecureContext;
  /** The ALPN protocols offered, preferred first. Default {@link DEFAULT_ALPN}. */
  readonly alpn?: readonly string[];
}

/** The contexts of an HTTPS listener, by the name a client asks for. */
export interface ContextStore {
  /** The context of a connection that names no host, or one no context is for. */
  readonly default: ServedContext;
  /** Serves `served` to new connections that name nothing else. */
  setDefault(served: ServedContext): void;
  /**
   * Serves `served` to new connections for `name`: a host name, or `*.` and
   * a domain for every name in that domain (`*.example.com` covers
   * `a.example.com` and `a.b.example.com`). Names are compared without case.
   */
  set(name: string, served: ServedContext): void;
  /** Forgets the context of `name`. */
  delete(name: string): void;
  /** The context for `servername`: exact, else the longest wildcard, else the default. */
  pick(servername: string | undefined): ServedContext;
  /** For `tls.createServer`'s `SNICallback`. */
  readonly sniCallback: (servername: string, done: (err: Error | null, context?: SecureContext) => void) => void;
  /** For `tls.createServer`'s `ALPNCallback`: the first protocol of the context's list the client offers. */
  readonly alpnCallback: (asked: { servername?: string; protocols: string[] }) => string | undefined;
}

/** The name as contexts are kept by: lower case, without the dot a fully qualified name may end with. */
function keyOf(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** Makes a store whose default is `initial`. */
export function createContextStore(initial: ServedContext): ContextStore {
  let fallback = initial;
  const exact = new Map<string, ServedContext>();
  const wildcards = new Map<string, ServedContext>();

  function pick(servername: string | undefined): ServedContext {
    if (!servername || (exact.size === 0 && wildcards.size === 0)) return fallback;
    const name = keyOf(servername);
    const found = exact.get(name);
    if (found !== undefined) return found;
    // From the longest domain of the name to the shortest: a.b.example.com, then b.example.com...
    for (let dot = name.indexOf('.'); dot !== -1; dot = name.indexOf('.', dot + 1)) {
      const covering = wildcards.get(name.slice(dot + 1));
      if (covering !== undefined) return covering;
    }
    return fallback;
  }

  return {
    get default() {
      return fallback;
    },
    setDefault(served) {
      fallback = served;
    },
    set(name, served) {
      const key = keyOf(name);
      if (key.startsWith('*.')) wildcards.set(key.slice(2), served);
      else exact.set(key, served);
    },
    delete(name) {
      const key = keyOf(name);
      if (key.startsWith('*.')) wildcards.delete(key.slice(2));
      else exact.delete(key);
    },
    pick,
    sniCallback(servername, done) {
      done(null, pick(servername).context);
    },
    alpnCallback({ servername, protocols }) {
      for (const protocol of pick(servername).alpn ?? DEFAULT_ALPN) if (protocols.includes(protocol)) return protocol;
      return undefined;
    },
  };
}
