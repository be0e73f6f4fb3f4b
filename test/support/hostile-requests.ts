/**
 * @module test/support/hostile-requests
 * Requests a hostile client sends to get past auth or to be taken for
 * another user, shared by the tests that send them over HTTP/1.1 and those
 * that send them again over HTTP/2: every spelling must fail the same way.
 */

/**
 * Spellings of `/v1/cars/x` (guarded by auth) and of other guarded paths:
 * none may reach a backend without credentials.
 */
export const GUARDED_PATH_SPELLINGS = [
  '/v1/cars/x',
  '/v1/hotels/../cars/x',
  '//v1/cars/x',
  '/v1//cars/x',
  '/./v1/cars/x',
  '/v1/%63ars/x',
  '/v1/%63%61%72%73/x',
  '/v1/c%61rs/x',
  '/v1/C%61rs/../cars/x',
  '/v1/hotels/%2e%2e/cars/x',
  '/v1/hotels/%2E%2e/cars/x',
  '/v1/hotels/.%2E/cars/x',
  '/v1/hotels/%2e/../cars/x',
  '/%2e%2e/v1/cars/x',
  '/v1/cars/x/..',
  '/v1/cars%2fx',
  '/v1/cars/x?y=1',
  '/v1/hotels/',
  '/remote/x',
];

/** Spellings of X-Travel-User a client sends to claim a user: as written, and as CGI, WSGI and PHP read it. */
export const CLAIMED_USER_HEADERS = [
  'X-Travel-User',
  'x-travel-USER',
  'X_Travel_User',
  'x-travel_user',
  'X.Travel.User',
];

/**
 * Overrides of POST to DELETE on `/items/1`, where a POST goes to an open
 * Mapping and a DELETE to a guarded one: each is refused (400).
 */
export const REROUTING_OVERRIDES: { path: string; headers?: Record<string, string> }[] = [
  { path: '/items/1', headers: { 'X-HTTP-Method-Override': 'DELETE' } },
  { path: '/items/1', headers: { 'X-HTTP-Method-Override': 'delete' } },
  { path: '/items/1', headers: { 'X-HTTP-Method': 'DELETE' } },
  { path: '/items/1', headers: { 'X-Method-Override': 'DELETE' } },
  { path: '/items/1', headers: { 'X-HTTP-Method-Override': 'POST, DELETE' } },
  { path: '/items/1?_method=DELETE' },
  { path: '/items/1?x=1&_method=delete' },
];
