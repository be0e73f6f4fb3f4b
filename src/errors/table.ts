/**
 * @module errors/table
 * The reference's list of every error, written from the registry: the
 * section of docs/api.md between its markers, which `npm run docs:errors`
 * writes and a test holds to the registry.
 */
import { STATUS_CODES } from 'node:http';
import type { ErrorGroup, ErrorSpec } from './define';
import { ERROR_GROUPS } from './registry';

/** The lines that open and close the generated section of docs/api.md. */
export const TABLE_START = '<!-- errors: written by `npm run docs:errors` from src/errors; edit them there -->';
export const TABLE_END = '<!-- end of errors -->';

/** Text for a table cell: a `|` would end the cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** A table row of `cells`. */
function row(cells: readonly string[]): string {
  return `|${cells.map((text) => (text === '' ? ' ' : ` ${text} `)).join('|')}|`;
}

function statusCell(spec: ErrorSpec): string {
  const status = `${spec.status} ${STATUS_CODES[spec.status] ?? ''}`.trim();
  return spec.statusFrom === undefined ? status : `${status}, or \`${spec.statusFrom}\``;
}

function notesCell(spec: ErrorSpec): string {
  const notes: string[] = [];
  for (const [name, value] of Object.entries(spec.headers ?? {})) notes.push(`\`${name}: ${value}\``);
  if (spec.about !== undefined) notes.push(spec.about);
  return cell(notes.join('; '));
}

/** The generated section, markers included. */
export function errorTable(): string {
  const lines = [TABLE_START];
  for (const { title, errors } of ERROR_GROUPS as readonly { title: string; errors: ErrorGroup }[]) {
    lines.push('', `### ${title}`, '', row(['name', 'status', 'detail', 'notes']), '|---|---|---|---|');
    for (const [code, spec] of Object.entries(errors)) {
      const detail = spec.detail === undefined ? '' : `\`${cell(spec.detail)}\``;
      lines.push(row([`\`${code}\``, statusCell(spec), detail, notesCell(spec)]));
    }
  }
  lines.push('', TABLE_END);
  return lines.join('\n');
}

/** `doc` with its generated section replaced by the registry's; throws when it has no such section. */
export function withErrorTable(doc: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start === -1 || end < start)
    throw new Error(`the document has no section between ${TABLE_START} and ${TABLE_END}`);
  return doc.slice(0, start) + errorTable() + doc.slice(end + TABLE_END.length);
}
