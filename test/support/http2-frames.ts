/**
 * @module test/support/http2-frames
 * HTTP/2 frames built by hand (RFC 9113 §4, §6) and HPACK blocks without
 * Huffman coding (RFC 7541), for clients that do what no library does: a
 * preface in pieces, resets as fast as streams open, endless CONTINUATION
 * frames, a header block that expands a thousandfold. A {@link RawH2}
 * connection writes them and reads what the server sends back, frame by
 * frame.
 */
import { once } from 'node:events';
import net from 'node:net';

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;

/** One frame: its 9-byte header, then `payload`. */
export function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** A SETTINGS frame with `settings` (identifier, value), or its acknowledgement. */
export function settings(entries: [number, number][] = [], ack = false): Buffer {
  const payload = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return frame(FRAME.SETTINGS, ack ? FLAG.ACK : 0, 0, payload);
}

/** An HPACK integer of `prefixBits` bits, its first byte or'ed with `mask`. */
function hpackInteger(value: number, prefixBits: number, mask: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([mask | value]);
  const bytes = [mask | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  return Buffer.concat([hpackInteger(bytes.length, 7, 0), bytes]);
}

/** A header field, literal, not indexed (RFC 7541 §6.2.2), its name a literal too. */
export function literal(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00]), hpackString(name), hpackString(value)]);
}

/** A header field, literal, added to the dynamic table (§6.2.1). */
export function indexedLiteral(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x40]), hpackString(name), hpackString(value)]);
}

/** A header field from the table, by its index (§6.1): 62 is the newest entry of the dynamic table. */
export function indexed(index: number): Buffer {
  return hpackInteger(index, 7, 0x80);
}

/** The header block of a GET of `path` on `authority`, `more` fields after it. */
export function requestBlock(authority: string, path = '/', more: Buffer[] = [], method = 'GET'): Buffer {
  return Buffer.concat([
    literal(':method', method),
    literal(':scheme', 'http'),
    literal(':authority', authority),
    literal(':path', path),
    ...more,
  ]);
}

/** A frame read back from the server. */
export interface ReadFrame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

/** A cleartext HTTP/2 connection driven frame by frame. */
export class RawH2 {
  readonly frames: ReadFrame[] = [];
  closed = false;
  private buffered = Buffer.alloc(0);

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      while (this.buffered.length >= 9) {
        const length = this.buffered.readUIntBE(0, 3);
        if (this.buffered.length < 9 + length) break;
        this.frames.push({
          type: this.buffered[3],
          flags: this.buffered[4],
          stream: this.buffered.readUInt32BE(5) & 0x7fffffff,
          payload: this.buffered.subarray(9, 9 + length),
        });
        this.buffered = this.buffered.subarray(9 + length);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => (this.closed = true));
  }

  /** Connects to `port` and, unless told not to, sends the preface and an empty SETTINGS frame. */
  static async connect(port: number, handshake = true): Promise<RawH2> {
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const raw = new RawH2(socket);
    if (handshake) raw.write(PREFACE, settings());
    return raw;
  }

  /** Writes frames (or any bytes); false once the socket cannot take them. */
  write(...parts: Buffer[]): boolean {
    if (this.closed || this.socket.destroyed) return false;
    return this.socket.write(Buffer.concat(parts));
  }

  /** The GOAWAY the server sent, if any: its last stream and error code. */
  goaway(): { lastStream: number; code: number } | undefined {
    const found = this.frames.find((f) => f.type === FRAME.GOAWAY);
    return found && { lastStream: found.payload.readUInt32BE(0) & 0x7fffffff, code: found.payload.readUInt32BE(4) };
  }

  /** Resolves once a frame matching `test` has come, or rejects if the connection closes first. */
  async until(test: (f: ReadFrame) => boolean): Promise<ReadFrame> {
    for (;;) {
      const found = this.frames.find(test);
      if (found) return found;
      if (this.closed) throw new Error('the connection closed first');
      await Promise.race([once(this.socket, 'data'), once(this.socket, 'close')]);
    }
  }

  /** Resolves once the server has closed the connection. */
  async whenClosed(): Promise<void> {
    if (!this.closed) await once(this.socket, 'close');
  }

  destroy(): void {
    this.socket.destroy();
  }
}
