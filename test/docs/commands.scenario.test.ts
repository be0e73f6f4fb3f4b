/**
 * @module test/docs/commands
 * The commands of the docs, run in a scratch copy of the checkout as a
 * reader runs them there: `console cli` examples (each `$ command`, its
 * output as shown, after the `yaml file=<path>` examples before it are
 * written), the line `npm start` prints (`text start-line`), examples of
 * servers (`sh split`, each `serve` started, then its curl; `sh postgres`,
 * on the run's PostgreSQL), and the
 * README's first commands (`sh commands`), whose scripts and defaults are
 * held against the package.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveOptions } from '../../src/gatehouse';
import { freePort } from '../support/ports';
import { PG_PASSWORD, PG_USER, sharedPostgres } from '../support/postgres';
import { startServer, type StartedServer } from '../support/package';
import { LISTENING_LINE, REPO_ROOT } from '../support/process';
import { allBlocks, where, type Block } from '../support/doc-blocks';
import { makeCheckout, runShell, type Checkout } from '../support/checkout';
import { assertClaims, assertLines, parsePrinted, shownPattern } from '../support/printed-output';
import { consoleSteps, shellSteps } from '../support/doc-steps';

/** Where the docs' outputs show a reader's checkout. */
const SHOWN_CHECKOUT = '/home/you/gatehouse';

/** Starts a server command of an example in a checkout, as a reader runs it in a terminal of its own. */
function startIn(command: string, checkout: Checkout, env: Record<string, string> = {}): Promise<StartedServer> {
  // The shell hands its process over to the server, the variables set before it (`DATABASE_URL=... npm start`) with it.
  const [, assignments, rest] = /^((?:\w+=\S*\s+)*)([^]*)$/.exec(command)!;
  return startServer('bash', ['-c', `${assignments}exec ${rest}`], checkout.dir, env);
}

/** The line a server said where it listens on. */
function listeningLine(server: StartedServer): string {
  return LISTENING_LINE.exec(server.output())![0].trimEnd();
}

/** SIGTERM, and the exit status it brings. */
async function stop(server: StartedServer): Promise<number | null> {
  server.child.kill('SIGTERM');
  return (await server.ended()).code;
}

