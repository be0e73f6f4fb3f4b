/**
 * @module gateway/upstream
 * Remote upstreams: what a `service` names (`./service`), the DNS lookups of
 * its names (`./endpoints/resolver`), the clusters of endpoints with their
 * pools, balancing, passive ejection and circuit breakers
 * (`./endpoints/clusters`), and the forwarding of a request with its
 * retries (`./forward`).
 */
export {
  parseServiceAddress,
  parseEndpointAddress,
  lookupNames,
  DEFAULT_CLUSTER_DOMAIN,
  type ServiceAddress,
  type NameContext,
} from './service';
export { systemResolve, DNS_REFRESH_MS, type Resolve, type AddressFamily } from './endpoints/resolver';
export { ClusterSet, DEFAULT_CONNECT_TIMEOUT_MS, type RouteUpstream } from './endpoints/clusters';
export type { Cluster, ClusterEvents } from './endpoints/cluster';
export { forwardRemote } from './forward';
export { DEFAULT_RETRY_BUFFER_BYTES } from './upload';
