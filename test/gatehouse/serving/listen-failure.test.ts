import assert from 'node:assert/strict';
import net from 'node:net';
import { listen, listenFailure } from '../../../src/gatehouse';

describe('gatehouse/serving/listen-failure', function () {
  describe('a port that cannot be listened on', () => {
    it('names the address and says it is in use, for a port another process holds', async () => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as net.AddressInfo).port;
      try {
        await assert.rejects(
          listen(() => undefined, { host: '127.0.0.1', port }),
          {
            message: `cannot listen for HTTP on 127.0.0.1:${port}: the address is already in use (another process listens on that port)`,
          },
        );
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    });

    it('says so for an address no interface of the machine has, and a host name that does not resolve', async () => {
      await assert.rejects(
        listen(() => undefined, { host: '192.0.2.1', port: 0 }),
        {
          message: 'cannot listen for HTTP on 192.0.2.1:0: no network interface of this machine has that address',
        },
      );
      await assert.rejects(
        listen(() => undefined, { host: 'no-such-host.invalid', port: 0 }),
        {
          message: 'cannot listen for HTTP on no-such-host.invalid:0: the host name does not resolve',
        },
      );
    });

    it("reads the reason out of grpc-js's message, which carries no code", () => {
      const grpc = new Error(
        'No address added out of total 1 resolved errors: [listen EADDRINUSE: address already in use 127.0.0.1:8081]',
      );
      assert.equal(
        listenFailure(grpc, 'gRPC', '127.0.0.1', 8081).message,
        'cannot listen for gRPC on 127.0.0.1:8081: the address is already in use (another process listens on that port)',
      );
      assert.equal(
        listenFailure(new Error('something else'), 'gRPC', '::1', 1).message,
        'cannot listen for gRPC on [::1]:1: something else',
      );
    });
  });
});
