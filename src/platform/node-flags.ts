/**
 * @module platform/node-flags
 * The flags node was started with, on its command line or in
 * NODE_OPTIONS: a V8 setting Gatehouse changes while it runs is left as
 * it is when node was given a flag of its own for it.
 */

/** Whether node was given an argument that `flag` matches, on its command line (`execArgv`) or in `NODE_OPTIONS`. */
export function nodeFlagGiven(
  flag: RegExp,
  execArgv: readonly string[] = process.execArgv,
  env = process.env,
): boolean {
  const given = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  return given.some((arg) => flag.test(arg));
}
