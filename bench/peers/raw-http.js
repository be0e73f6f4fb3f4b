/**
 * @module bench/peers/raw-http
 * Reference: node:http alone answering GET /v1/messages/:id, no framework,
 * no auth, no rate limit, no log.
 */
'use strict';

const http = require('node:http');
const { messageOf, NOT_FOUND, listenAddress } = require('./messages');

const ITEM = /^\/v1\/messages\/([^/?]+)(?:\?.*)?$/;
const JSON_TYPE = 'application/json; charset=utf-8';

function send(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const match = req.method === 'GET' ? ITEM.exec(req.url) : null;
  const message = match && messageOf(match[1], `http://${req.headers.host}`);
  if (message) send(res, 200, message);
  else send(res, 404, NOT_FOUND);
});

const { port, host } = listenAddress();
server.listen(port, host);
