/**
 * @module test/support/hostile-yaml
 * Files as an attacker (or a mistake) drops them into a config folder.
 */

/** A YAML mapping whose key `anchor` is aliased 120 times: past the 100 aliases a file may use. */
export function aliasBomb(anchor = 'a'): string {
  return [`${anchor}: &a [x, x]`, ...Array.from({ length: 120 }, (_, i) => `k${i}: *a`)].join('\n') + '\n';
}

/** `text` followed by YAML comments up to `bytes` bytes: the same document, larger. */
export function padded(text: string, bytes: number): string {
  const line = `# ${'-'.repeat(78)}\n`;
  return text + line.repeat(Math.max(0, Math.ceil((bytes - text.length) / line.length)));
}
