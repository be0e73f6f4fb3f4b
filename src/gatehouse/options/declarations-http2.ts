/**
 * @module gatehouse/options/declarations-http2
 * The options of HTTP/2 on the gateway's port, declared as every option is
 * (./declaration), and taken into the one list of options (./declarations)
 * where the other options of the HTTP port are.
 */
import { option } from './declaration';
import { boolean, integer } from './kinds';

export const HTTP2_OPTIONS = {
  http2: option({
    kind: boolean,
    flag: '--no-http2',
    flagSets: false,
    env: 'HTTP2',
    default: true,
    help: 'serve HTTP/2 beside HTTP/1.1: h2c with prior knowledge on a cleartext port, h2 by ALPN over TLS',
    flagHelp: 'serve HTTP/1.1 alone: no h2c, and only http/1.1 offered by ALPN',
    more: '([HTTP/2](#http2))',
    commands: ['start'],
  }),
  http2MaxConcurrentStreams: option({
    kind: integer(1, 2 ** 31 - 1, 'streams'),
    flag: '--http2-max-concurrent-streams',
    env: 'HTTP2_MAX_CONCURRENT_STREAMS',
    default: 100,
    help: 'the most requests one HTTP/2 connection may have open at once; a client queues the next',
    commands: ['start'],
  }),
  http2MaxSessionMemory: option({
    kind: integer(1, 1024, 'MiB'),
    flag: '--http2-max-session-memory',
    env: 'HTTP2_MAX_SESSION_MEMORY',
    default: 10,
    help: 'what one HTTP/2 connection may hold in memory, in MiB; past it, its new requests are refused',
    commands: ['start'],
  }),
};
