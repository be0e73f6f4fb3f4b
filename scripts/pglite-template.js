#!/usr/bin/env node
/**
 * @module scripts/pglite-template
 * The last step of `npm run build`: makes the ready-made bookings database
 * (prebuilt/pglite-<version>.tar.gz, shipped with the package) for the
 * installed PGlite, unless it is there already, and removes those of other
 * releases. A first start unpacks it instead of running initdb
 * (src/bookings/database/template.ts says why). Plain JavaScript over the
 * compiled dist/, which the build has just made.
 */
'use strict';
const { existsSync, mkdirSync, readdirSync, rmSync } = require('node:fs');
const { join } = require('node:path');

const { PREBUILT_FOLDER, makeTemplate, templateName } = require('../dist/bookings/database/template.js');

async function main() {
  const name = templateName();
  mkdirSync(PREBUILT_FOLDER, { recursive: true });
  for (const other of readdirSync(PREBUILT_FOLDER)) {
    if (/^pglite-.*\.tar\.gz/.test(other) && other !== name) rmSync(join(PREBUILT_FOLDER, other), { force: true });
  }
  const file = join(PREBUILT_FOLDER, name);
  if (existsSync(file)) return;
  process.stdout.write(`making ${file}: a new database for the first start to copy\n`);
  await makeTemplate(file);
}

main().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
