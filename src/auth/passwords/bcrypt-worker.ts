/**
 * @module auth/passwords/bcrypt-worker
 * The code a bcrypt thread runs, and the answer it posts for each check.
 */

/**
 * What each thread runs: plain JavaScript passed with `eval`, so that it works
 * alike under tsx, from the compiled files and inside another application,
 * none of which has a worker file at a path known here. bcryptjs comes by the
 * absolute path the pool resolves it to.
 */
export const WORKER_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptjs);
// Linux sets a nice value per thread; elsewhere it would be the whole process's.
if (workerData.niceness > 0 && process.platform === 'linux') {
  try {
    require('node:os').setPriority(0, workerData.niceness);
  } catch {}
}
parentPort.on('message', (job) => {
  let answer;
  try {
    answer = { ok: bcrypt.compareSync(job.password, job.hash) };
  } catch (err) {
    answer = { error: String((err && err.message) || err) };
  }
  parentPort.postMessage(answer);
});
`;

/** What a thread posts for one check: whether the password matched, or why it could not tell. */
export type Answer = { ok: boolean } | { error: string };
