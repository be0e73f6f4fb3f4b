#!/usr/bin/env node
/**
 * @module scripts/try-installs
 * Tries each way the README installs the package, each in a scratch project
 * of its own, as a user would: `npm install` of the tarball `npm pack` makes
 * here, and of a git URL (this checkout's last commit, as `git+file://`: the
 * same clone, dev install, build and pack npm does for any git URL). Then,
 * in each: `npx gatehouse check`, `require` and `import` of the package, and
 * `npx gatehouse start` answering a request until SIGTERM to npx. Needs the
 * npm registry; takes a minute or more, so the suite does not run it (it
 * tests the packed package offline). Run `npm install` first.
 *
 *   node scripts/try-installs.js
 */
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { cpSync, mkdirSync, mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const root = join(__dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'gatehouse-installs-'));
/** A user's environment: nothing of the npm script this may run in. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_') && name !== 'NODE_OPTIONS'));

function sh(command, args, cwd) {
  return execFileSync(command, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function groupAlive(pid) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `npx gatehouse start` in `project`: resolves once it answered a request and stopped on SIGTERM to npx. */
function startAndStop(project) {
  return new Promise((resolve, reject) => {
    const npx = spawn('npx', ['gatehouse', 'start', '--port', '0', '--grpc-port', '0', '--no-watch'], {
      cwd: project,
      env: { ...env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    let asked = false;
    const collect = (chunk) => {
      out += chunk;
      const match = / listening on (\S+)/.exec(out);
      if (!match || asked) return;
      asked = true;
      fetch(`${match[1]}/v1/messages/1`)
        .then((res) => {
          if (res.status !== 200) throw new Error(`the first request got ${res.status}`);
          npx.kill('SIGTERM');
        })
        .catch(reject);
    };
    npx.stdout.setEncoding('utf8').on('data', collect);
    npx.stderr.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    npx.on('close', async () => {
      // The whole group gone, once the orphaned gateway has drained (DRAIN_DELAY_MS, 5 s by default) and is reaped: npx, its shell and the gateway.
      const drainMs = Number(env.DRAIN_DELAY_MS || 5000);
      for (let waited = 0; groupAlive(npx.pid); waited += 50) {
        if (waited > drainMs + 10_000) {
          process.kill(-npx.pid, 'SIGKILL');
          return reject(new Error(`a process of npx outlived it:\n${out}`));
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      if (/"msg":"gatehouse stopped"/.test(out)) resolve();
      else reject(new Error(`the gateway did not stop gracefully:\n${out}`));
    });
  });
}

async function tryInstall(name, spec) {
  const started = Date.now();
  const project = join(scratch, name);
  mkdirSync(project);
  sh('npm', ['init', '-y'], project);
  sh('npm', ['install', '--no-audit', '--no-fund', spec, 'koa', 'koa-mount'], project);
  cpSync(join(project, 'node_modules', 'gatehouse', 'config'), join(project, 'config'), { recursive: true });
  if (!/config: OK/.test(sh('npx', ['gatehouse', 'check', 'config'], project))) throw new Error(`${name}: gatehouse check failed`);
  for (const [file, code] of [
    ['use.cjs', "const g = require('gatehouse'); if (typeof g.createGatehouse !== 'function') process.exit(1);"],
    ['use.mjs', "import { createGatehouse } from 'gatehouse'; if (typeof createGatehouse !== 'function') process.exit(1);"],
  ]) {
    require('node:fs').writeFileSync(join(project, file), code);
    sh(process.execPath, [file], project);
  }
  await startAndStop(project);
  console.log(`${name}: installed, checked, required, imported, started and stopped through npx (${((Date.now() - started) / 1000).toFixed(0)} s)`);
}

async function main() {
  const [{ filename }] = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', scratch], root));
  await tryInstall('tarball', join(scratch, filename));
  await tryInstall('git-url', `git+file://${root}#${sh('git', ['rev-parse', 'HEAD'], root).trim()}`);
}

main()
  .catch((err) => {
    console.error(err.stderr ? `${err.message}\n${err.stderr}` : err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(scratch, { recursive: true, force: true }));
