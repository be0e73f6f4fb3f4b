/**
 * @module api/v1
 * Version 1 of the API: messages with plain-text content.
 */
import type Koa from 'koa';
import type { MessageRecord } from './store';
import type { ApiDeps, ApiVersion, Link } from './types';
import { createVersionApp } from './version-app';

/** The Markdown of the demo data, as plain text: emphasis and code marks dropped. */
export function plainText(markdown: string): string {
  return markdown.replace(/(\*\*|\*|__|_|`)(.+?)\1/g, '$2');
}

// Records are immutable: each one's plain text is worked out once.
const plainTextOf = new WeakMap<MessageRecord, string>();

function plainContent(record: MessageRecord): string {
  let text = plainTextOf.get(record);
  if (text === undefined) plainTextOf.set(record, (text = plainText(record.text)));
  return text;
}

/** Version 1: `{id, account_id, content, url}`, content in plain text. */
export const v1: ApiVersion = Object.freeze({
  name: 'v1',
  message: Object.freeze({
    fields: Object.freeze(['id', 'account_id', 'content', 'url']),
    filterable: Object.freeze(['account_id']),
    represent: (record: MessageRecord, link: Link) => ({
      id: record.id,
      account_id: record.account_id,
      content: plainContent(record),
      url: link(`/messages/${record.id}`),
    }),
  }),
});

/** The v1 app, to mount at `/v1`. */
export function createV1App(deps: ApiDeps = {}): Koa {
  return createVersionApp(v1, deps);
}
