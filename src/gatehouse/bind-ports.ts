/**
 * @module gatehouse/bind-ports
 * The ports of a whole Gatehouse, bound before it is built: the HTTP port,
 * and the gRPC port unless there is none. A port that is taken is said
 * before a first start makes its data folder.
 */
import { bindPort, type BoundPort } from '../ports';
import type { BoundPorts, ResolvedOptions } from './options';
import { listenFailure } from './serving/listen-failure';

/** Where the ports are: the options' own, or (a worker beside others) those the first worker was given. */
export type PortsAt = Pick<ResolvedOptions, 'host' | 'port' | 'grpcHost' | 'grpcPort' | 'tls'>;

/**
 * Binds the HTTP port, and the gRPC port unless there is none; rejects
 * saying which address cannot be had. With `reusePort`, beside the other
 * workers of the gateway.
 */
export async function bindGatehousePorts(at: PortsAt, reusePort = false): Promise<BoundPorts & { http: BoundPort }> {
  const http = await bindPort(at.host, at.port, { reusePort }).catch((err: unknown) => {
    throw listenFailure(err, at.tls ? 'HTTPS' : 'HTTP', at.host, at.port);
  });
  if (at.grpcPort === false) return { http };
  const grpcPort = at.grpcPort;
  const grpc = await bindPort(at.grpcHost, grpcPort, { everyAddress: true, reusePort }).catch(async (err: unknown) => {
    await http.close();
    throw listenFailure(err, 'gRPC', at.grpcHost, grpcPort);
  });
  return { http, grpc };
}
