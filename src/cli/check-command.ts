/**
 * @module cli/check-command
 * `gatehouse check [dir]`: the command line of a check (the folder given
 * as the argument or as `--config`, the way a start is given it).
 */
import { commandOptions } from '../gatehouse/options';
import { parseCommandLine, readCommandOptions, UsageError } from './command-line';
import { print, shown } from './output';
import { checkUsage } from './usage';

type Check = typeof import('./check');

/** Runs `gatehouse check`; resolves 0 for a folder that can be served, 1 for one that cannot. */
export async function check(args: readonly string[]): Promise<number> {
  const line = parseCommandLine('check', args);
  if (line.help) return print(checkUsage());
  if (line.positionals.length > 1) throw new UsageError('check takes one folder');
  const folder = line.positionals[0];
  if (folder !== undefined && line.values.configDir !== undefined)
    throw new UsageError('give check its folder once: as [dir] or as --config <dir>');
  if (folder?.trim() === '') throw new UsageError('check needs a folder name, not an empty one');
  const { values } = readCommandOptions(line, commandOptions('check'));
  const { checkFolder } = require('./check') as Check;
  const report = await checkFolder(folder ?? values.configDir!, {
    fileSizeLimit: values.fileSizeLimit,
    ambassadorId: values.ambassadorId,
  });
  if (report.ok) process.stdout.write(shown(report.text));
  else process.stderr.write(shown(report.text));
  return report.ok ? 0 : 1;
}
