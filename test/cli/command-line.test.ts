import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { parseCommandLine, UsageError } from '../../src/cli/command-line';
import { OptionError } from '../../src/gatehouse/options';

describe("a command's flags", () => {
  it('take the next argument as the value, whatever it starts with, and refuse a port of -1 in their own words', () => {
    assert.throws(
      () => parseCommandLine('start', ['--port', '-1']),
      (err: Error) =>
        err instanceof OptionError &&
        err.onCommandLine &&
        err.message === '--port: must be an integer from 0 to 65535 (got "-1")',
    );
    assert.deepEqual(parseCommandLine('start', ['--host', '-h-']).values, { host: '-h-' });
  });

  it('take a value after = too, and read it through the option it is for', () => {
    const line = parseCommandLine('start', ['--port=9000', '--body-limit', '4k', '--config=cfg', '--trust-proxy']);
    assert.deepEqual(line.values, { port: 9000, bodyLimit: 4096, configDir: resolve('cfg'), trustProxy: true });
    assert.equal(line.flags.get('bodyLimit'), '--body-limit');
  });

  it('set a boolean by the flag alone: --no-watch turns watching off, and a value is refused', () => {
    assert.deepEqual(parseCommandLine('serve', ['api', '--no-watch']).values, { watch: false });
    assert.throws(() => parseCommandLine('start', ['--trust-proxy=yes']), {
      name: 'UsageError',
      message: '--trust-proxy: takes no value (got "yes")',
    });
  });

  it('refuse a flag the command does not take, naming the command', () => {
    assert.throws(() => parseCommandLine('start', ['--verbose']), { message: 'start has no option --verbose' });
    assert.throws(
      () => parseCommandLine('check', ['--port', '1']),
      (err: Error) => err instanceof UsageError,
    );
  });

  it('answer --help wherever it is, before anything after it is read', () => {
    assert.equal(parseCommandLine('start', ['--port', 'x', '--help']).help, true);
    assert.equal(parseCommandLine('serve', ['-h']).help, true);
  });

  it('keep the arguments, and every one after -- as an argument', () => {
    const line = parseCommandLine('check', ['cfg', '--', '--config']);
    assert.deepEqual(line.positionals, ['cfg', '--config']);
    assert.deepEqual(line.values, {});
  });
});
