/**
 * @module test/platform/pino
 * What src/platform/pino relies on in pino, checked against the pino
 * installed: a line made of the logger's time field and bindings is the
 * line pino writes.
 */
import pino from 'pino';
import { loggerBindingsText, loggerDestination, loggerTimeField, PINO_VERSION } from '../../src/platform';
import { pinnedAt, relies } from '../support/reliance';

const rely = (what: string, holds: boolean, detail?: string) => relies('pino', PINO_VERSION, what, holds, detail);

describe('platform/pino: what Gatehouse relies on in pino', () => {
  it('is the pino it was written against', () => pinnedAt('pino', PINO_VERSION));

  it("reads a logger's destination, time field and bindings, from which pino's own line is made", () => {
    const written: string[] = [];
    const destination = { write: (line: string) => void written.push(line) };
    const logger = pino({ name: 'gatehouse', timestamp: () => ',"time":"2030-01-01T00:00:00.000Z"' }, destination);
    rely('keeps the destination given (symbols.streamSym)', loggerDestination(logger) === destination);
    const time = loggerTimeField(logger);
    rely(
      'keeps the timestamp function (symbols.timeSym)',
      typeof time === 'function' && time() === ',"time":"2030-01-01T00:00:00.000Z"',
    );
    const bindings = loggerBindingsText(logger);
    rely(
      'keeps its bindings as JSON text (symbols.chindingsSym)',
      typeof bindings === 'string' && bindings.includes('"name":"gatehouse"'),
      String(bindings),
    );
    logger.info({ status: 200 }, 'request');
    const made = `{"level":30${time()}${bindings},"status":200,"msg":"request"}\n`;
    rely('writes a line as level, time, bindings, fields and msg', written[0] === made, `${written[0]} vs ${made}`);
  });
});
