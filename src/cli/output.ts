/**
 * @module cli/output
 * What the command line writes for its user: text on standard output, and
 * text from a config file made safe to show on a terminal.
 */

/**
 * `text` with the control characters a config file may hold (in a Mapping's
 * name, a path, a problem quoting either) shown as escapes: written raw, an
 * ESC sequence from a file would act on the terminal of whoever checks it.
 */
export function shown(text: string): string {
  return text.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Prints `text` on standard output: exit 0. */
export function print(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}
