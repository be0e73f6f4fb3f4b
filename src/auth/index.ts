/**
 * @module auth
 * The HTTP Basic auth service over an htpasswd file: its typed face
 * (`authenticate`), its HTTP face (a Koa app), and clients for one that runs
 * at a network address: over HTTP, and over gRPC as Envoy's ext_authz.
 */
export type { AuthDecision, AuthRequest, Authenticator } from './types';
export {
  createAuthService,
  DEFAULT_CACHE_MAX,
  DEFAULT_CACHE_TTL_MS,
  DEFAULT_REALM,
  USER_HEADER,
  type AuthLogger,
  type AuthService,
  type AuthServiceOptions,
  type AuthStats,
} from './service';
export { createAuthApp } from './app';
export {
  BcryptPoolBusyError,
  createBcryptPool,
  DEFAULT_MAX_QUEUED,
  defaultBcryptThreads,
  type BcryptPool,
  type BcryptPoolOptions,
} from './passwords/bcrypt-pool';
export {
  createRemoteAuthClient,
  parseAuthAddress,
  RemoteAuthError,
  type RemoteAuthClient,
  type RemoteAuthClientOptions,
} from './remote/client';
export {
  createExtAuthzClient,
  extAuthzTarget,
  readCheckResponse,
  EXT_AUTHZ_METHOD,
  type ExtAuthzAllowed,
  type ExtAuthzAnswer,
  type ExtAuthzCheck,
  type ExtAuthzClient,
  type ExtAuthzClientOptions,
  type ExtAuthzDenied,
  type HeaderMutation,
  type PeerAddress,
} from './remote/ext-authz';
export {
  parseHtpasswd,
  UsersFileError,
  USERS_FILE,
  type HashScheme,
  type LineNote,
  type ParsedUsers,
  type UserEntry,
} from './passwords/htpasswd';
export {
  DEFAULT_MAX_HEADER_LENGTH,
  parseBasic,
  repeatedAuthorization,
  type CredentialsProblem,
  type ParsedCredentials,
} from './basic';
export { apr1Hash } from './passwords/apr1';
