#!/usr/bin/env node
/**
 * @module scripts/try-installs
 * Runs the install commands of docs/install.md (its `sh try-installs`
 * block), each `npm install` in a scratch project of its own, as a user
 * would: of the tarball `npm pack` makes here, of a git URL (this
 * checkout's last commit, as `git+file://`: the same clone, dev install,
 * build and pack npm does for any git URL), and of this checkout's folder
 * (where `npm install` has run, as the docs say). Then, in each, the block's other
 * commands: its `cp`, and `npx gatehouse start` answering a request until
 * SIGTERM to npx; and `npx gatehouse check`, `require` and `import` of the
 * package. Needs the npm registry; takes a minute or more, so the suite does
 * not run it (it tests the packed package offline, and that the block reads
 * as this script reads it). Run `npm install` first.
 *
 *   node scripts/try-installs.js
 */
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { mkdirSync, mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const root = join(__dirname, '..');

/** What the docs write for the package to install: the tarball's path, the git URL and a checkout's folder, replaced by real ones. */
const SHOWN = {
  tarball: '/path/to/gatehouse-0.1.0.tgz',
  git: 'git+https://<host>/<you>/gatehouse.git',
  folder: '/path/to/gatehouse',
};

/**
 * The commands of docs/install.md's `sh try-installs` block, without their
 * comments: `installs`, each an install path (the `npm install` lines, by
 * what they install), and `then`, the commands run after any of them.
 */
function docsCommands(text = readFileSync(join(root, 'docs', 'install.md'), 'utf8')) {
  const block = /^```sh try-installs\n([^]*?)^```$/m.exec(text);
  if (!block) throw new Error('docs/install.md has no sh try-installs block');
  const commands = block[1]
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
  const installs = {};
  const then = [];
  for (const command of commands) {
    const kind = Object.keys(SHOWN).find(
      (k) => command.startsWith('npm install ') && command.includes(` ${SHOWN[k]} `),
    );
    if (kind) installs[kind] = command;
    else then.push(command);
  }
  return { installs, then };
}

/** A user's environment: nothing of the npm script this may run in. */
const env = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.startsWith('npm_') && name !== 'NODE_OPTIONS'),
);

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

async function tryInstall(scratch, name, spec, commands) {
  const started = Date.now();
  const project = join(scratch, name);
  mkdirSync(project);
  sh('npm', ['init', '-y'], project);
  sh(
    'sh',
    [
      '-c',
      commands.installs[name].replace(SHOWN[name], spec).replace(/^npm install /, 'npm install --no-audit --no-fund '),
    ],
    project,
  );
  for (const command of commands.then) {
    if (command === 'npx gatehouse start') await startAndStop(project);
    else sh('sh', ['-c', command], project);
  }
  if (!/config: OK/.test(sh('npx', ['gatehouse', 'check', 'config'], project)))
    throw new Error(`${name}: gatehouse check failed`);
  for (const [file, code] of [
    ['use.cjs', "const g = require('gatehouse'); if (typeof g.createGatehouse !== 'function') process.exit(1);"],
    [
      'use.mjs',
      "import { createGatehouse } from 'gatehouse'; if (typeof createGatehouse !== 'function') process.exit(1);",
    ],
  ]) {
    require('node:fs').writeFileSync(join(project, file), code);
    sh(process.execPath, [file], project);
  }
  console.log(
    `${name}: installed, copied its config, started and stopped through npx, checked, required and imported (${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
}

async function main() {
  const commands = docsCommands();
  if (
    !commands.installs.tarball ||
    !commands.installs.git ||
    !commands.installs.folder ||
    !commands.then.includes('npx gatehouse start')
  ) {
    throw new Error(`docs/install.md's block is not what this script runs: ${JSON.stringify(commands)}`);
  }
  const scratch = mkdtempSync(join(tmpdir(), 'gatehouse-installs-'));
  try {
    const [{ filename }] = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', scratch], root));
    await tryInstall(scratch, 'tarball', join(scratch, filename), commands);
    await tryInstall(scratch, 'git', `git+file://${root}#${sh('git', ['rev-parse', 'HEAD'], root).trim()}`, commands);
    await tryInstall(scratch, 'folder', root, commands);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

module.exports = { docsCommands };

if (require.main === module) {
  main().catch((err) => {
    console.error(err.stderr ? `${err.message}\n${err.stderr}` : err);
    process.exitCode = 1;
  });
}
