/**
 * @module platform/node-buffer
 * Node's Buffer methods that read a string out of a range of bytes as they
 * are: `latin1Slice` and `utf8Slice`, which `buf.toString(encoding, start,
 * end)` ends in after checking its arguments and looking the encoding up.
 * They are undocumented; the rate-limit request decoder reads every string
 * of every call with them, where those checks would be most of the cost of
 * a short key. Written against Node 20.20 (package.json's engines);
 * test/platform/node-buffer.test.ts fails, naming the Node version, when a
 * release changes them.
 */
import { isUtf8 } from 'node:buffer';

/** The Node release line these functions were written against. */
export const NODE_BUFFER_WRITTEN_FOR = 'v20.20';

interface SlicingBuffer {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

/** Whether bytes[start, end) are all ASCII: the usual header value, which needs no UTF-8 check. */
function ascii(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i] >= 0x80) return false;
  return true;
}

/** The string of bytes[start, end) read as UTF-8; undefined when they are not UTF-8. */
export function utf8Text(bytes: Buffer, start: number, end: number): string | undefined {
  if (start === end) return '';
  const slicing = bytes as unknown as SlicingBuffer;
  if (ascii(bytes, start, end)) return slicing.latin1Slice(start, end);
  return isUtf8(bytes.subarray(start, end)) ? slicing.utf8Slice(start, end) : undefined;
}
