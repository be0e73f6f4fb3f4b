/**
 * @module api/v2
 * Version 2 of the API: message content in Markdown, with its media type,
 * language and creation time. Every v1 field is kept with its name.
 */
import type Koa from 'koa';
import type { MessageRecord } from './store';
import type { ApiDeps, ApiVersion, Link } from './types';
import { createVersionApp } from './version-app';

/** Version 2: v1's fields, content in Markdown, and more fields. */
export const v2: ApiVersion = Object.freeze({
  name: 'v2',
  message: Object.freeze({
    fields: Object.freeze([
      'id',
      'account_id',
      'content',
      'content_type',
      'language',
      'created_at',
      'url',
      'account_url',
    ]),
    filterable: Object.freeze(['account_id', 'language']),
    represent: (record: MessageRecord, link: Link) => ({
      id: record.id,
      account_id: record.account_id,
      content: record.text,
      content_type: 'text/markdown',
      language: record.language,
      created_at: record.created_at,
      url: link(`/messages/${record.id}`),
      account_url: link(`/accounts/${record.account_id}`),
    }),
  }),
});

/** The v2 app, to mount at `/v2`. */
export function createV2App(deps: ApiDeps = {}): Koa {
  return createVersionApp(v2, deps);
}
