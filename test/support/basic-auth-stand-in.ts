/**
 * @module test/support/basic-auth-stand-in
 * An HTTP auth service for the gateway's AuthService to ask: `Basic good`
 * is alice, `Basic banned` is refused with a text body, anything else is
 * asked for credentials.
 */
import { createServer, type Server } from 'node:http';

/** Starts the stand-in on a free port of 127.0.0.1. */
export async function startBasicAuthStandIn(): Promise<Server> {
  const server = createServer((req, res) => {
    const authorization = req.headers.authorization;
    if (authorization === 'Basic good') res.writeHead(200, { 'X-Travel-User': 'alice' }).end();
    else if (authorization === 'Basic banned') res.writeHead(403, { 'Content-Type': 'text/plain' }).end('banned');
    else res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="travel"' }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
