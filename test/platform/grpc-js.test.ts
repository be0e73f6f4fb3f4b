/**
 * @module test/platform/grpc-js
 * What src/platform/grpc-js relies on in grpc-js, checked against the
 * grpc-js installed, on a real server and client.
 */
import * as grpc from '@grpc/grpc-js';
import { baseCallProgress, GRPC_JS_VERSION, http2StreamOf, interceptingCallOf } from '../../src/platform';
import { pinnedAt, relies } from '../support/reliance';

const rely = (what: string, holds: boolean, detail?: string) =>
  relies('@grpc/grpc-js', GRPC_JS_VERSION, what, holds, detail);

const same = (b: Buffer) => b;
const ECHO: grpc.ServiceDefinition = {
  Echo: {
    path: '/test.Echo/Echo',
    requestStream: false,
    responseStream: false,
    requestSerialize: same,
    requestDeserialize: same,
    responseSerialize: same,
    responseDeserialize: same,
  },
};

describe('platform/grpc-js: what Gatehouse relies on in grpc-js', () => {
  it('is the grpc-js it was written against', () => pinnedAt('@grpc/grpc-js', GRPC_JS_VERSION));

  it("reads a server call's HTTP/2 stream and progress, and finds the call again from its handler", async () => {
    const seen: { stream?: boolean; progress?: boolean; halfClosedBefore?: boolean; next?: object } = {};
    let halfClosedAtHandler: boolean | undefined;
    let sameCall = false;
    const server = new grpc.Server({
      interceptors: [
        (_method, next) => {
          seen.stream = http2StreamOf(next) !== undefined;
          const progress = baseCallProgress(next);
          seen.progress = progress !== undefined;
          seen.halfClosedBefore = progress?.receivedHalfClose;
          seen.next = next;
          return next as unknown as grpc.ServerInterceptingCall;
        },
      ],
    });
    server.addService(ECHO, {
      Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        const progress = baseCallProgress(seen.next as grpc.ServerInterceptingCallInterface);
        halfClosedAtHandler = progress?.receivedHalfClose;
        sameCall = interceptingCallOf(call) === seen.next;
        callback(null, call.request);
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    try {
      const answer = await new Promise<Buffer>((resolve, reject) =>
        client.makeUnaryRequest('/test.Echo/Echo', same, same, Buffer.from('hi'), (err, value) =>
          err ? reject(err) : resolve(value!),
        ),
      );
      rely('answers through a chain its own call heads', answer.toString() === 'hi');
      rely("keeps a call's HTTP/2 stream (stream)", seen.stream === true);
      rely('records receivedHalfClose and metadataSent on its own call', seen.progress === true);
      rely('has not half-closed when the interceptor runs', seen.halfClosedBefore === false);
      rely('has half-closed by the time a unary handler runs', halfClosedAtHandler === true);
      rely("keeps the intercepting call on a handler's call (call)", sameCall);
    } finally {
      client.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    }
  });
});
