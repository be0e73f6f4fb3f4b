/**
 * @module auth/passwords/verify
 * Checking a password against a user's hash, in constant time for each scheme,
 * and the decoy check that makes an unknown user cost as much as most known
 * ones.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { apr1Digest } from './apr1';
import type { UserEntry } from './htpasswd';

const BCRYPT_ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A bcrypt check: a pool's `compare`, or bcryptjs's own. */
export type BcryptCompare = (password: string, hash: string) => Promise<boolean>;

/**
 * Whether `password` matches the entry's hash. bcrypt goes to `compareBcrypt`;
 * the other schemes cost microseconds and are checked here.
 */
export async function verifyPassword(
  password: string,
  entry: UserEntry,
  compareBcrypt: BcryptCompare,
): Promise<boolean> {
  switch (entry.scheme) {
    case 'bcrypt':
      // bcryptjs compares the computed and stored hashes in constant time.
      return compareBcrypt(password, entry.hash);
    case 'sha1': {
      const stored = Buffer.from(entry.hash.slice(5), 'base64');
      const given = createHash('sha1').update(password, 'utf8').digest();
      return timingSafeEqual(given, stored);
    }
    case 'apr1': {
      const [, , salt, digest] = entry.hash.split('$');
      const given = Buffer.from(apr1Digest(password, salt), 'latin1');
      return timingSafeEqual(given, Buffer.from(digest, 'latin1'));
    }
  }
}

/**
 * A well-formed bcrypt hash of no password anyone knows, at `cost`: checking
 * against it costs what a real check costs, and never succeeds.
 */
export function decoyHash(cost: number): string {
  const bytes = randomBytes(53);
  let tail = '';
  for (const b of bytes) tail += BCRYPT_ALPHABET[b & 0x3f];
  return `$2b$${String(cost).padStart(2, '0')}$${tail}`;
}

/**
 * The bcrypt cost most users have, for the decoy; 10 when there is none. Not
 * the highest: that would single out every user at a lower cost instead of
 * the few above it, and make each unknown name cost the most.
 */
export function commonCost(users: Iterable<UserEntry>): number {
  const counts = new Map<number, number>();
  let best = 10;
  let bestCount = 0;
  for (const u of users) {
    if (u.scheme !== 'bcrypt') continue;
    const n = (counts.get(u.cost) ?? 0) + 1;
    counts.set(u.cost, n);
    if (n > bestCount) {
      best = u.cost;
      bestCount = n;
    }
  }
  return best;
}

/** The different bcrypt costs of `users`, lowest first. */
export function bcryptCosts(users: Iterable<UserEntry>): number[] {
  const costs = new Set<number>();
  for (const u of users) if (u.scheme === 'bcrypt') costs.add(u.cost);
  return [...costs].sort((a, b) => a - b);
}
