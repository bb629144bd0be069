import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import axeCore from 'axe-core';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core';
import { describe, expect } from 'vitest';
import { buildApp } from '../../src/app.js';
import { demoGenerator } from '../../src/cli/demo-generator.js';
import { PACKAGE_ROOT } from '../../src/config/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// What every browser test shares: Debian's Chromium (or LOGSCOPE_TEST_CHROMIUM) driven by
// playwright-core, headless with a fresh profile, against a real server on a free port
// with the UI built as the first `npm start` builds it; users, demo events, signing in,
// screenshots (test-artifacts/ui/) and axe. Without Chromium the suites skip with a
// message; LOGSCOPE_TEST_REQUIRE_BROWSER=1 (set by .ci/run) makes that a failure.

export const CHROMIUM = process.env.LOGSCOPE_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const REQUIRE_BROWSER = process.env.LOGSCOPE_TEST_REQUIRE_BROWSER === '1';
const SKIP = !existsSync(CHROMIUM) && !REQUIRE_BROWSER;
export const ARTIFACTS = path.join(PACKAGE_ROOT, 'test-artifacts', 'ui');

/** Chromium's flags: headless, no sandbox (containers, root), nothing phoning home. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * A suite that needs Chromium: skipped with a message (and a title that says so) when
 * there is none, unless LOGSCOPE_TEST_REQUIRE_BROWSER=1.
 */
export function describeBrowser(file: string, title: string, body: () => void): void {
  if (SKIP)
    console.warn(
      `${file}: skipped, no Chromium at ${CHROMIUM} (set LOGSCOPE_TEST_CHROMIUM; LOGSCOPE_TEST_REQUIRE_BROWSER=1 makes this a failure)`,
    );
  describe.skipIf(SKIP)(SKIP ? `${title} (skipped: no Chromium at ${CHROMIUM})` : title, body);
}

/** Throws when there is no Chromium (in a suite that runs: LOGSCOPE_TEST_REQUIRE_BROWSER=1). */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `No Chromium at ${CHROMIUM} and LOGSCOPE_TEST_REQUIRE_BROWSER=1: install it or set LOGSCOPE_TEST_CHROMIUM`,
    );
}

/** The UI (and server) build, as the first `npm start` makes it; the artefacts folder. */
export function buildUi(): void {
  requireChromium();
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
    cwd: PACKAGE_ROOT,
    stdio: 'pipe',
    timeout: 110_000,
  });
  expect(existsSync(path.join(PACKAGE_ROOT, 'dist', 'ui', 'index.html'))).toBe(true);
  mkdirSync(ARTIFACTS, { recursive: true });
}

/** A server under test, listening on 127.0.0.1. */
export interface LiveApp {
  t: TestApp;
  port: number;
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** The app serving now (a new one after `restart`). */
  readonly app: TestApp['app'];
  /**
   * The server going away and coming back on the same port over the same stores (as a
   * restart): the app is closed (websocket clients get 1001, new connections are
   * refused), `down` runs, then a new app listens. The new app is closed by `close`.
   */
  restart(down?: () => Promise<void>): Promise<void>;
  /**
   * Cuts every websocket connection at the TCP level, as a network failure does (no close
   * frame: the browser sees 1006). Returns how many there were.
   */
  cutWebsockets(): number;
  close(): Promise<void>;
}

