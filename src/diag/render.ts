/**
 * @module diag/render
 * The page and its JSON and XML forms written a piece at a time, a route a
 * piece, and sent a chunk at a time: the body of a large configuration,
 * written in one go, would hold the event loop long enough to stall every
 * request under way. Each chunk is
 * written within a slice of the event loop that every view under way shares
 * (../gateway/slices), and only as the client takes the chunks before it.
 * What a route that does not change renders to (a frozen one: a gateway's
 * routes that counted nothing) is kept while the route lives, so that a
 * view writes again only the routes that counted requests.
 */
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { SliceGate } from '../gateway';
import { setWrittenBody, xmlElement, XML_DECLARATION, type Formatter } from '../http';
import { diagPagePieces, routeCells } from './page';
import type { DiagRoute, DiagSnapshot } from './types';

/** The representations of the page. */
export type DiagForm = 'html' | 'json' | 'xml';

/** About how many characters a chunk of a body holds: a few milliseconds of writing at most. */
const CHUNK_CHARS = 32 * 1024;

/** Writes a snapshot in pieces, keeping what its unchanging routes render to. */
export interface DiagRenderer {
  /** The pieces of `snapshot` in `form`: joined, they are the whole body. */
  pieces(form: DiagForm, snapshot: DiagSnapshot): Iterator<string>;
}

/** `render` of a route, kept for a frozen one while it lives. */
function keeping(render: (route: DiagRoute) => string): (route: DiagRoute) => string {
  const kept = new WeakMap<DiagRoute, string>();
  return (route) => {
    if (typeof route !== 'object' || route === null || !Object.isFrozen(route)) return render(route);
    let text = kept.get(route);
    if (text === undefined) kept.set(route, (text = render(route)));
    return text;
  };
}

/** The JSON of `snapshot` (JSON.stringify's, to the byte), a piece a route. */
function* jsonPieces(snapshot: DiagSnapshot, itemOf: (route: DiagRoute) => string): Generator<string, void, void> {
  let first = true;
  yield '{';
  for (const [key, value] of Object.entries(snapshot)) {
    const name = `${first ? '' : ','}${JSON.stringify(key)}:`;
    if (key === 'routes' && Array.isArray(value)) {
      yield `${name}[`;
      const routes = value as readonly DiagRoute[];
      for (let i = 0; i < routes.length; i++) yield `${i === 0 ? '' : ','}${itemOf(routes[i])}`;
      yield ']';
    } else {
      const text: string | undefined = JSON.stringify(value);
      // What JSON.stringify leaves out of an object (undefined) is left out here too.
      if (text === undefined) continue;
      yield `${name}${text}`;
    }
    first = false;
  }
  yield '}';
}

/** The XML of `snapshot` (the XML formatter's, to the byte), a piece a route. */
function* xmlPieces(snapshot: DiagSnapshot, itemOf: (route: DiagRoute) => string): Generator<string, void, void> {
  yield `${XML_DECLARATION}<response>`;
  for (const [key, value] of Object.entries(snapshot)) {
    if (key === 'routes' && Array.isArray(value)) {
      yield '<routes>';
      for (const route of value as readonly DiagRoute[]) yield itemOf(route);
      yield '</routes>';
    } else {
      yield xmlElement(key, value);
    }
  }
  yield '</response>';
}

/** Builds a renderer with renderings of its own to keep. */
export function createDiagRenderer(): DiagRenderer {
  const cells = keeping(routeCells);
  const json = keeping((route) => JSON.stringify(route) ?? 'null');
  const xml = keeping((route) => xmlElement('item', route));
  return {
    pieces(form, snapshot) {
      if (form === 'html') return diagPagePieces(snapshot, cells);
      return form === 'json' ? jsonPieces(snapshot, json) : xmlPieces(snapshot, xml);
    },
  };
}

/** The next chunk of `pieces`, written within the slices of `gate` (the first one begun, see SliceGate); `done` once they are all in. */
async function nextChunk(
  pieces: Iterator<string>,
  gate: SliceGate,
  first = false,
): Promise<{ text: string; done: boolean }> {
  const parts: string[] = [];
  let length = 0;
  for (let wait = first ? gate.begin() : gate.pass(); ; wait = gate.pass()) {
    if (wait !== undefined) await wait;
    const piece = pieces.next();
    if (piece.done) return { text: parts.join(''), done: true };
    parts.push(piece.value);
    length += piece.value.length;
    if (length >= CHUNK_CHARS) return { text: parts.join(''), done: false };
  }
}

/** The chunks of `pieces` after `first`, each written once the client has taken those before it. */
async function* laterChunks(
  first: string,
  pieces: Iterator<string>,
  gate: SliceGate,
): AsyncGenerator<string, void, void> {
  yield first;
  for (;;) {
    const chunk = await nextChunk(pieces, gate);
    if (chunk.text !== '') yield chunk.text;
    if (chunk.done) return;
  }
}

/**
 * Sets the body `formatter` writes as `pieces`: whole, with its length, when
 * it comes to less than a chunk; else a stream of chunks.
 */
export async function setPiecesBody(
  ctx: Context,
  formatter: Formatter,
  pieces: Iterator<string>,
  gate: SliceGate,
): Promise<void> {
  const first = await nextChunk(pieces, gate, true);
  setWrittenBody(
    ctx,
    formatter,
    first.done ? first.text : Readable.from(laterChunks(first.text, pieces, gate), { objectMode: false }),
  );
}
