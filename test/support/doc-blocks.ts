/**
 * @module test/support/doc-blocks
 * The fenced code blocks of README.md and docs/*.md, with the info string
 * that says how the suite runs each: its language, then a kind (`sh tour`,
 * `yaml record`, `console cli`...) and `name=value` attributes
 * (`yaml file=config/quote.yaml`). Renderers show the language and ignore
 * the rest.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './process';

/** One fenced block. */
export interface Block {
  /** The file, relative to the repository: `README.md`, `docs/rate-limits.md`. */
  readonly file: string;
  /** The line of its opening fence, 1-based. */
  readonly line: number;
  /** The first word of the info string: `sh`, `yaml`, `ts`... */
  readonly lang: string;
  /** The second word, when it is no attribute: `tour`, `record`, `cli`... */
  readonly kind: string;
  /** `name=value` words of the info string. */
  readonly attributes: Readonly<Record<string, string>>;
  /** What is between the fences, indentation of the fence removed, ending with a newline. */
  readonly text: string;
}

/** The documents whose examples the suite runs, in reading order: the README, then docs/ by name. */
export function documents(): string[] {
  const docs = readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

const FENCE = /^( *)(`{3,}|~{3,})(.*)$/;

/** The fenced blocks of one document. */
export function blocksOf(file: string): Block[] {
  const lines = readFileSync(join(REPO_ROOT, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = FENCE.exec(lines[j]);
      if (close && close[2].startsWith(fence) && close[3].trim() === '') break;
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j].trimStart());
    }
    if (j === lines.length) throw new Error(`${file}:${i + 1}: the block is never closed`);
    const [lang = '', ...words] = info.trim().split(/\s+/).filter(Boolean);
    const attributes: Record<string, string> = {};
    let kind = '';
    for (const word of words) {
      const eq = word.indexOf('=');
      if (eq > 0) attributes[word.slice(0, eq)] = word.slice(eq + 1);
      else if (kind === '') kind = word;
      else throw new Error(`${file}:${i + 1}: '${info.trim()}' names two kinds`);
    }
    blocks.push({ file, line: i + 1, lang, kind, attributes, text: body.length ? `${body.join('\n')}\n` : '' });
    i = j;
  }
  return blocks;
}

/** Every block of every document, in reading order. */
export function allBlocks(): Block[] {
  return documents().flatMap(blocksOf);
}

/** Where a block is, for messages: `docs/auth.md:12`. */
export function where(block: Block): string {
  return `${block.file}:${block.line}`;
}
