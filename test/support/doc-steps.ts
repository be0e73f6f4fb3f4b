/**
 * @module test/support/doc-steps
 * The commands of a shell example and what each shows: a command (with its
 * `\` continuations and multi-line quotes), then its comment, either at the
 * end of its line or on the `#` lines below it; and the commands of a
 * `console` example (`$ command`, then the lines it prints).
 */

/** One command of an example and the comment that tells what it does or prints. */
export interface Step {
  readonly command: string;
  /** The comment's lines, without `# `. */
  readonly comment: readonly string[];
}

/** Whether `text` leaves a single or double quote open, as the shell reads it. */
function openQuote(text: string): boolean {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]))) return false;
  }
  return quote !== undefined;
}

/** `command  # comment`: the comment of a line, outside quotes, after two spaces or more. */
function splitInlineComment(line: string): [string, string | undefined] {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && /\s\s$/.test(line.slice(0, i))) return [line.slice(0, i).trimEnd(), line.slice(i + 1).trim()];
  }
  return [line, undefined];
}

/** The steps of a `sh` example. */
export function shellSteps(text: string): Step[] {
  const steps: { command: string; comment: string[] }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const last = steps.at(-1);
      if (!last) throw new Error(`a comment before any command: ${line}`);
      last.comment.push(line.replace(/^# ?/, ''));
      continue;
    }
    let command = line;
    while ((command.endsWith('\\') || openQuote(command)) && i + 1 < lines.length) command += `\n${lines[++i]}`;
    const [bare, inline] = splitInlineComment(command);
    steps.push({ command: bare, comment: inline === undefined ? [] : [inline] });
  }
  return steps;
}

/** The steps of a `console` example: each `$ command`, and what it prints as its comment. */
export function consoleSteps(text: string): Step[] {
  const steps: { command: string; comment: string[] }[] = [];
  for (const line of text.replace(/\n$/, '').split('\n')) {
    if (line.startsWith('$ ')) steps.push({ command: line.slice(2), comment: [] });
    else {
      const last = steps.at(-1);
      if (!last) throw new Error(`output before any command: ${line}`);
      last.comment.push(line);
    }
  }
  return steps;
}

/**
 * Whether a command prints what its comment shows (a loop, a pipe, `-w`, a
 * script), rather than an HTTP answer the comment describes.
 */
export function printsItsOutput(command: string): boolean {
  return /^(for|node)\b/.test(command) || /\s-w\s|\|/.test(command);
}

/** Splits a command line into words as the shell does for plain words and quotes (no expansions). */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && command[i + 1] === '\n') i++;
    else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}
