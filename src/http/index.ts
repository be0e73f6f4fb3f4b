/**
 * @module http
 * The HTTP conventions every module shares: the error middleware and the
 * error body (the errors themselves are declared in src/errors), content
 * negotiation, canonical slashes, collection queries, absolute URLs, JSON
 * bodies, raw header lines and header text, hop-by-hop headers, transfer
 * codings, router dispatch, request paths, protocol upgrades, query
 * arguments and the Koa accessors the hot path uses.
 *
 * Each name is exported on its own: `export *` compiles to one getter shared
 * by every name, whose lookup V8 cannot specialise, and the hot path calls
 * through these getters on every request.
 */
export {
  statusLine,
  errorBody,
  statusOf,
  HttpError,
  ERRORS,
  type ErrorCode,
  type ErrorBody,
  type HttpErrorOptions,
} from '../errors';
export {
  setFormattedBody,
  setWrittenBody,
  createFormatterRegistry,
  xmlElement,
  jsonFormatter,
  XML_DECLARATION,
  xmlFormatter,
  type Formatter,
  type FormatterRegistry,
} from './response/formatters';
export {
  errorResponder,
  errorHandler,
  answeringErrors,
  answeredError,
  UNEXPECTED_ERROR_LISTENER,
  type ErrorHandlerOptions,
  type ErrorResponder,
} from './error-handler';
export {
  varyOnAccept,
  isRepresentable,
  chooseFormatter,
  formatBody,
  representation,
  type RepresentationOptions,
} from './response/representation';
export {
  GrpcStatus,
  isGrpcRequest,
  grpcStatusOfHttp,
  encodeGrpcMessage,
  answerGrpcStatus,
} from './response/grpc-status';
export { serviceConventions, createServiceApp, type ServiceAppOptions } from './service-app';
export {
  parseListQuery,
  parseItemQuery,
  pickFields,
  matchesFilters,
  pageOf,
  DEFAULT_LIMIT,
  MAX_LIMIT,
  type CollectionSpec,
  type ListQuery,
  type Page,
} from './response/collection';
export { filterTypes, type FilterType } from './response/filters';
export { ListedHeadersResponse } from './response/listed-headers';
export { redirectToSlash } from './slashes';
export { undici, parseRawHeaders } from './undici';
export {
  basePath,
  requestHost,
  absoluteUrl,
  isHostPort,
  hostPort,
  redactAddress,
  unmappedAddress,
  ORIGINAL_PATH,
} from './request/urls';
export { recordMount } from './request/client-path';
export { cutShortBy, markCutShort, WRITE_TO, type CutShortBy, type SelfWritingBody } from './respond';
export {
  nestsDeeperThan,
  hasRequestBody,
  hasUnsizedBody,
  failRequestBody,
  bodyFailure,
  readJson,
  DEFAULT_BODY_LIMIT,
  DEFAULT_JSON_DEPTH,
} from './request/body';
export { repeatedHeader, headerText, headerName, headerCountRefusal, MAX_REQUEST_HEADERS } from './request/raw-headers';
export { HOP_BY_HOP_HEADERS, FRAMING_HEADERS, isHopByHop, connectionNamed } from './hop-by-hop';
export { protocolOf, type RequestProtocol } from './request/protocol';
export { hasOtherTransferCoding, transferCodingRefusal, OTHER_TRANSFER_CODING } from './request/transfer-coding';
export { routes, allowedMethods } from './router';
export { setPlainPath, setPath } from './request/request-path';
export { handOverUpgrade, upgradeHandover, upgradeProtocol, type UpgradeHandover } from './request/upgrade';
export { parseQuery, linearQuery } from './request/query';
export { leanKoa } from './lean-koa';
