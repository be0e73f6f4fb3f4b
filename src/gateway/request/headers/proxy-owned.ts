/**
 * @module gateway/request/headers/proxy-owned
 * Headers that only a proxy writes, and that the services behind one take for
 * its word: a client's copy of one would name a client address, a scheme, a
 * port, a path prefix or a client certificate the gateway never saw. They are
 * taken off the request as it arrives, in one pass over its header lines,
 * before matching, auth, the header edits and in-process modules, so that no
 * backend, auth service or module reads them as the gateway's.
 */
import type { IncomingMessage } from 'node:http';
import { LOOKALIKE, readsAsPrefix, relation, UNRELATED } from './lookalike-headers';

/** Envoy's own headers: what it tells the upstream, and what it takes as orders from a trusted hop. */
const ENVOY_PREFIX = 'x-envoy-';

/**
 * A proxy's account of the client certificate of a mutual TLS connection:
 * Envoy's `X-Forwarded-Client-Cert` (Envoy drops a client's, by
 * `forward_client_cert_details: SANITIZE`), RFC 9440's `Client-Cert` and
 * `Client-Cert-Chain` (which a TLS-terminating proxy must remove from what it
 * receives), ASP.NET Core's `X-Client-Cert` (its certificate forwarding
 * middleware's default), IIS ARR's and Azure App Service's `X-ARR-ClientCert`,
 * and Traefik's `X-Forwarded-Tls-Client-Cert` and `-Info`. The gateway asks
 * for no client certificate, so none of these is ever its word, nor that of
 * a proxy in front: dropped with or without `trustProxy`.
 */
const CLIENT_CERT_HEADERS: readonly string[] = [
  'x-forwarded-client-cert',
  'client-cert',
  'client-cert-chain',
  'x-client-cert',
  'x-arr-clientcert',
  'x-forwarded-tls-client-cert',
  'x-forwarded-tls-client-cert-info',
];

/**
 * What a proxy at the edge tells its backends of the client besides the
 * `X-Forwarded-For`, `-Proto`, `-Host` and `Forwarded` the gateway writes
 * itself, as frameworks read them by default:
 * - the client's address: `X-Real-IP` (nginx's convention; Gin, Echo, chi,
 *   Gorilla, Tornado), `True-Client-IP` (Akamai, Cloudflare; chi),
 *   `X-Client-IP`, `X-Cluster-Client-IP`, `X-Forwarded`, `Forwarded-For`
 *   (the request-ip package), `Client-IP` (Rails, PHP's `HTTP_CLIENT_IP`),
 *   `CF-Connecting-IP`, `CF-Pseudo-IPv4`, `Fastly-Client-IP`,
 *   `Fly-Client-IP`, `X-AppEngine-User-IP`, `X-AppEngine-Remote-Addr`
 *   (Gin's trusted platforms, request-ip): an allowlist, an audit log or a
 *   rate limit keyed on it would take the client's word;
 * - the scheme: `X-Forwarded-Ssl` (Rack, Spring, Echo, Gunicorn),
 *   `X-Forwarded-Scheme` (Rack, Gorilla), `X-Forwarded-Protocol` (Echo,
 *   Gunicorn), `X-Url-Scheme` (Echo), `X-Scheme` (Tornado),
 *   `Front-End-Https` (CodeIgniter, phpMyAdmin): a plain HTTP request passes
 *   for HTTPS, past a redirect to HTTPS and into secure cookies;
 * - the port, path prefix and server: `X-Forwarded-Port`,
 *   `X-Forwarded-Prefix` (Spring, Werkzeug's ProxyFix, Symfony, ASP.NET
 *   Core), `X-Forwarded-Server` (Apache's mod_proxy): links and redirects
 *   the backend writes would point where the client said;
 * - the request a forward-auth service is to judge: `X-Forwarded-Uri`,
 *   `X-Forwarded-Method` (Traefik's and Caddy's forward auth; Authelia reads
 *   them): a client would name a public path for the one it asks for.
 *
 * A proxy trusted with `trustProxy` writes these (or is to remove a client's):
 * then they pass as it sent them.
 */
