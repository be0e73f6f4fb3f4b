/**
 * @module files/size
 * A size as a user writes it in an environment variable or on the command
 * line: bytes, or with a unit as nginx reads `client_max_body_size`.
 */

const UNITS: Record<string, number> = {
  '': 1,
  k: 2 ** 10,
  kib: 2 ** 10,
  m: 2 ** 20,
  mib: 2 ** 20,
  g: 2 ** 30,
  gib: 2 ** 30,
};

/**
 * `16777216`, `16m`, `16MiB`, `512k` as bytes (k, m and g are powers of
 * 1024). Throws naming `name` for anything else, zero included.
 */
export function parseByteSize(value: string, name: string): number {
  const m = /^([0-9]{1,15})\s*([a-z]*)$/i.exec(value.trim());
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  const bytes = m && unit !== undefined ? Number(m[1]) * unit : NaN;
  if (!(bytes >= 1) || !Number.isSafeInteger(bytes)) {
    throw new Error(`${name} must be a size in bytes, or with a unit (512k, 16m, 1g), got '${value}'`);
  }
  return bytes;
}
