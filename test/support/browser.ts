/**
 * @module test/support/browser
 * A real headless Chromium for tests that need a browser: Debian's chromium
 * (or `CHROMIUM_PATH`) driven by playwright-core, in a fresh profile each time.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The Chromium executable to use, or undefined when there is none. */
export function findChromium(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((path): path is string => !!path && existsSync(path));
}

/** Why browser tests are skipped, when they are. */
export const NO_CHROMIUM =
  'no Chromium found (set CHROMIUM_PATH or install the chromium package): skipping the browser tests';

/**
 * Skips the calling suite when there is no Chromium on a developer's machine;
 * under CI (which installs it) a missing Chromium is a failure, not a skip.
 */
export function requireChromium(suite: Mocha.Context): void {
  if (findChromium()) return;
  if (process.env.CI) throw new Error('no Chromium found: .ci/run installs the chromium package');
  console.log(`      ${NO_CHROMIUM}`);
  suite.skip();
}

/** A running browser with its own profile. */
export interface TestBrowser {
  readonly context: BrowserContext;
  newPage(): Promise<Page>;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

export interface LaunchOptions {
  /** Credentials the browser answers HTTP auth challenges with, as a user would type them in. */
  httpCredentials?: { username: string; password: string };
}

/** Starts Chromium headless in a temporary profile. Throws when there is no Chromium. */
export async function launchBrowser(options: LaunchOptions = {}): Promise<TestBrowser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error(NO_CHROMIUM);
  const profile = mkdtempSync(join(tmpdir(), 'gatehouse-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: [...CHROMIUM_ARGS],
      ...(options.httpCredentials ? { httpCredentials: options.httpCredentials } : {}),
    });
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  return {
    context,
    newPage: () => context.newPage(),
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Collects what a page reports as errors: console messages of type error and
 * uncaught exceptions. Read the array after the page has done its work.
 */
export function collectConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  return errors;
}

/** A server listening on 127.0.0.1, for a browser to load pages from. */
export interface LocalServer {
  /** `http://127.0.0.1:<port>`, the origin of its pages. */
  readonly origin: string;
  close(): Promise<void>;
}

/** Serves a request handler (a Koa app's `callback()`) on a free 127.0.0.1 port. */
export async function serveLocally(handler: RequestListener): Promise<LocalServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
