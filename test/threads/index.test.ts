/**
 * Starting a thread from Gatehouse's sources: the TypeScript module runs
 * under tsx with the options it was given, and a module that is not there
 * ends the thread with an error rather than the process.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../../src/threads';

/** The first message from `thread`, or its error, then waits for it to end. */
async function firstWord(thread: Worker): Promise<unknown> {
  const ended = once(thread, 'exit');
  try {
    const [message] = (await Promise.race([
      once(thread, 'message'),
      once(thread, 'error').then(([err]) => {
        throw err;
      }),
    ])) as [unknown];
    return message;
  } finally {
    await ended;
  }
}

describe('threads', function () {
  it('starts a TypeScript module from the sources with the data it was given', async () => {
    const thread = startThread(join(__dirname, '..', 'support', 'echo-thread'), { workerData: { greeting: 'hello' } });
    assert.equal(await firstWord(thread), 'hello, from a thread');
  });

  it('ends the thread, not the process, when the module is not there', async () => {
    const thread = startThread(join(__dirname, '..', 'support', 'absent-thread'));
    await assert.rejects(firstWord(thread), /Cannot find module/);
  });
});
