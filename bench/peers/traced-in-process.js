// One Gatehouse and its client in one process: CPU µs of the whole process a
// request, for the in-process half of bench/tracing.ts. Arguments: the root
// of a built checkout, the config folder, then the OTLP endpoint and ratio
// when traced. Prints {"cpuUsPerReq": n}.
'use strict';
const { join } = require('node:path');
const http = require('node:http');

const [root, configDir, endpoint, ratio] = process.argv.slice(2);
const { createGatehouse } = require(join(root, 'dist', 'index.js'));
const pino = require(join(root, 'node_modules', 'pino'));
const REQUESTS = Number(process.env.REQUESTS || 20000);
const AUTH = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`;

async function main() {
  const options = {
    configDir,
    host: '127.0.0.1',
    port: 0,
    grpcPort: false,
    watch: false,
    drainDelayMs: 0,
    bookingStore: 'memory',
    logger: pino({ level: 'info' }, pino.destination('/dev/null')),
  };
  if (endpoint)
    Object.assign(options, {
      otlpEndpoint: endpoint,
      tracesSampler: 'parentbased_traceidratio',
      tracesSamplerArg: Number(ratio),
    });
  const gatehouse = await createGatehouse(options);
  const { port } = await gatehouse.start();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
  const one = () =>
    new Promise((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/v1/messages/1', agent, headers: { authorization: AUTH } }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
        })
        .on('error', reject);
    });
  const run = async (n) => {
    let sent = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (sent++ < n) await one();
      }),
    );
  };
  await run(REQUESTS / 5);
  const before = process.cpuUsage();
  await run(REQUESTS);
  const used = process.cpuUsage(before);
  process.stdout.write(`${JSON.stringify({ cpuUsPerReq: (used.user + used.system) / REQUESTS })}\n`);
  await gatehouse.stop();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
