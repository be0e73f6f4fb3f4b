/**
 * @module auth/passwords/apr1
 * Apache's apr1-MD5 password hash (`htpasswd -m`), computed over the
 * password's UTF-8 bytes as Apache does, so that non-ASCII passwords verify.
 */
import { createHash } from 'node:crypto';

const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const MAGIC = Buffer.from('$apr1$', 'latin1');
const ZERO = Buffer.from([0]);

function to64(value: number, count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) {
    out += ITOA64[value & 0x3f];
    value >>>= 6;
  }
  return out;
}

function md5(...parts: Buffer[]): Buffer {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return h.digest();
}

/**
 * The 22-character apr1 digest of `password` with `salt` (at most 8
 * characters of `[./0-9A-Za-z]`), without the `$apr1$<salt>$` in front.
 */
export function apr1Digest(password: string | Buffer, salt: string): string {
  const pw = typeof password === 'string' ? Buffer.from(password, 'utf8') : password;
  const s = Buffer.from(salt.slice(0, 8), 'latin1');

  const alternate = md5(pw, s, pw);
  const ctx = createHash('md5');
  ctx.update(pw);
  ctx.update(MAGIC);
  ctx.update(s);
  for (let left = pw.length; left > 0; left -= 16) ctx.update(alternate.subarray(0, Math.min(16, left)));
  // The odd bits of the length pick a zero byte, the even ones the first byte of the password.
  for (let i = pw.length; i > 0; i >>>= 1) ctx.update(i & 1 ? ZERO : pw.subarray(0, 1));
  let final = ctx.digest();

  // A thousand rounds, as in Poul-Henning Kamp's MD5-crypt, only to slow guessing down.
  for (let i = 0; i < 1000; i++) {
    const round = createHash('md5');
    round.update(i & 1 ? pw : final);
    if (i % 3) round.update(s);
    if (i % 7) round.update(pw);
    round.update(i & 1 ? final : pw);
    final = round.digest();
  }

  const f = final;
  return (
    to64((f[0] << 16) | (f[6] << 8) | f[12], 4) +
    to64((f[1] << 16) | (f[7] << 8) | f[13], 4) +
    to64((f[2] << 16) | (f[8] << 8) | f[14], 4) +
    to64((f[3] << 16) | (f[9] << 8) | f[15], 4) +
    to64((f[4] << 16) | (f[10] << 8) | f[5], 4) +
    to64(f[11], 2)
  );
}

/** The whole `$apr1$<salt>$<digest>` string, as htpasswd writes it. */
export function apr1Hash(password: string | Buffer, salt: string): string {
  return `$apr1$${salt.slice(0, 8)}$${apr1Digest(password, salt)}`;
}
