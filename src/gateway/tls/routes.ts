/**
 * @module gateway/tls/routes
 * What TLS changes in a configuration's routes: each Host gets the route
 * table of the Mappings it serves (in the configuration's match order), and
 * a Mapping that names a TLSContext calls its upstream over TLS (a
 * `host:port` service is an `https://` one, on port 443 when it names none,
 * as Emissary calls it).
 */
import type { MappingRecord } from '../config/schema';
import { RouteTable, type Route } from '../match/route-table';
import type { ServiceAddress } from '../upstream';
import type { HostRoute } from './hosts';
import type { GatewayTls } from './resolve';

/** The Hosts of `tls`, each with the table of the routes it serves; null when there is no Host. */
export function hostTables<T>(
  tls: GatewayTls,
  routes: readonly Route<T>[],
  random?: () => number,
): HostRoute<RouteTable<T>>[] | null {
  if (tls.hosts.length === 0) return null;
  return tls.hosts.map(({ route, selects }) => ({
    ...route,
    table: new RouteTable<T>([], { random, compiled: routes.filter((r) => selects(r.mapping)) }),
  }));
}

/** The address a Mapping calls: over TLS when it names a TLSContext. */
export function addressWithTls(mapping: MappingRecord, address: ServiceAddress): ServiceAddress {
  if (mapping.tls === undefined || address.secure) return address;
  const written = address.host.endsWith(`:${address.port}`);
  return { ...address, secure: true, port: written ? address.port : 443 };
}
