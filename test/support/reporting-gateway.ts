/**
 * @module test/support/reporting-gateway
 * A gateway on a free port whose events (retries, overflows, ejections,
 * upstream errors) are recorded for assertions, with the resolver and the
 * clock a test gives it.
 */
import { createGateway, type Gateway, type GatewayEvents, type Resolve } from '../../src/gateway';
import { configOf } from './records';
import { close, listen } from './server';

/** What a gateway reported. */
export interface Reported {
  retries: string[];
  overflows: string[];
  ejections: string[];
  errors: string[];
}

export interface TestGateway {
  readonly gateway: Gateway;
  readonly base: string;
  readonly reported: Reported;
  close(): Promise<void>;
}

/** A gateway serving `records`, with the resolver and clock given, that records its events. */
export async function testGateway(
  records: unknown[],
  options: { resolve?: Resolve; now?: () => number; retryBufferBytes?: number; clusterDomain?: string } = {},
): Promise<TestGateway> {
  const reported: Reported = { retries: [], overflows: [], ejections: [], errors: [] };
  const events: GatewayEvents = {
    upstreamRetry: (route) => reported.retries.push(route),
    upstreamOverflow: (cluster, limit) => reported.overflows.push(`${cluster} ${limit}`),
    upstreamEjection: (cluster, endpoint) => reported.ejections.push(`${cluster} ${endpoint}`),
    upstreamError: (route, kind) => reported.errors.push(`${route} ${kind}`),
  };
  const gateway = createGateway({ config: configOf(...records), events, upstreams: options });
  const { server, url } = await listen(gateway.app.callback());
  return {
    gateway,
    base: url,
    reported,
    async close() {
      await close(server);
      await gateway.close();
    },
  };
}
