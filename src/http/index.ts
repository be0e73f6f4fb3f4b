/**
 * @module http
 * The HTTP conventions every module shares: the error registry and error
 * middleware, content negotiation, canonical slashes, collection queries,
 * absolute URLs, JSON bodies, raw header lines and header text, transfer
 * codings, router dispatch, request paths, protocol upgrades, query
 * arguments and the Koa accessors the hot path uses.
 */
export * from './errors';
export * from './response/formatters';
export * from './error-handler';
export * from './response/representation';
export * from './service-app';
export * from './response/collection';
export * from './response/filters';
export * from './slashes';
export * from './request/urls';
export * from './request/body';
export * from './request/raw-headers';
export * from './request/connection';
export * from './request/transfer-coding';
export * from './router';
export * from './request/request-path';
export * from './request/upgrade';
export * from './request/query';
export * from './lean-koa';
