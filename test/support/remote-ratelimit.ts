/**
 * @module test/support/remote-ratelimit
 * The rate-limit gRPC service in a second process (./ratelimit-process), as
 * a remote service a gateway asks over the network.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** A rate-limit service running in its own process. */
export interface RemoteService {
  address: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the rate-limit gRPC server in a second process with the limits of `dir`. */
export async function startRemoteService(dir: string): Promise<RemoteService> {
  const launcher = path.join(__dirname, 'ratelimit-process.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', launcher, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the rate-limit service exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    address: `127.0.0.1:${port}`,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
