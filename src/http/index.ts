/**
 * @module http
 * The HTTP conventions every module shares: the error registry and error
 * middleware, content negotiation, canonical slashes, collection queries,
 * absolute URLs, JSON bodies, raw header lines and header text, transfer
 * codings, router dispatch, request paths, protocol upgrades, query
 * arguments and the Koa accessors the hot path uses.
 */
export * from './errors';
export * from './formatters';
export * from './error-handler';
export * from './representation';
export * from './service-app';
export * from './collection';
export * from './filters';
export * from './slashes';
export * from './urls';
export * from './body';
export * from './raw-headers';
export * from './connection';
export * from './transfer-coding';
export * from './router';
export * from './request-path';
export * from './upgrade';
export * from './query';
export * from './lean-koa';
