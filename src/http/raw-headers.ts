/**
 * @module http/raw-headers
 * What a request's raw header lines say that `req.headers` hides: Node keeps
 * only the first line of a header such as `Host` or `Authorization`.
 */

/**
 * Every value of header `name` (lower case) when the request has more than
 * one line of it; undefined for none or one, the usual case, which allocates
 * nothing.
 */
export function repeatedHeader(rawHeaders: readonly string[], name: string): string[] | undefined {
  let found: string | undefined;
  let all: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i];
    if (raw.length !== name.length || raw.toLowerCase() !== name) continue;
    if (found === undefined) found = rawHeaders[i + 1];
    else (all ??= [found]).push(rawHeaders[i + 1]);
  }
  return all;
}
