/**
 * @module tls/port-wide
 * What a TLS context's versions, ciphers and curves can do on a port that
 * serves several. OpenSSL agrees on them as it reads the ClientHello,
 * before the name the client asks for chooses a context: a context's own
 * are not in force yet. So the port offers those of all its contexts
 * together (the lowest version to the highest, every cipher and curve any
 * context lists beside OpenSSL's defaults), and a connection that agreed
 * on a version or a cipher its own context does not list is closed as soon
 * as its handshake is done. Curves cannot be told after the handshake on
 * the server's side: a context's `ecdh_curves` only adds to the port's.
 */
import { DEFAULT_CIPHERS, DEFAULT_MAX_VERSION, DEFAULT_MIN_VERSION, type SecureVersion } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import type { ServedContext, ServingSettings } from './store';

const ORDER: readonly SecureVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

/** The curves OpenSSL offers by default, named as it takes them in a list. */
const DEFAULT_CURVES = ['X25519', 'P-256', 'X448', 'P-521', 'P-384'];

/** The versions, ciphers and curves a port offers, from its contexts' settings. */
export interface PortWide {
  readonly minVersion: SecureVersion;
  readonly maxVersion: SecureVersion;
  readonly ciphers?: string;
  readonly ecdhCurve?: string;
}

/** What a port serving `contexts` offers. */
export function portWide(contexts: readonly ServedContext[]): PortWide {
  let min = ORDER.indexOf(DEFAULT_MIN_VERSION);
  let max = ORDER.indexOf(DEFAULT_MAX_VERSION);
  const ciphers = new Set<string>();
  const curves = new Set<string>();
  let someWithoutCurves = false;
  for (const { entry } of contexts) {
    const s = entry.settings;
    if (s.minVersion !== undefined) min = Math.min(min, ORDER.indexOf(s.minVersion));
    if (s.maxVersion !== undefined) max = Math.max(max, ORDER.indexOf(s.maxVersion));
    for (const cipher of s.ciphers?.split(':') ?? []) ciphers.add(cipher);
    if (s.ecdhCurve === undefined) someWithoutCurves = true;
    else for (const curve of s.ecdhCurve.split(':')) curves.add(curve);
  }
  if (curves.size > 0 && someWithoutCurves) for (const curve of DEFAULT_CURVES) curves.add(curve);
  return {
    minVersion: ORDER[min],
    maxVersion: ORDER[max],
    ...(ciphers.size > 0 ? { ciphers: [DEFAULT_CIPHERS, ...ciphers].join(':') } : {}),
    ...(curves.size > 0 ? { ecdhCurve: [...curves].join(':') } : {}),
  };
}

/**
 * Why a connection's agreed version or cipher is outside its context's
 * settings, or undefined when it is within them.
 */
export function outsideContext(socket: TLSSocket, settings: ServingSettings): string | undefined {
  const version = socket.getProtocol() as SecureVersion | null;
  if (version !== null && ORDER.includes(version)) {
    const at = ORDER.indexOf(version);
    if (settings.minVersion !== undefined && at < ORDER.indexOf(settings.minVersion))
      return `${version} is below ${settings.minVersion}`;
    if (settings.maxVersion !== undefined && at > ORDER.indexOf(settings.maxVersion))
      return `${version} is above ${settings.maxVersion}`;
  }
  if (settings.ciphers !== undefined) {
    const cipher = socket.getCipher();
    const listed = settings.ciphers.split(':');
    if (!listed.includes(cipher.name) && !listed.includes(cipher.standardName)) return `${cipher.name} is not listed`;
  }
  return undefined;
}
