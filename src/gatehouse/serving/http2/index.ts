/**
 * @module gatehouse/serving/http2
 * HTTP/2 beside HTTP/1.1 on a listener: the connections handed to it, the
 * requests and answers of its streams as the app reads and writes HTTP/1.1
 * ones, and the bounds of each connection.
 */
export { createHttp2Serving, type Http2Serving, type Http2ServingOptions } from './server';
export {
  http2ServerOptions,
  maxHeaderListSize,
  MAX_CONCURRENT_STREAMS,
  MAX_SESSION_MEMORY_MIB,
  type Http2Limits,
} from './limits';
export { Http2Request } from './request';
export { Http2Response } from './response';