describe('the commands of the docs', function () {
  this.timeout(180_000);
  const blocks = allBlocks();

  describe('console examples, in a checkout of their own', () => {
    const examples = blocks.filter((b) => b.lang === 'console' && b.kind === 'cli');

    it('are found', () => assert.ok(examples.length > 0));

    for (const block of examples) {
      it(`${where(block)} prints what it shows`, async () => {
        const checkout = makeCheckout();
        try {
          // The files the example's page writes before it, since its last console example.
          const page = blocks.filter((b) => b.file === block.file);
          const before = page.slice(0, page.indexOf(block));
          const lastConsole = before.map((b) => b.lang === 'console').lastIndexOf(true);
          for (const file of before.slice(lastConsole + 1).filter((b) => b.attributes.file !== undefined))
            checkout.write(file.attributes.file, file.text);
          for (const step of consoleSteps(block.text)) {
            const run = await runShell(`${step.command} 2>&1`, checkout.dir);
            const shown = step.comment.map((l) => l.split(SHOWN_CHECKOUT).join(checkout.dir));
            assertLines(run.stdout, shown, `${where(block)}: ${step.command}`);
          }
        } finally {
          checkout.remove();
        }
      });
    }
  });

  it('shows the line npm start prints, with the ports it was given and the folder it serves', async () => {
    const [block] = blocks.filter((b) => b.kind === 'start-line');
    assert.ok(block, 'the README shows the start line');
    const checkout = makeCheckout();
    try {
      const server = await startIn('npm start -- --port 0 --grpc-port 0', checkout);
      const shown = block.text.trim().split(SHOWN_CHECKOUT).join(checkout.dir);
      // The ports the docs show are the defaults; this start was given free ones.
      const pattern = shownPattern(shown)
        .source.replace(/:8080\b/, ':\\d+')
        .replace(/:8081\b/, ':\\d+');
      assert.match(listeningLine(server), new RegExp(pattern), where(block));
      assert.equal(await stop(server), 0);
    } finally {
      checkout.remove();
    }
  });

  describe('examples of servers, and the commands run against them', () => {
    for (const block of blocks.filter((b) => b.lang === 'sh' && (b.kind === 'split' || b.kind === 'postgres'))) {
      it(`${where(block)}: each server starts as shown, and every command answers as shown`, async () => {
        const checkout = makeCheckout();
        const servers: StartedServer[] = [];
        try {
          const steps = shellSteps(block.text);
          // Free ports in place of those the docs show: the ones the commands name, and the defaults of a plain npm start.
          const ports = new Map<string, number>();
          for (const step of steps) {
            const shown = [...step.command.matchAll(/(?:--port |--grpc-port |localhost:)(\d{4,5})\b/g)].map(
              (m) => m[1],
            );
            if (/\bnpm start$/.test(step.command)) shown.push('8080', '8081');
            for (const port of shown) if (!ports.has(port)) ports.set(port, await freePort());
          }
          const env: Record<string, string> = {};
          let server = (text: string) => text;
          if (block.kind === 'postgres') {
            // The server the docs call db.example.com is the run's cluster, asked as its superuser.
            const pg = await sharedPostgres();
            Object.assign(env, {
              PGHOST: '127.0.0.1',
              PGPORT: String(pg.port),
              PGUSER: PG_USER,
              PGPASSWORD: PG_PASSWORD,
              PGDATABASE: 'postgres',
            });
            server = (text) => text.split('db.example.com:5432').join(`127.0.0.1:${pg.port}`);
          }
          const onFree = (text: string) =>
            server(text.replace(/\b(\d{4,5})\b/g, (p) => String(ports.get(p) ?? p)))
              .split(SHOWN_CHECKOUT)
              .join(checkout.dir);
          // The files its page writes before it, since its last example, with the same ports.
          const page = blocks.filter((b) => b.file === block.file);
          const before = page.slice(0, page.indexOf(block));
          const last = before.map((b) => b.attributes.file === undefined).lastIndexOf(true);
          for (const file of before.slice(last + 1)) checkout.write(file.attributes.file, onFree(file.text));
          for (const step of steps) {
            const what = `${where(block)}: ${step.command}`;
            let command = onFree(step.command);
            const shown = step.comment.map(onFree);
            if (/\bnpm (start|run gatehouse -- (start|serve))\b/.test(command)) {
              if (/\bnpm start$/.test(command))
                command += ` -- --port ${ports.get('8080')} --grpc-port ${ports.get('8081')}`;
              const started = await startIn(command, checkout, env);
              servers.push(started);
              if (/ listening on /.test(shown.join(''))) assertLines(listeningLine(started), shown, what);
            } else if (/^curl /.test(command)) {
              const run = await runShell(command.replace(/^curl /, 'curl -s -S -i '), checkout.dir, env);
              assert.equal(run.code, 0, `${what}\n${run.stderr}`);
              assertClaims(parsePrinted(run.stdout), shown.join('\n'), what);
            } else {
              const run = await runShell(command, checkout.dir, env);
              assert.equal(run.code, 0, `${what}\n${run.stdout}${run.stderr}`);
              assertLines(run.stdout, shown, what);
            }
          }
          for (const started of servers.splice(0)) assert.equal(await stop(started), 0, started.output());
        } finally {
          await Promise.all(servers.map(stop));
          checkout.remove();
        }
      });
    }
  });

  describe("the README's first commands", () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const block of blocks.filter((b: Block) => b.lang === 'sh' && b.kind === 'commands')) {
      it(`${where(block)}: run scripts the package has, and the demo listens where they say`, () => {
        const defaults = resolveOptions({}, {});
        for (const step of shellSteps(block.text)) {
          for (const m of step.command.matchAll(/npm (?:run )?(start|test)\b/g))
            assert.ok(pkg.scripts[m[1]], `package.json has no ${m[1]} script`);
          for (const m of step.comment.join(' ').matchAll(/(HTTP|gRPC rate limits) on ([\d.]+):(\d+)/g)) {
            const [, what, host, port] = m;
            assert.equal(host, what === 'HTTP' ? defaults.host : defaults.grpcHost, `${where(block)}: ${m[0]}`);
            assert.equal(Number(port), what === 'HTTP' ? defaults.port : defaults.grpcPort, `${where(block)}: ${m[0]}`);
          }
        }
      });
    }
  });
});
