/**
 * @module gateway/stages/auth-service-client
 * Who an AuthService record's stage asks: the built-in module it names, or
 * an HTTP client of the address it names; anything else is refused with a
 * message that speaks of the field.
 */
import { createRemoteAuthClient, type Authenticator, type RemoteAuthClient } from '../../auth';
import { redactAddress } from '../../http';
import { connectOptions } from '../../tls';
import type { AuthServiceRecord } from '../config/schema';
import type { ModuleRegistry } from '../module';
import type { AuthStageOptions } from './stage';

/** Who is asked, and the HTTP client when it is remote (absent for a built-in module, which is called). */
export interface AuthServiceClient {
  readonly authenticator: Authenticator;
  readonly remote: RemoteAuthClient | undefined;
}

function looksLikeAddress(service: string): boolean {
  return service.includes(':') || service.includes('/');
}

/** The address to dial: `tls: true` or a TLSContext's name makes a bare `host:port` an https one. */
function dialled(record: AuthServiceRecord): string {
  const address = record.auth_service;
  const tls = record.tls === true || (typeof record.tls === 'string' && record.tls !== '');
  return tls && !/^[a-z][a-z0-9+.-]*:\/\//i.test(address) ? `https://${address}` : address;
}

/**
 * The client `record.auth_service` names. Throws when it names neither a
 * registered module with `authenticate` nor an address.
 */
export function authServiceClient(
  record: AuthServiceRecord,
  modules: ModuleRegistry,
  options: AuthStageOptions,
): AuthServiceClient {
  const builtIn = modules.get(record.auth_service);
  if (builtIn?.authenticate) return { authenticator: builtIn as Authenticator, remote: undefined };
  if (looksLikeAddress(record.auth_service)) {
    let remote: RemoteAuthClient;
    try {
      const tls = options.upstreamTls;
      remote = createRemoteAuthClient(dialled(record), {
        timeoutMs: record.timeout_ms,
        linkerdHeaders: record.add_linkerd_headers,
        ...(tls !== undefined ? { tls: connectOptions(tls), servername: tls.servername } : {}),
      });
    } catch (err) {
      throw new Error(`auth_service ${(err as Error).message}`);
    }
    return { authenticator: remote, remote };
  }
  // The usual cause of a missing built-in: no users file for it to serve.
  const hint =
    record.auth_service === 'auth' && !builtIn
      ? '; the built-in auth service runs when the config folder has users.htpasswd'
      : '';
  throw new Error(
    `auth_service '${redactAddress(record.auth_service)}' is neither a built-in module that ` +
      `authenticates nor an address (host:port or URL)${hint}`,
  );
}
