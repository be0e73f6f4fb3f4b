/**
 * @module gatehouse/options/code-values
 * The kinds of the options only code can give (modules, a logger, a source
 * of config files, TLS files, bound ports, an abort signal), checked at run
 * time for callers from JavaScript, whom no compiler tells of a module
 * without a name or a logger without its methods. Each refusal names the
 * part at fault: `modules[1].app: must be a Koa app (got a number)`.
 */
import type { ConfigFileSource } from '../../files';
import type { GatehouseModule } from '../../gateway';
import type { BoundPort } from '../../ports';
import type { Logger } from '../../telemetry';
import type { TlsFiles } from '../serving/tls-files';
import { codeValue, shownValue, typeOf } from './kinds';

/** A TypeError in the shape of every refusal of an option. */
function refused(name: string, must: string, value: unknown): TypeError {
  return new TypeError(`${name}: must be ${must} (got ${shownValue(value)})`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Throws unless `value` has each of `methods`. */
function checkMethods(value: Record<string, unknown>, name: string, must: string, methods: readonly string[]): void {
  const missing = methods.filter((method) => typeof value[method] !== 'function');
  if (missing.length > 0)
    throw new TypeError(`${name}: must be ${must}, with ${methods.join(', ')} (it has no ${missing.join(', ')})`);
}

/** Whether `value` is a Koa app (or one like it): what the gateway calls on a module's app. */
function isKoaApp(value: unknown): boolean {
  const app = value as { callback?: unknown; middleware?: unknown } | null;
  return typeof app === 'object' && app !== null && typeof app.callback === 'function' && Array.isArray(app.middleware);
}

/** Throws naming `at` when `module` is no module: a name, and an app, mounts and methods of the right kinds. */
function checkModule(module: unknown, at: string): void {
  if (!isObject(module)) throw refused(at, 'a module (an object with a name)', module);
  if (typeof module.name !== 'string' || module.name === '')
    throw refused(`${at}.name`, 'a string that is not empty', module.name);
  if (module.app !== undefined && !isKoaApp(module.app)) throw refused(`${at}.app`, 'a Koa app', module.app);
  if (module.mounts !== undefined) {
    if (!isObject(module.mounts)) throw refused(`${at}.mounts`, 'an object of Koa apps by prefix', module.mounts);
    for (const [prefix, app] of Object.entries(module.mounts))
      if (!isKoaApp(app)) throw refused(`${at}.mounts['${prefix}']`, 'a Koa app', app);
  }
  for (const method of ['reload', 'close', 'authenticate', 'shouldRateLimit'] as const) {
    if (module[method] !== undefined && typeof module[method] !== 'function')
      throw refused(`${at}.${method}`, 'a function', module[method]);
  }
}

/** An embedding app's modules: each checked, and no two of one name, of which the gateway would route to the last alone. */
export const modules = codeValue<readonly GatehouseModule[]>('a list of modules', ['array'], (list, name) => {
  const seen = new Map<string, number>();
  list.forEach((module, index) => {
    checkModule(module, `${name}[${index}]`);
    const first = seen.get(module.name);
    if (first !== undefined)
      throw new TypeError(
        `${name}[${index}].name: must be a name of its own ('${module.name}' is the name of ${name}[${first}] too)`,
      );
    seen.set(module.name, index);
  });
});

/** The PEM files of an HTTPS server, `{cert, key}`. */
export const tlsFiles = codeValue<TlsFiles>(
  'the paths of a PEM certificate and key, {cert, key}',
  ['object'],
  (tls, name) => {
    for (const part of Object.keys(tls)) {
      if (part !== 'cert' && part !== 'key')
        throw new TypeError(
          `${name}.${part}: there is no such option; ${name} has cert and key, the paths of the PEM files`,
        );
    }
    const files = tls as unknown as Record<string, unknown>;
    for (const part of ['cert', 'key']) {
      if (typeof files[part] !== 'string' || files[part] === '')
        throw refused(`${name}.${part}`, 'the path of a PEM file', files[part]);
    }
  },
);

export const logger = codeValue<Logger>('a pino logger', ['object'], (value, name) =>
  checkMethods(value as unknown as Record<string, unknown>, name, 'a pino logger', ['child', 'info', 'warn', 'error']),
);

export const configSource = codeValue<ConfigFileSource>('a source of config files', ['object'], (value, name) =>
  checkMethods(value as unknown as Record<string, unknown>, name, 'a source of config files', ['list', 'read']),
);

/** Ports bound beforehand, for `start()` to serve on. */
export interface BoundPorts {
  /** The HTTP(S) port. */
  http?: BoundPort;
  /** The gRPC rate-limit port. */
  grpc?: BoundPort;
}

/** Whether `value` is what `bindPort` resolves. */
function isBoundPort(value: unknown): boolean {
  return isObject(value) && typeof value.port === 'number' && Array.isArray(value.listeners);
}

export const boundPorts = codeValue<BoundPorts>(
  '{http, grpc}, each a port bound with bindPort()',
  ['object'],
  (value, name) => {
    for (const [part, port] of Object.entries(value)) {
      if (part !== 'http' && part !== 'grpc')
        throw new TypeError(`${name}.${part}: there is no such option; ${name} has http and grpc`);
      if (port !== undefined && !isBoundPort(port))
        throw refused(`${name}.${part}`, 'a port bound with bindPort()', port);
    }
  },
);

export const abortSignal = codeValue<AbortSignal>('an AbortSignal', ['object'], (value, name) => {
  if (typeOf((value as { aborted?: unknown }).aborted) !== 'boolean' || typeof value.addEventListener !== 'function')
    throw refused(name, 'an AbortSignal', value);
});
