/**
 * @module api/messages
 * The message resources, the same in every version: `/messages/`,
 * `/messages/<id>` and `/accounts/<id>/messages/`. What a message looks like
 * is the version's {@link MessageRepresentation}.
 */
import type { Context } from 'koa';
import type Router from 'koa-router';
import { absoluteUrl, HttpError, pageOf, parseItemQuery, parseListQuery, pickFields, redirectToSlash } from '../http';
import type { MessageRecord, MessageStore } from './store';
import type { MessageRepresentation } from './types';

/** Registers the message routes of one version on `router` (a strict router). */
export function messageRoutes(router: Router, store: MessageStore, representation: MessageRepresentation): void {
  const spec = { fields: representation.fields, filterable: representation.filterable };

  function list(ctx: Context, records: readonly MessageRecord[]): void {
    const query = parseListQuery(ctx.query, spec);
    const link = (path: string) => absoluteUrl(ctx, path);
    // Filters apply to what the client sees, so they are matched on the representation.
    ctx.body = pageOf(
      ctx,
      records.map((record) => representation.represent(record, link)),
      query,
    );
  }

  router.get('/messages/', (ctx) => list(ctx, store.messages()));
  router.all('/messages', redirectToSlash);

  router.get('/messages/:id', (ctx) => {
    const record = store.message(ctx.params.id);
    if (!record) throw HttpError.of('MESSAGE_NOT_FOUND');
    const { fields } = parseItemQuery(ctx.query, spec);
    ctx.body = pickFields(
      representation.represent(record, (path) => absoluteUrl(ctx, path)),
      fields,
    );
  });

  router.get('/accounts/:id/messages/', (ctx) => {
    const account = store.account(ctx.params.id);
    if (!account) throw HttpError.of('ACCOUNT_NOT_FOUND');
    list(ctx, store.messages(account.id));
  });
  router.all('/accounts/:id/messages', redirectToSlash);
}
