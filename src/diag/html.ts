/**
 * @module diag/html
 * The small pieces the diagnostic page is written with: every value escaped,
 * code, a muted note, a definition list.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** A value in code type. */
export const code = (value: unknown): string => `<code>${escapeHtml(value)}</code>`;

/** A muted note: `any`, `none`, `path unchanged`. */
export const none = (text: string): string => `<span class="none">${escapeHtml(text)}</span>`;

/** A definition list of already written values. */
export function definitions(rows: [string, string][]): string {
  return `<dl>${rows.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${value}</dd>`).join('')}</dl>`;
}
