#!/usr/bin/env node
// The installed `gatehouse` command: runs the TypeScript sources through tsx.
'use strict';
require('tsx/cjs');
require('./main.ts')
  .main(process.argv.slice(2))
  .then((code) => {
    if (typeof code === 'number') process.exitCode = code;
  });