/** Builds the UI, starts a test app (its own stores) and makes it listen on a free port (or `listenPort`). */
export async function startApp(env: Record<string, string> = {}, listenPort = 0): Promise<LiveApp> {
  buildUi();
  const t = await createTestApp(env);
  // The upgraded connections' sockets, for cutWebsockets.
  const upgraded = new Set<Duplex>();
  const track = (app: TestApp['app']) =>
    app.server.on('upgrade', (_request, socket: Duplex) => {
      upgraded.add(socket);
      socket.once('close', () => upgraded.delete(socket));
    });
  track(t.app);
  await t.app.listen({ port: listenPort, host: '127.0.0.1' });
  const { port } = t.app.server.address() as { port: number };
  let current = t.app;
  return {
    t,
    port,
    base: `http://127.0.0.1:${port}`,
    get app() {
      return current;
    },
    async restart(down) {
      await current.close();
      await down?.();
      // The same runtime (stores, query runner, tokens): what a restarted process reads back.
      current = await buildApp({ root: t.rt.root, checks: [] });
      track(current);
      await current.listen({ port, host: '127.0.0.1' });
    },
    cutWebsockets() {
      const n = upgraded.size;
      for (const socket of upgraded) socket.destroy();
      upgraded.clear();
      return n;
    },
    async close() {
      if (current !== t.app) await current.close();
      await t.close();
    },
  };
}

const auth = (token: string) => ({ authorization: `token ${token}` });

/** Creates a user with a password (as the admin) and signs them in: their session token. */
export async function createUser(
  t: TestApp,
  user: { username: string; password: string; admin: boolean },
): Promise<string> {
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/users',
    headers: auth(t.adminToken),
    payload: { username: user.username, password: user.password, is_admin: user.admin },
  });
  expect(created.statusCode).toBe(201);
  const login = await t.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username: user.username, password: user.password },
  });
  expect(login.statusCode).toBe(200);
  return login.json().secret_key as string;
}

/** Ingests records as NDJSON (as the admin); every one must be accepted. */
export async function ingest(to: TestApp | LiveApp, records: readonly object[]): Promise<void> {
  // A LiveApp's app is the one serving now (after a restart, the new one).
  const { app, token } =
    'rt' in to ? { app: to.app, token: to.adminToken } : { app: to.app, token: to.t.adminToken };
  const res = await app.inject({
    method: 'POST',
    url: '/api/ingest',
    headers: { ...auth(token), 'content-type': 'application/x-ndjson' },
    payload: `${records.map((r) => JSON.stringify(r)).join('\n')}\n`,
  });
  expect(res.json()).toMatchObject({ accepted: records.length, rejected: 0 });
}

/** `count` demo events (src/cli/demo-generator.ts) evenly from `fromMs` to `toMs`. */
export function demoEvents(seed: number, count: number, fromMs: number, toMs: number): object[] {
  const gen = demoGenerator(seed);
  const records: object[] = [];
  for (let i = 0; i < count; i++) records.push(gen.next(Math.round(fromMs + ((toMs - fromMs) * i) / count)));
  return records;
}

/** A browser, its context and a page. */
export interface Browsing {
  browser: Browser;
  context: BrowserContext;
  page: Page;
}

/**
 * Launches Chromium (launch() gives it a temporary, fresh user-data dir) and opens a page
 * at 1280×800, en-US, with a 10 s default timeout. Errors on the console and uncaught
 * page errors go to `consoleErrors`, as does a development build of React (dist/ui must
 * be a production one). With `token` the page starts signed in: the token where the UI
 * keeps it, unless one is there already.
 */
