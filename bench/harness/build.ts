/**
 * @module bench/harness/build
 * The Gatehouse rows run the compiled dist/, as `npm start` is meant to: it is
 * built (`npm run build`) when missing or older than a file of src/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function mtimes(dir: string, ending: string, pick: (a: number, b: number) => number, start: number): number {
  let result = start;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) result = pick(result, mtimes(path, ending, pick, start));
    else if (entry.name.endsWith(ending)) result = pick(result, statSync(path).mtimeMs);
  }
  return result;
}

/** Builds dist/ unless every compiled file is newer than every source file. Returns whether it built. */
export function ensureBuilt(root: string): boolean {
  const dist = join(root, 'dist');
  const fresh =
    existsSync(join(dist, 'cli', 'main.js')) &&
    mtimes(dist, '.js', Math.min, Infinity) >= mtimes(join(root, 'src'), '.ts', Math.max, 0);
  if (fresh) return false;
  process.stderr.write('dist/ is missing or older than src/: npm run build\n');
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (build.status !== 0)
    throw new Error(
      `npm run build failed (${build.status ?? build.signal}): the Gatehouse rows run the compiled dist/`,
    );
  return true;
}
