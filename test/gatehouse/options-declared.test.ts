import assert from 'node:assert/strict';
import { parseCommandLine } from '../../src/cli/command-line';
import { serveUsage, startUsage } from '../../src/cli/usage';
import { DEFAULT_DATABASE_TIMEOUT_MS } from '../../src/bookings';
import { DEFAULT_FILE_SIZE_LIMIT } from '../../src/files';
import { DRAIN_DELAY_MS, KEEP_ALIVE_TIMEOUT_MS } from '../../src/gatehouse';
import {
  checkValue,
  commandOptions,
  OPTION_NAMES,
  OPTIONS,
  readOptions,
  resolveOptions,
  type Declaration,
  type OptionName,
} from '../../src/gatehouse/options';
import { MAX_CONNECTIONS, MAX_DESCRIPTOR_ENTRIES, MAX_MESSAGE_BYTES, REQUEST_TIMEOUT_MS } from '../../src/ratelimit';

function declared(name: OptionName): Declaration<unknown> {
  return OPTIONS[name];
}

/** The message of what `fn` throws. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail('nothing was refused');
}

/** Options read from their flag and from their variable alike: every one with both that takes a value. */
const BOTH = OPTION_NAMES.filter((name) => {
  const { flag, env, kind } = declared(name);
  return flag !== undefined && env !== undefined && !(kind.types.length === 1 && kind.types[0] === 'boolean');
});

describe('the options, each declared once', () => {
  it('refuse a wrong value in one shape, whether a flag or a variable gave it, and say the same of it from code', () => {
    const bad: [string, unknown][] = [
      ['-1', -1],
      ['1.5', 1.5],
      [' ', ' '],
    ];
    for (const name of BOTH) {
      const { flag, env, kind } = declared(name);
      for (const [text, value] of bad) {
        const command = declared(name).commands![0];
        if (command === 'check' || (kind.read!(text) !== undefined && kind.schema.safeParse(kind.read!(text)).success))
          continue;
        const fromFlag = refusal(() => parseCommandLine(command, [flag!, text]));
        const fromEnv = refusal(() => readOptions({}, { [env!]: text }, [name]));
        assert.equal(
          fromFlag,
          `${flag}: must be ${kind.must} (got ${kind.secret ? kind.secret(text) : JSON.stringify(text)})`,
        );
        assert.equal(fromEnv, fromFlag.replace(flag!, env!));
        if (kind.types.includes(typeof value)) {
          const fromCode = refusal(() => checkValue(name, value));
          assert.equal(fromCode.split(' (got ')[0], `${name}: must be ${kind.must}`);
        }
      }
    }
  });

  it('refuse a flag given no value in the same shape', () => {
    assert.equal(
      refusal(() => parseCommandLine('start', ['--port'])),
      '--port: must be an integer from 0 to 65535 (got nothing)',
    );
    assert.equal(
      refusal(() => parseCommandLine('start', ['--config='])),
      '--config: must be the name of a folder (got "")',
    );
  });

  it('are all in the help of start, each with its variable', () => {
    const help = startUsage();
    for (const name of commandOptions('start')) {
      const { flag, env } = declared(name);
      if (flag) assert.match(help, new RegExp(`^  ${flag}\\b`, 'm'), `${name}: ${flag}`);
      if (env) assert.ok(help.includes(flag ? `[${env}]` : `  ${env}`), `${name}: ${env}`);
    }
  });

  it('are in the help of serve when serve takes them, with the modules they are for', () => {
    const help = serveUsage();
    assert.match(help, /^ {2}--redis <url> {6}ratelimit only: /m);
    assert.match(help, /^ {21}hotel-booking, car-booking only: PostgreSQL/m);
    assert.doesNotMatch(help, /--trust-proxy|--tls-cert|--grpc-port/);
  });

  it('default to what each module uses when it is made alone', () => {
    const defaults = resolveOptions({}, {});
    assert.deepEqual(
      [
        defaults.drainDelayMs,
        defaults.keepAliveTimeoutMs,
        defaults.grpcMaxMessageBytes,
        defaults.grpcMaxConnections,
        defaults.grpcRequestTimeoutMs,
        defaults.maxDescriptorEntries,
        defaults.fileSizeLimit,
        defaults.databaseTimeoutMs,
      ],
      [
        DRAIN_DELAY_MS,
        KEEP_ALIVE_TIMEOUT_MS,
        MAX_MESSAGE_BYTES,
        MAX_CONNECTIONS,
        REQUEST_TIMEOUT_MS,
        MAX_DESCRIPTOR_ENTRIES,
        DEFAULT_FILE_SIZE_LIMIT,
        DEFAULT_DATABASE_TIMEOUT_MS,
      ],
    );
  });

  it('name each variable once, and each flag once', () => {
    const envs = OPTION_NAMES.flatMap((name) => declared(name).env ?? []);
    const flags = OPTION_NAMES.flatMap((name) => declared(name).flag ?? []);
    assert.equal(new Set(envs).size, envs.length);
    assert.equal(new Set(flags).size, flags.length);
  });

  it('read GRPC_PORT=false as no gRPC server, and LOG_LEVEL in any case', () => {
    const read = resolveOptions({}, { GRPC_PORT: 'false', LOG_LEVEL: 'WARN' });
    assert.deepEqual([read.grpcPort, read.logLevel], [false, 'warn']);
  });

  it('take the TLS files from their flags or variables, both or neither, naming the one missing', () => {
    assert.deepEqual(resolveOptions({}, { TLS_CERT: 'c.pem', TLS_KEY: 'k.pem' }).tls, { cert: 'c.pem', key: 'k.pem' });
    assert.equal(
      refusal(() => resolveOptions({}, { TLS_CERT: 'c.pem' })),
      'TLS_CERT: goes with TLS_KEY: a certificate and its key, both or neither',
    );
    // From code, the files given win, and the variables are not asked.
    assert.deepEqual(resolveOptions({ tls: { cert: 'a', key: 'b' } }, { TLS_CERT: 'c.pem' }).tls, {
      cert: 'a',
      key: 'b',
    });
  });
});
