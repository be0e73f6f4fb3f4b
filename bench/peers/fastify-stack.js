/**
 * @module bench/peers/fastify-stack
 * The same job as the gateway on fastify: @fastify/basic-auth over the
 * htpasswd file (bcrypt results cached), @fastify/rate-limit keyed by user
 * in memory (after auth: its preHandler hook), the resource with its
 * response schema. No logger, fastify's default.
 */
'use strict';

const Fastify = require('fastify');
const { messageOf, NOT_FOUND, listenAddress } = require('./messages');
const { cachedVerifier, loadUsers, perMinuteLimit } = require('./users');

const verify = cachedVerifier(loadUsers());

const MESSAGE_SCHEMA = {
  params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  response: {
    200: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        account_id: { type: 'string' },
        content: { type: 'string' },
        url: { type: 'string' },
      },
    },
  },
};

async function main() {
  const app = Fastify();
  app.decorateRequest('user', null);
  await app.register(require('@fastify/basic-auth'), {
    authenticate: { realm: 'gatehouse' },
    async validate(user, password, req) {
      const name = await verify(req.headers.authorization, user, password);
      if (!name) return new Error('Unauthorized');
      req.user = name;
    },
  });
  app.addHook('onRequest', app.basicAuth);
  await app.register(require('@fastify/rate-limit'), {
    hook: 'preHandler',
    max: perMinuteLimit(),
    timeWindow: '1 minute',
    keyGenerator: (req) => req.user,
  });
  app.get('/v1/messages/:id', { schema: MESSAGE_SCHEMA }, async (req, reply) => {
    const message = messageOf(req.params.id, `${req.protocol}://${req.host}`);
    if (!message) return reply.code(404).send(NOT_FOUND);
    return message;
  });
  await app.listen(listenAddress());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
