/**
 * @module api/accounts
 * The account resources, `/accounts/` and `/accounts/<id>`, the same in
 * every version so far.
 */
import type Router from 'koa-router';
import type { Context } from 'koa';
import { absoluteUrl, HttpError, pageOf, parseItemQuery, parseListQuery, pickFields, redirectToSlash } from '../http';
import type { AccountRecord, MessageStore } from './store';

const ACCOUNT_FIELDS = ['id', 'name', 'created_at', 'url', 'messages_url'] as const;
const spec = { fields: ACCOUNT_FIELDS, filterable: ['name'] };

/**
 * An account as sent. Each link is built on its own: a Mapping may route the
 * client to some paths of the version only (`/a/` to `/v2/accounts/`).
 */
export function representAccount(ctx: Context, account: AccountRecord) {
  const path = `/accounts/${account.id}`;
  return {
    id: account.id,
    name: account.name,
    created_at: account.created_at,
    url: absoluteUrl(ctx, path),
    messages_url: absoluteUrl(ctx, `${path}/messages/`),
  };
}

/** Registers the account routes on `router` (a strict router). */
export function accountRoutes(router: Router, store: MessageStore): void {
  router.get('/accounts/', (ctx) => {
    const query = parseListQuery(ctx.query, spec);
    ctx.body = pageOf(
      ctx,
      store.accounts().map((account) => representAccount(ctx, account)),
      query,
    );
  });
  router.all('/accounts', redirectToSlash);

  router.get('/accounts/:id', (ctx) => {
    const account = store.account(ctx.params.id);
    if (!account) throw HttpError.of('ACCOUNT_NOT_FOUND');
    const { fields } = parseItemQuery(ctx.query, spec);
    ctx.body = pickFields(representAccount(ctx, account), fields);
  });
}
