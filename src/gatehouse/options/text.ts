/**
 * @module gatehouse/options/text
 * The options as people read them, written from their declarations: the
 * option lines of `gatehouse start --help` and `serve --help`, and the
 * table of docs/operations.md (which a test holds to this).
 */
import { OPTIONS, type OptionName } from './declarations';
import type { Command, Declaration } from './declaration';
import { OPTION_NAMES } from './read';

type Any = Declaration<unknown>;

const code = (text: string) => `\`${text}\``;

function declared(name: OptionName): Any {
  return OPTIONS[name];
}

/** The options `command` reads from flags and variables, in the order declared. */
export function commandOptions(command: Command): OptionName[] {
  return OPTION_NAMES.filter((name) => declared(name).commands?.includes(command));
}

/** The default of `option`, when it has one to show, as Markdown: a value in code, words as they are. */
function shownDefault(option: Any): string | undefined {
  if (option.shown !== undefined) return option.shown;
  if (option.default === undefined || typeof option.default === 'function') return undefined;
  const value: unknown = option.default;
  if (option.kind.show) return code(option.kind.show(value));
  return code(typeof value === 'string' ? value : JSON.stringify(value));
}

/** Markdown as a terminal shows it: without the backticks. */
function plain(markdown: string): string {
  return markdown.replace(/`/g, '');
}

/** A flag as the help writes it: `--port <n>`, `--trust-proxy`. */
function flagText(option: Any): string | undefined {
  if (!option.flag) return undefined;
  return option.kind.placeholder && typeof option.default !== 'boolean' && option.flagSets === undefined
    ? `${option.flag} ${option.kind.placeholder}`
    : option.flag;
}

/** `text` in lines of at most `width`, each after `indent` spaces but the first. */
function wrap(text: string, width: number, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

const COLUMN = 21;
const WIDTH = 79;

/**
 * The option lines of `gatehouse <command> --help`: each flag (or variable,
 * for one without a flag), its help line, its variable and its default.
 */
export function optionsHelp(command: Command): string {
  return commandOptions(command)
    .map((name) => {
      const option = declared(name);
      const left = `  ${flagText(option) ?? option.env}`;
      const only = command === 'serve' && option.serveOnly ? `${option.serveOnly.modules.join(', ')} only: ` : '';
      const shown = typeof option.default === 'boolean' ? undefined : shownDefault(option);
      const env = option.flag && option.env ? ` [${option.env}]` : '';
      const text = wrap(
        `${only}${option.flagHelp ?? option.help}${env}${shown ? ` (default ${plain(shown)})` : ''}`,
        WIDTH,
        COLUMN,
      );
      return left.length < COLUMN - 1 ? `${left.padEnd(COLUMN)}${text}` : `${left}\n${' '.repeat(COLUMN)}${text}`;
    })
    .join('\n');
}

/** What the table says of where else an option is read: *serve*, *serve ratelimit*, *check*. */
function commandMarks(option: Any): string {
  const marks: string[] = [];
  if (option.commands?.includes('serve'))
    marks.push(option.serveOnly ? `*serve ${option.serveOnly.modules.join(', ')}*` : '*serve*');
  if (option.commands?.includes('check')) marks.push('*check*');
  return marks.length > 0 ? `; ${marks.join(', ')}` : '';
}

/** The table of every option, as docs/operations.md holds it. */
export function optionsTable(): string {
  const rows = OPTION_NAMES.map((name) => {
    const option = declared(name);
    const library = option.library === undefined ? name : option.library || '';
    const shown = shownDefault(option);
    // A `more` that goes on the sentence (`, as in Emissary`) follows it without a space.
    const more = option.more === undefined ? '' : /^[,:;]/.test(option.more) ? option.more : ` ${option.more}`;
    const what = `${option.help}${more}${commandMarks(option)}`;
    return [
      flagText(option) ? code(flagText(option)!) : '',
      option.env ? code(option.env) : '',
      library ? code(library) : '',
      shown ?? '',
      what.replace(/\|/g, '\\|'),
    ];
  });
  return [
    '| flag | environment | library option | default | what |',
    '|---|---|---|---|---|',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
  ].join('\n');
}
