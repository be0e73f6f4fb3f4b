/**
 * @module test/support/limits-file
 * A throwaway config folder holding one `ratelimit.yaml`, and what loading
 * it says.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LimitsConfigError, loadLimitsDir } from '../../src/ratelimit';

/**
 * Runs `use` on a new folder whose `ratelimit.yaml` holds `text`, and removes
 * the folder once `use` is done: when it returns, or when the promise it
 * returns settles.
 */
export function withLimitsFile<T>(text: string, use: (dir: string) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-limits-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  let result: T;
  try {
    writeFileSync(path.join(dir, 'ratelimit.yaml'), text);
    result = use(dir);
  } catch (err) {
    remove();
    throw err;
  }
  if (result instanceof Promise) return result.finally(remove) as T;
  remove();
  return result;
}

/** The message a `ratelimit.yaml` holding `text` is refused with; fails when it loads. */
export function limitsRefusal(text: string): string {
  try {
    withLimitsFile(text, loadLimitsDir);
  } catch (err) {
    assert.ok(err instanceof LimitsConfigError, String(err));
    return err.message;
  }
  assert.fail('the file was accepted');
}
