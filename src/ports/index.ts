/**
 * @module ports
 * Listening ports bound ahead of their servers, so that a port in use is
 * found before a start does anything lasting.
 */
export { bindPort, type BindOptions, type BoundListener, type BoundPort } from './bound-port';
export { listenOptions, supportsReusePort, type ListenAt } from './listen-at';
