/**
 * @module cors
 * The gateway's CORS policies: a gateway-wide one, off unless given, and a
 * per-Mapping `cors` that takes its place for that mapping.
 */
import type { Middleware } from 'koa';
import { corsMiddleware } from './policy';
import type { CorsPolicy } from './schema';

export {
  ALWAYS_EXPOSED_HEADERS,
  corsMiddleware,
  corsPolicyProblems,
  isPreflight,
  lendsCredentialsToAnyOrigin,
} from './policy';
export { corsSchema, type CorsPolicy } from './schema';

/** The CORS middleware of each mapping. */
export interface CorsPolicies {
  /**
   * The middleware for requests routed by `mapping`: its own policy, else the
   * gateway-wide one, else `undefined` (no CORS). Without a mapping (a path
   * that matched none), the gateway-wide one. Built once per mapping object.
   * Throws for a policy that cannot be applied: call it when a route table is
   * built, so that such a config is rejected rather than failing requests.
   */
  forMapping(mapping?: { readonly cors?: CorsPolicy }): Middleware | undefined;
}

/** Builds the policies; `globalPolicy` applies to every mapping without a `cors` of its own. */
export function createCorsPolicies(globalPolicy?: CorsPolicy): CorsPolicies {
  const global = globalPolicy ? corsMiddleware(globalPolicy) : undefined;
  // Keyed by the mapping object: a reload brings new objects and so new middleware.
  const byMapping = new WeakMap<object, Middleware>();
  return {
    forMapping(mapping) {
      if (!mapping?.cors) return global;
      let middleware = byMapping.get(mapping);
      if (!middleware) byMapping.set(mapping, (middleware = corsMiddleware(mapping.cors)));
      return middleware;
    },
  };
}
