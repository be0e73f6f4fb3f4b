/**
 * @module bench/peers/upstream
 * The remote upstream of the proxy rows: node:http answering GET
 * /v1/messages/:id with the message's bytes, made once for its own address,
 * so that every proxy in front passes exactly the same bytes on.
 */
'use strict';

const http = require('node:http');
const { messageOf, NOT_FOUND, listenAddress } = require('./messages');

const { port, host } = listenAddress();
const JSON_TYPE = 'application/json; charset=utf-8';
const ITEM = /^\/v1\/messages\/([^/?]+)(?:\?.*)?$/;
const answers = new Map();

function answerFor(id) {
  if (!answers.has(id)) {
    const message = messageOf(id, `http://${host}:${port}`);
    answers.set(id, message && Buffer.from(JSON.stringify(message)));
  }
  return answers.get(id);
}

const notFound = Buffer.from(JSON.stringify(NOT_FOUND));

http
  .createServer((req, res) => {
    const match = req.method === 'GET' ? ITEM.exec(req.url) : null;
    const body = (match && answerFor(match[1])) || notFound;
    res.writeHead(body === notFound ? 404 : 200, { 'content-type': JSON_TYPE, 'content-length': body.length });
    res.end(body);
  })
  .listen(port, host);
