/**
 * @module bench/peers/messages
 * The one resource every peer serves, as the gateway's api module answers it
 * for GET /v1/messages/1: the same fields in the same order, `url` absolute.
 */
'use strict';

const MESSAGES = new Map([['1', { id: '1', account_id: '1', content: 'Welcome to Gatehouse, Alice.' }]]);

/**
 * The message `id` as its JSON body holds it, its URL under `origin`
 * (`http://host:port`); undefined when there is no such message.
 */
function messageOf(id, origin) {
  const message = MESSAGES.get(id);
  return message && { ...message, url: `${origin}/v1/messages/${id}` };
}

/** What every peer answers to a path it does not serve. */
const NOT_FOUND = { code: 404, message: '404: Not Found' };

/** Where a peer listens: PORT (required) on HOST (default 127.0.0.1). */
function listenAddress() {
  const port = Number(process.env.PORT);
  if (!Number.isInteger(port) || port <= 0) throw new Error('PORT must be set to the port to listen on');
  return { port, host: process.env.HOST || '127.0.0.1' };
}

module.exports = { messageOf, NOT_FOUND, listenAddress };
