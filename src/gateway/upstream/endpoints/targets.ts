/**
 * @module gateway/upstream/endpoints/targets
 * Whether a Mapping's `service` is a built-in module or a remote upstream.
 * A name written alone (`auth`, `api`) is the module of that name; a
 * Kubernetes Service named like one is reached as `auth.<namespace>`,
 * `auth:80`, `http://auth`, or from a record with a `namespace`, which makes
 * every bare name a Service of that namespace, as Emissary reads it. A bare
 * name that is a built-in module's not running here, or one letter off a
 * module's, is refused rather than looked up in DNS at the first request.
 */
import { redactAddress } from '../../../http';
import { upstreamFieldsGiven } from '../../config/mapping-upstream';
import type { MappingRecord } from '../../config/schema';
import { parseServiceAddress, type NameContext, type ServiceAddress } from '../service';

/** The names of the modules a Gatehouse brings (whether or not they run in this one). */
export const BUILT_IN_MODULES: readonly string[] = ['api', 'auth', 'car-booking', 'diag', 'hotel-booking', 'ratelimit'];

export type ServiceTarget =
  | { readonly kind: 'module'; readonly name: string }
  | { readonly kind: 'remote'; readonly address: ServiceAddress }
  | { readonly kind: 'problem'; readonly path: string; readonly message: string };

/** Whether two names are at most one edit (a letter added, dropped or changed) apart. */
function oneEditApart(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) return a.slice(i + 1) === b.slice(i + 1);
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

/** How a Kubernetes Service of that name is written, for messages. */
function asService(name: string): string {
  return `${name}.<namespace>, ${name}:80 or http://${name}`;
}

/**
 * What a Mapping's `service` is. `modules` are the module names routable
 * here; `names` qualifies a remote upstream's names for DNS; `fromModule`
 * are the fields the Mapping took from Emissary's ambassador Module.
 */
export function serviceTarget(
  m: MappingRecord,
  modules: ReadonlySet<string>,
  names: NameContext,
  fromModule: readonly string[] = [],
): ServiceTarget {
  const service = m.service;
  if (m.namespace === undefined && modules.has(service)) {
    // The upstream settings the ambassador Module gives every Mapping are for the clusters of remote upstreams: a module has none.
    const remoteOnly = upstreamFieldsGiven(m).filter((name) => !fromModule.includes(name));
    if (remoteOnly.length > 0) {
      return {
        kind: 'problem',
        path: remoteOnly[0],
        message: `applies to remote upstreams only: module '${service}' is called in process`,
      };
    }
    return { kind: 'module', name: service };
  }
  const known = [...modules].sort().join(', ') || 'none registered';
  const address = parseServiceAddress(service, {
    ...names,
    ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
  });
  if (address === undefined) {
    return {
      kind: 'problem',
      path: 'service',
      message: `service '${redactAddress(service)}' is neither a registered module (${known}) nor an address (name, name.namespace, host:port, http://host[:port][/base] or https://...)`,
    };
  }
  if (m.namespace === undefined && address.written === address.hostname) {
    if (BUILT_IN_MODULES.includes(service)) {
      return {
        kind: 'problem',
        path: 'service',
        message: `module '${service}' is not running here (modules: ${known}); a Kubernetes Service of that name is written ${asService(service)}`,
      };
    }
    const near = [...modules, ...BUILT_IN_MODULES].find((name) => name.length >= 6 && oneEditApart(service, name));
    if (near !== undefined) {
      return {
        kind: 'problem',
        path: 'service',
        message: `'${service}' is no module: did you mean '${near}'? (modules: ${known}); a host of that name is written ${asService(service)}`,
      };
    }
  }
  return { kind: 'remote', address };
}
