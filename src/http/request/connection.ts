/**
 * @module http/request/connection
 * The `Connection` header of a request: the header names it lists besides
 * the connection options, which make those headers hop-by-hop.
 */

/** Connection options that name no header. */
const OPTIONS = new Set(['', 'close', 'keep-alive', 'upgrade', 'connection']);

/** The header names a `Connection` value lists, lower-case, besides the connection options; null when none. */
export function connectionNamed(value: string | string[] | undefined): string[] | null {
  if (value === undefined || isPlainOption(value)) return null;
  const text = (Array.isArray(value) ? value.join(',') : value).toLowerCase();
  let named: string[] | null = null;
  for (const token of text.split(',')) {
    const name = token.trim();
    if (!OPTIONS.has(name)) (named ??= []).push(name);
  }
  return named;
}

/** `keep-alive` or `close` as clients write them: the common case, told without allocating. */
function isPlainOption(value: string | string[]): boolean {
  return value === 'keep-alive' || value === 'close' || value === 'Keep-Alive' || value === 'Close';
}
