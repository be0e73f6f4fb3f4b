/**
 * @module auth/passwords/htpasswd
 * Reading an htpasswd file into users and their password hashes. bcrypt is the
 * scheme meant to be used; apr1-MD5 and SHA-1 are accepted with a warning;
 * plaintext, crypt() and unknown schemes are refused. Problems name their
 * line number and never quote the line, which may hold a password.
 */

/** The name of the users file in a config folder. */
export const USERS_FILE = 'users.htpasswd';

/** A password hash scheme this service verifies. */
export type HashScheme = 'bcrypt' | 'apr1' | 'sha1';

/** One user of the file. */
export interface UserEntry {
  readonly user: string;
  readonly scheme: HashScheme;
  /** The hash as verified: bcrypt's `$2y$` is rewritten as the identical `$2b$`. */
  readonly hash: string;
  /** The bcrypt cost; 0 for the other schemes. */
  readonly cost: number;
  /** The 1-based line number it was read from. */
  readonly line: number;
}

/** Something wrong or weak on one line. */
export interface LineNote {
  readonly line: number;
  readonly message: string;
}

/** What a file holds: the users, the lines refused, the lines accepted with a warning. */
export interface ParsedUsers {
  readonly users: ReadonlyMap<string, UserEntry>;
  readonly problems: readonly LineNote[];
  readonly warnings: readonly LineNote[];
}

/** Thrown for a users file with any problem; the file is then not used at all. */
export class UsersFileError extends Error {
  readonly file: string;
  readonly problems: readonly LineNote[];

  constructor(file: string, problems: readonly LineNote[]) {
    const list = problems.map((p) => (p.line > 0 ? `line ${p.line}: ${p.message}` : p.message)).join('; ');
    super(`${file}: ${list}`);
    this.name = 'UsersFileError';
    this.file = file;
    this.problems = problems;
  }
}

const BCRYPT = /^\$2([aby])\$(\d\d)\$[./A-Za-z0-9]{53}$/;
const APR1 = /^\$apr1\$[./0-9A-Za-z]{1,8}\$[./0-9A-Za-z]{22}$/;
const SHA1 = /^\{SHA\}[A-Za-z0-9+/]{27}=$/;
/**
 * Any name htpasswd writes, UTF-8 included, as Basic credentials are read as
 * UTF-8. Control characters could split or end the `X-Travel-User` header the
 * name travels in, and a space at either end would be trimmed from it and
 * name someone else.
 */
const USER_NAME = /^[^\s\x00-\x1f\x7f-\x9f:](?:[^\x00-\x1f\x7f-\x9f:]*[^\s\x00-\x1f\x7f-\x9f:])?$/;
/** What decoding put in place of bytes that are not UTF-8. */
const REPLACEMENT = '\ufffd';
/** Some editors start a UTF-8 file with a byte order mark; htpasswd never writes one. */
const BOM = '\ufeff';

const EMPTY_FILE =
  'the file is empty: refused, since a file caught while it is being written would shut every user out; for no users, write a comment line';

/** The most a bcrypt cost may be; above it one check would take hours. */
const MAX_BCRYPT_COST = 20;

/** Classifies one hash; a string when it is refused, saying why. */
function classify(hash: string): { scheme: HashScheme; hash: string; cost: number } | string {
  const bcrypt = BCRYPT.exec(hash);
  if (bcrypt) {
    const cost = Number(bcrypt[2]);
    if (cost < 4 || cost > MAX_BCRYPT_COST) return `bcrypt cost ${cost} is outside 4..${MAX_BCRYPT_COST}`;
    // $2y$ is PHP's and Apache's name for the same corrected algorithm as $2b$.
    return { scheme: 'bcrypt', hash: bcrypt[1] === 'y' ? `$2b$${hash.slice(4)}` : hash, cost };
  }
  if (APR1.test(hash)) return { scheme: 'apr1', hash, cost: 0 };
  if (SHA1.test(hash)) return { scheme: 'sha1', hash, cost: 0 };
  // crypt_blowfish's name for hashes made with its old bug on bytes above 0x7f, which bcryptjs cannot reproduce.
  if (hash.startsWith('$2x$')) return '$2x$ bcrypt hashes are not supported (rehash with htpasswd -B)';
  if (hash.startsWith('$2')) return 'the bcrypt hash is malformed';
  if (hash.startsWith('$apr1$')) return 'the apr1 hash is malformed';
  if (hash.startsWith('{SHA}')) return 'the SHA hash is malformed';
  if (hash.startsWith('$') || hash.startsWith('{')) return 'the hash scheme is not supported (use htpasswd -B)';
  return 'the password is not hashed: plaintext and crypt() are refused (use htpasswd -B)';
}

const WEAK: Record<Exclude<HashScheme, 'bcrypt'>, string> = {
  apr1: 'apr1-MD5 is a weak hash; accepted, but rehash with htpasswd -B',
  sha1: 'unsalted SHA-1 is a weak hash; accepted, but rehash with htpasswd -B',
};

/**
 * Parses htpasswd text. Blank lines and `#` comments are skipped; every other
 * line is `user:hash` or `user:hash:comment`; a byte order mark in front is
 * skipped. A text with nothing but blanks is refused (a file of comments only
 * names no user).
 * Never throws: everything wrong is in `problems`.
 */
export function parseHtpasswd(text: string): ParsedUsers {
  const users = new Map<string, UserEntry>();
  const problems: LineNote[] = [];
  const warnings: LineNote[] = [];
  const body = text.startsWith(BOM) ? text.slice(1) : text;
  if (body.trim() === '') {
    // What a reload sees between the truncation and the write of a file written in place.
    problems.push({ line: 0, message: EMPTY_FILE });
    return { users, problems, warnings };
  }
  const lines = body.split('\n');

  for (let i = 0; i < lines.length; i++) {
    const line = i + 1;
    const raw = lines[i].replace(/\r$/, '');
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) continue;

    const colon = raw.indexOf(':');
    if (colon === -1) {
      problems.push({ line, message: "not of the form 'user:hash'" });
      continue;
    }
    const user = raw.slice(0, colon);
    // Apache reads the hash up to a further colon and nginx documents
    // `name:password:comment`: what follows it is a comment. No hash holds a colon.
    const rest = raw.slice(colon + 1);
    const end = rest.indexOf(':');
    const hash = (end === -1 ? rest : rest.slice(0, end)).trim();
    if (user === '') {
      problems.push({ line, message: 'the user name is empty' });
      continue;
    }
    if (user.includes(REPLACEMENT)) {
      // Such a name could never match: Basic credentials that are not UTF-8 are refused.
      problems.push({ line, message: 'the user name is not valid UTF-8' });
      continue;
    }
    if (!USER_NAME.test(user)) {
      problems.push({ line, message: 'the user name must have no control characters and no space at either end' });
      continue;
    }
    if (hash === '') {
      problems.push({ line, message: `user '${user}' has no password hash` });
      continue;
    }
    const kind = classify(hash);
    if (typeof kind === 'string') {
      problems.push({ line, message: `user '${user}': ${kind}` });
      continue;
    }
    const earlier = users.get(user);
    if (earlier) {
      problems.push({ line, message: `user '${user}' is already defined on line ${earlier.line}` });
      continue;
    }
    if (kind.scheme !== 'bcrypt') warnings.push({ line, message: `user '${user}': ${WEAK[kind.scheme]}` });
    users.set(user, { user, ...kind, line });
  }
  return { users, problems, warnings };
}
