/**
 * @module bench/peers/grpc-empty
 * The yardstick of the gRPC rows: grpc-js serving envoy v3's
 * ShouldRateLimit from the same protos, loaded with the same proto-loader
 * options, with a handler that answers OK and does nothing else. Listens on
 * PORT (0: any free port) and says where in its first line. Started with
 * its standard input a pipe, it ends when the pipe closes, so that it ends
 * with whoever started it, even one that was killed.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_DIR = path.join(__dirname, '..', '..', 'proto');
const definition = protoLoader.loadSync(['envoy/service/ratelimit/v3/rls.proto'], {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
});

const answer = { overall_code: 'OK' };
const server = new grpc.Server();
server.addService(definition['envoy.service.ratelimit.v3.RateLimitService'], {
  ShouldRateLimit: (_call, callback) => callback(null, answer),
});
server.bindAsync(`127.0.0.1:${Number(process.env.PORT || 0)}`, grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.stdout.write(`grpc-empty listening on 127.0.0.1:${port}\n`);
});
if (fs.fstatSync(0).isFIFO()) process.stdin.on('end', () => process.exit(0)).resume();
process.once('SIGTERM', () => server.tryShutdown(() => process.exit(0)));