export async function openBrowser(
  opts: { context?: BrowserContextOptions; token?: string; consoleErrors?: string[] } = {},
): Promise<Browsing> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 20_000 });
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    locale: 'en-US',
    ...opts.context,
  });
  if (opts.token)
    await context.addInitScript(
      `window.localStorage.getItem('logscope.token') || window.localStorage.setItem('logscope.token', ${JSON.stringify(opts.token)})`,
    );
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const errors = opts.consoleErrors;
  if (errors) {
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
      if (m.text().includes('React DevTools')) errors.push(`development build: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  }
  return { browser, context, page };
}

/** Closes what was opened, whatever did not get opened. */
export async function closeAll(b: Partial<Browsing> | undefined, app: LiveApp | undefined): Promise<void> {
  await b?.context?.close().catch(() => {});
  await b?.browser?.close().catch(() => {});
  await app?.close();
}

/** Signs in on the sign-in page (at `/login`, with `next` when given). */
export async function signIn(
  page: Page,
  base: string | null,
  user: { username: string; password: string },
  next?: string,
): Promise<void> {
  if (base !== null) await page.goto(`${base}/login${next ? `?next=${encodeURIComponent(next)}` : ''}`);
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The session token the UI keeps. */
export const storedToken = (page: Page) =>
  page.evaluate<string | null>("window.localStorage.getItem('logscope.token')");

/** A screenshot of the page as test-artifacts/ui/<name>.png. */
export const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });

/** The query box: CodeMirror's contenteditable once the editor has loaded, an input before. */
export const queryBox = (page: Page) => page.getByRole('textbox', { name: 'Query' });
export const queryText = (page: Page) =>
  queryBox(page).evaluate((el) =>
    el.tagName === 'INPUT' ? String((el as unknown as { value: string }).value) : (el.textContent ?? ''),
  );

export interface AxeFinding {
  page: string;
  id: string;
  impact: string | null | undefined;
  help: string;
  nodes: string[];
}

/**
 * Every rule axe has but `hidden-content`, which answers only "needs review" for each hidden
 * element (never a violation) and took a third of a run's time on the search page.
 */
const ALL_AXE_RULES = axeCore
  .getRules()
  .map((r) => r.ruleId)
  .filter((id) => id !== 'hidden-content');
/**
 * WCAG AAA rules (enhanced contrast, ...): run and reported, not failed on. WCAG does not
 * recommend AAA as a requirement for whole sites, and our muted text is AA by design.
 */
const AAA_RULES = new Set(
  axeCore
    .getRules()
    .filter((r) => r.tags.includes('wcag2aaa'))
    .map((r) => r.ruleId),
);

/**
 * axe on the page as it is: serious and critical findings fail; every finding goes to
 * `findings` (when given) for the report.
 */
export async function axe(
  page: Page,
  name: string,
  findings?: AxeFinding[],
  opts: { include?: string } = {},
): Promise<void> {
  // Every rule axe has, not only the default set: the experimental and best-practice ones
  // too (label-content-name-mismatch, serious, is experimental and was never run).
  // axe-core itself, in the page: put there once per document (what @axe-core/playwright
  // did on every call, ~0.4 s), and asked for each violation's nodes but for only one node
  // of what passed (`resultTypes`), which is what made a run of every rule on the search
  // page 2.0 s, against 0.8 (issue 74: axe was 45 % of the browser tests' time).
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeCore.source);
  const result = await page.evaluate(
    ([rules, include]) =>
      (window as unknown as { axe: typeof axeCore }).axe.run(include ? { include: [include] } : document, {
        runOnly: { type: 'rule', values: rules },
        resultTypes: ['violations'],
      }),
    [ALL_AXE_RULES, opts.include ?? null] as const,
  );
  expect(result.passes.length, 'axe checked something').toBeGreaterThan(0);
  const serious: string[] = [];
  for (const v of result.violations) {
    findings?.push({
      page: name,
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
    });
    if ((v.impact === 'serious' || v.impact === 'critical') && !AAA_RULES.has(v.id))
      serious.push(
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
      );
  }
  expect(serious, `axe on ${name}`).toEqual([]);
}

/**
 * Writes test-artifacts/ui/<file> when axe reported anything below serious or the console
 * had errors, and lists the axe findings on the test output.
 */
export function writeFindings(
  file: string,
  findings: readonly AxeFinding[],
  consoleErrors: readonly string[],
) {
  if (findings.length === 0 && consoleErrors.length === 0) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(
    path.join(ARTIFACTS, file),
    `${JSON.stringify({ axe: findings, console: consoleErrors }, null, 2)}\n`,
  );
  if (findings.length > 0)
    console.info(
      `axe (moderate/minor): ${findings.map((f) => `${f.page}: ${f.id} (${f.impact})`).join('; ')}`,
    );
}
