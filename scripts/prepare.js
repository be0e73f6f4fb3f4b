#!/usr/bin/env node
/**
 * @module scripts/prepare
 * npm's `prepare` (run by `npm install` and `npm ci` in a checkout, by npm in
 * the clone of a git URL it installs, and before `npm pack`): builds `dist/`,
 * which `npm start`, the `gatehouse` command and the package run. Plain
 * JavaScript, since it runs where TypeScript may not be installed.
 *
 * Without TypeScript (a devDependency: `npm ci --omit=dev`), a `dist/` built
 * before is kept, as a production install after a full one expects; with none
 * it fails, rather than leave a checkout whose `npm start` cannot run. Run for
 * a project that installs this checkout's folder (`npm install
 * /path/to/gatehouse`, which links the folder as it is, and installs no dev
 * dependency in it), it says to run `npm install` in the checkout first.
 */
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join, resolve } = require('node:path');

const root = join(__dirname, '..');
const manifest = require(join(root, 'package.json'));
const built = [manifest.main, manifest.types, ...Object.values(manifest.bin)].every((file) =>
  existsSync(join(root, file)),
);
const packing = process.env.npm_command === 'pack' || process.env.npm_command === 'publish';
// npm runs a linked folder's prepare from the project that installs it: INIT_CWD is that project.
const linked = process.env.INIT_CWD !== undefined && resolve(process.env.INIT_CWD) !== resolve(root);

let typescript = true;
try {
  require.resolve('typescript', { paths: [root] });
} catch {
  typescript = false;
}

if (typescript) {
  // The build `npm run build` does, through the npm that runs this script.
  const npm = process.env.npm_execpath;
  execFileSync(npm ? process.execPath : 'npm', [...(npm ? [npm] : []), 'run', 'build'], {
    cwd: root,
    stdio: 'inherit',
  });
} else if (built && !packing) {
  console.log('gatehouse: TypeScript is not installed (a production install): dist/ is kept as it was built');
} else {
  console.error(
    packing
      ? 'gatehouse: building dist/ for the package needs TypeScript: run npm install first'
      : linked
        ? `gatehouse: ${root} is installed as a folder, which npm links as it is, without its dev dependencies: ` +
          `run npm install in ${root} first (it builds dist/), then install the folder again; or install the tarball npm pack makes there`
        : 'gatehouse: dist/ is not built, and building it needs TypeScript, a devDependency: run npm install (or npm ci) ' +
          'with the dev dependencies first; npm ci --omit=dev afterwards keeps dist/',
  );
  process.exit(1);
}
