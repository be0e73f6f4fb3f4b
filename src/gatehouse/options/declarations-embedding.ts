/**
 * @module gatehouse/options/declarations-embedding
 * The options only an app that embeds Gatehouse sets, in code: no flag and no
 * environment variable. They are declared as every option is
 * (./declaration), and taken into the one list of options (./declarations).
 */
import { fileSystemSource } from '../../files';
import { abortSignal, boundPorts, configSource, logger, modules } from './code-values';
import { option } from './declaration';
import { dnsDomain, milliseconds, text } from './kinds';

export const EMBEDDING_OPTIONS = {
  logger: option({ kind: logger, shown: 'pino at `logLevel`', help: 'the logger' }),
  reloadDebounceMs: option({
    kind: milliseconds(0),
    default: 200,
    help: 'how long after the last change in the folder a reload starts, in ms',
  }),
  annotationDomain: option({
    kind: dnsDomain('gatehouse.io'),
    default: 'gatehouse.io',
    help: 'the domain of the <domain>/config annotation',
  }),
  sourceCluster: option({
    kind: text('a name', '<name>'),
    shown: 'gatehouse',
    help: "the value of source_cluster rate-limit labels, as Envoy's --service-cluster",
    more: "(Emissary's is `<ambassador_id>-<namespace>`)",
  }),
  modules: option({
    kind: modules,
    default: [],
    shown: 'none',
    help: "an embedding app's own modules",
    more: '([embedding.md](embedding.md))',
  }),
  configSource: option({
    kind: configSource,
    default: fileSystemSource,
    shown: 'the file system',
    help: "where the config folder's files are read from",
    more: '([embedding.md](embedding.md))',
  }),
  ports: option({
    kind: boundPorts,
    shown: 'bound by `start()`',
    help: 'ports bound beforehand with bindPort(), which start() serves on: {http, grpc}',
    more: '(a process that binds them first learns that one is taken before it opens its database)',
  }),
  signal: option({
    kind: abortSignal,
    help: 'createGatehouse() gives up when it is aborted, closes what it opened and rejects',
  }),
};
