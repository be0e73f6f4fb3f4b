/**
 * @module test/support/printed-output
 * What an example's shown output promises, held against what it printed:
 * whole lines of output with `…`, `...` and `<placeholders>` standing for
 * what varies, and the claims of a curl command's comment (its status, the
 * `Name: value` headers, the JSON bodies and `"quoted"` texts it names).
 */
import assert from 'node:assert/strict';

/**
 * What stands for text that varies between runs: `…` and `...` (an id, the
 * rest of a body), `<new id>`-like placeholders; and the seconds left in a
 * rate-limit window, which count down: the `t=` of a `RateLimit` header and
 * a `Retry-After`.
 */
const VARYING = /…|\.\.\.|<[a-z][a-z ]*>|(?<=;t=)\d+|(?<=^Retry-After: )\d+/g;

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The pattern a shown text stands for: its varying parts match anything, the rest itself. */
export function shownPattern(shown: string): RegExp {
  let source = '';
  let last = 0;
  for (const m of shown.matchAll(VARYING)) {
    source += escape(shown.slice(last, m.index));
    source += /^\d+$/.test(m[0]) ? '\\d+' : '[^]*?';
    last = m.index + m[0].length;
  }
  return new RegExp(`^${source}${escape(shown.slice(last))}$`);
}

/** Asserts that `actual` is what `shown` shows, line by line, trailing spaces aside. */
export function assertLines(actual: string, shown: readonly string[], what: string): void {
  const lines = actual
    .replace(/\s+$/, '')
    .split('\n')
    .map((l) => l.trimEnd());
  const wanted = shown.map((l) => l.trimEnd());
  const ok = lines.length === wanted.length && wanted.every((w, i) => shownPattern(w).test(lines[i]));
  assert.ok(ok, `${what}: printed\n${lines.join('\n')}\nwhere the docs show\n${wanted.join('\n')}`);
}

/** An HTTP response as `curl -i` prints it. */
export interface Printed {
  readonly status: number;
  /** The header lines as received. */
  readonly headers: readonly string[];
  readonly body: string;
}

/** Reads `curl -i` output; a `100 Continue` before the answer is skipped. */
export function parsePrinted(output: string): Printed {
  let rest = output;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) throw new Error(`not an HTTP response:\n${output}`);
    const [statusLine, ...headers] = rest.slice(0, end).split('\r\n');
    const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(statusLine)?.[1]);
    rest = rest.slice(end + 4);
    if (status !== 100) return { status, headers, body: rest };
  }
}

/** The balanced `{...}` parts of a text. */
function jsonParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '{') {
      if (depth++ === 0) start = i;
    } else if (text[i] === '}' && depth > 0 && --depth === 0) parts.push(text.slice(start, i + 1));
  }
  return parts;
}

/** A `Name: value` a comment shows: the value ends at the line's end, two spaces, or a `, "` before more of the body. */
const HEADER_CLAIM = /(?<![\w-])([A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*): (.+?)(?=, "|\s{2,}|$)/gm;
/** A `"quoted"` text, or a `"key":"value"` pair of a JSON body. */
const QUOTED_CLAIM = /"[^"\n]*"(?::(?:"[^"\n]*"|[\w.-]+))?/g;

/** What a curl command's comment says of its answer. */
export interface Claims {
  /** The status it leads with, if any. */
  readonly status?: number;
  readonly headers: readonly string[];
  readonly bodies: readonly string[];
  readonly quoted: readonly string[];
}

/** Reads the claims of a comment: `200 {...}`, `401 WWW-Authenticate: Basic realm="gatehouse"`, `201, Location: ..., "status":"confirmed"`. */
export function claimsOf(comment: string): Claims {
  const status = /^(\d{3})\b/.exec(comment)?.[1];
  let rest = comment;
  const bodies = jsonParts(rest);
  for (const b of bodies) rest = rest.replace(b, ' ');
  const headers: string[] = [];
  rest = rest.replace(HEADER_CLAIM, (whole) => {
    headers.push(whole);
    return ' ';
  });
  const quoted = [...rest.matchAll(QUOTED_CLAIM)].map((m) => m[0]);
  return { status: status === undefined ? undefined : Number(status), headers, bodies, quoted };
}

/** Asserts that an answer keeps the promises of its comment; with no status shown, it must be a success. */
export function assertClaims(printed: Printed, comment: string, what: string): void {
  const claims = claimsOf(comment);
  const context = `${what}\n# ${comment}\nanswered:\n${printed.status}\n${printed.headers.join('\n')}\n\n${printed.body}`;
  if (claims.status !== undefined) assert.equal(printed.status, claims.status, context);
  else assert.ok(printed.status >= 200 && printed.status < 300, context);
  for (const header of claims.headers) {
    assert.ok(
      printed.headers.some((h) => shownPattern(header).test(h)),
      `no header line ${header}: ${context}`,
    );
  }
  for (const body of claims.bodies) assert.match(printed.body.trim(), shownPattern(body), context);
  for (const text of claims.quoted)
    assert.ok(printed.body.includes(text), `the body does not hold ${text}: ${context}`);
}