const FORWARDING_HEADERS: readonly string[] = [
  'x-real-ip',
  'true-client-ip',
  'x-client-ip',
  'x-cluster-client-ip',
  'x-forwarded',
  'forwarded-for',
  'client-ip',
  'cf-connecting-ip',
  'cf-pseudo-ipv4',
  'fastly-client-ip',
  'fly-client-ip',
  'x-appengine-user-ip',
  'x-appengine-remote-addr',
  'x-forwarded-ssl',
  'x-forwarded-scheme',
  'x-forwarded-protocol',
  'x-url-scheme',
  'x-scheme',
  'front-end-https',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-forwarded-server',
  'x-forwarded-uri',
  'x-forwarded-method',
];

/** One name to drop, and whether a proxy trusted with `trustProxy` may send it. */
interface OwnedName {
  readonly name: string;
  readonly trustedFromProxy: boolean;
}

/**
 * Where a name is looked up: by its length and its last character, whose
 * low five bits are the same in either case (`P` and `p`), and which no
 * lookalike spelling changes. Most header lines find nothing there, and are
 * compared with no name at all.
 */
function slot(length: number, last: number): number {
  return length * 32 + (last & 31);
}

/** The names above by {@link slot}: a header line is compared only with the few that could be it. */
function bySlot(): (readonly OwnedName[] | undefined)[] {
  const names = [...CLIENT_CERT_HEADERS, ...FORWARDING_HEADERS];
  const longest = Math.max(...names.map((name) => name.length));
  // Dense, so that a look-up past every name is a bounds check, not a hole.
  const table = new Array<OwnedName[] | undefined>(slot(longest + 1, 0)).fill(undefined);
  const add = (name: string, trustedFromProxy: boolean) =>
    (table[slot(name.length, name.charCodeAt(name.length - 1))] ??= []).push({ name, trustedFromProxy });
  for (const name of CLIENT_CERT_HEADERS) add(name, false);
  for (const name of FORWARDING_HEADERS) add(name, true);
  return table;
}

const OWNED = bySlot();

/** Whether header line name `raw` is one that only a proxy writes, and not the trusted proxy's own here. Allocates nothing. */
function proxyOwned(raw: string, trustProxy: boolean): boolean {
  if (readsAsPrefix(raw, ENVOY_PREFIX)) return true;
  const at = slot(raw.length, raw.charCodeAt(raw.length - 1));
  const owned = at < OWNED.length ? OWNED[at] : undefined;
  if (owned === undefined) return false;
  for (let i = 0; i < owned.length; i++) {
    const seen = relation(raw, owned[i].name);
    if (seen === UNRELATED) continue;
    // A proxy writes the name as it is spelt: `X_Real_IP` is the client's, whoever is in front.
    return seen === LOOKALIKE || !trustProxy || !owned[i].trustedFromProxy;
  }
  return false;
}

/**
 * Removes, in one pass, the headers that only a proxy in front of a backend
 * may set, parsed and raw: the `x-envoy-*` headers, which a backend behind
 * Emissary takes for Envoy's word (`x-envoy-internal`, a caller inside the
 * network; `x-envoy-external-address`, a client address;
 * `x-envoy-original-path`, a path before rewriting; deadlines and retries),
 * as Envoy removes them from an external client's request; the client
 * certificate headers; and, unless `trustProxy` trusts a proxy in front,
 * the forwarding headers the gateway does not write itself (`X-Real-IP`,
 * `X-Forwarded-Port`, `-Prefix`, `-Ssl`...). Every spelling a backend reads
 * as one (`X_Real_IP`) goes, from a trusted proxy too. Nothing allocated
 * when none is there.
 */
export function dropProxyOwnedHeaders(req: IncomingMessage, trustProxy: boolean): void {
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    const name = raw[i];
    if (!proxyOwned(name, trustProxy)) continue;
    delete req.headers[name.toLowerCase()];
    raw.splice(i, 2);
  }
}
