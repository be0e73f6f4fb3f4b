// Every build's Gatehouse and one client in one process: CPU µs a request,
// for the in-process half of bench/tracing.ts. The builds take turns in
// small batches, so that whatever else the machine does weighs on each
// alike; each batch's CPU time is compared with the first build's batch of
// the same turn. Arguments: the config folder, the OTLP endpoint, then one
// `root=ratio` a build (`off` for tracing off). BATCHES, BATCH. Prints
// {"cpuUsPerReq": [..], "addedUs": [..]}: medians, a build each.
'use strict';
const { join } = require('node:path');
const http = require('node:http');

const [configDir, endpoint, ...builds] = process.argv.slice(2);
const BATCHES = Number(process.env.BATCHES || 40);
const BATCH = Number(process.env.BATCH || 1000);
const AUTH = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`;

async function open(build) {
  const at = build.lastIndexOf('=');
  const root = build.slice(0, at);
  const ratio = build.slice(at + 1);
  const { createGatehouse } = require(join(root, 'dist', 'index.js'));
  const pino = require(join(root, 'node_modules', 'pino'));
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
  if (ratio !== 'off')
    Object.assign(options, {
      otlpEndpoint: endpoint,
      tracesSampler: 'parentbased_traceidratio',
      tracesSamplerArg: Number(ratio),
    });
  const gatehouse = await createGatehouse(options);
  const { port } = await gatehouse.start();
  return { gatehouse, port, agent: new http.Agent({ keepAlive: true, maxSockets: 20 }) };
}

function one(target) {
  return new Promise((resolve, reject) => {
    http
      .get(
        {
          host: '127.0.0.1',
          port: target.port,
          path: '/v1/messages/1',
          agent: target.agent,
          headers: { authorization: AUTH },
        },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
        },
      )
      .on('error', reject);
  });
}

async function run(target, n) {
  let sent = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (sent++ < n) await one(target);
    }),
  );
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

async function main() {
  const targets = [];
  for (const build of builds) targets.push(await open(build));
  for (const target of targets) await run(target, 4 * BATCH);
  const cpu = targets.map(() => []);
  for (let turn = 0; turn < BATCHES; turn++) {
    // Each turn in another order: no build always runs right after another.
    for (let i = 0; i < targets.length; i++) {
      const k = (i + turn) % targets.length;
      const before = process.cpuUsage();
      await run(targets[k], BATCH);
      const used = process.cpuUsage(before);
      cpu[k].push((used.user + used.system) / BATCH);
    }
  }
  const cpuUsPerReq = cpu.map(median);
  const addedUs = cpu.map((batches) => median(batches.map((c, turn) => c - cpu[0][turn])));
  process.stdout.write(`${JSON.stringify({ cpuUsPerReq, addedUs })}\n`);
  for (const target of targets) await target.gatehouse.stop();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
