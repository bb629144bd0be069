import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoGenerator } from '../../src/cli/demo-generator.js';
import { PACKAGE_ROOT } from '../../src/config/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// The web UI in a real browser against a real server: sign-in, navigation, a search and
// its count, an event, a query error, an expired session, every page's accessibility
// (axe) and screenshots (test-artifacts/ui/). The accessible names used here are the
// UI's contract with its users and with this test.

const CHROMIUM = process.env.LOGSCOPE_TEST_CHROMIUM ?? '/usr/bin/chromium';
const REQUIRE_BROWSER = process.env.LOGSCOPE_TEST_REQUIRE_BROWSER === '1';
const SKIP = !existsSync(CHROMIUM) && !REQUIRE_BROWSER;
const ARTIFACTS = path.join(PACKAGE_ROOT, 'test-artifacts', 'ui');
const EVENTS = 2000;
const USERNAME = 'operator';
const PASSWORD = 'operator-password-1';
const NAV = ['Search', 'Dashboards', 'Tasks', 'Triggers', 'Reports', 'Settings'] as const;
/** Made through the API before the pages are opened; each list page must show its item. */
const SEED = {
  '/api/dashboards': { title: 'Web traffic' },
  '/api/tasks': { title: 'Investigate the 500s on web-3', priority: 'high', due_date: '2020-01-01' },
  '/api/triggers': {
    name: 'Failed root logins',
    query: 'action:login_failure user:root',
    severity: 'critical',
  },
};
const SHOWN: Partial<Record<(typeof NAV)[number], string>> = {
  Dashboards: 'Web traffic',
  Tasks: 'Investigate the 500s on web-3',
  Triggers: 'Failed root logins',
};

if (SKIP)
  console.warn(
    `test/e2e/ui.test.ts: skipped, no Chromium at ${CHROMIUM} (set LOGSCOPE_TEST_CHROMIUM; LOGSCOPE_TEST_REQUIRE_BROWSER=1 makes this a failure)`,
  );

interface AxeFinding {
  page: string;
  id: string;
  impact: string | null | undefined;
  help: string;
  nodes: string[];
}

describe.skipIf(SKIP)(
  SKIP ? `the web UI in Chromium (skipped: no Chromium at ${CHROMIUM})` : 'the web UI in Chromium',
  () => {
    let t: TestApp;
    let base: string;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    const findings: AxeFinding[] = [];
    const consoleErrors: string[] = [];

    /** The API's own answer for a query: what the UI must show. */
    async function apiSearch(query: string): Promise<{ total: number } | { error: string }> {
      const auth = { authorization: `token ${t.adminToken}` };
      let res = await t.app.inject({
        method: 'POST',
        url: '/api/query',
        headers: auth,
        payload: { type: 'Search', params: { query, time_range: { preset: 'last_24_hours' } } },
      });
      if (res.statusCode === 400) return { error: res.json().detail as string };
      for (let i = 0; res.json().status !== 'SUCCESS' && i < 100; i++) {
        await new Promise((r) => setTimeout(r, 100));
        res = await t.app.inject({ method: 'GET', url: `/api/query/${res.json().query_id}`, headers: auth });
      }
      expect(res.json().status).toBe('SUCCESS');
      return { total: res.json().results.total as number };
    }

    /** axe on the page as it is: serious and critical findings fail, the others are reported. */
    async function axe(name: string) {
      const result = await new AxeBuilder({ page }).analyze();
      expect(result.passes.length, 'axe checked something').toBeGreaterThan(0);
      const serious: string[] = [];
      for (const v of result.violations) {
        findings.push({
          page: name,
          id: v.id,
          impact: v.impact,
          help: v.help,
          nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
        });
        if (v.impact === 'serious' || v.impact === 'critical')
          serious.push(
            `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
          );
      }
      expect(serious, `axe on ${name}`).toEqual([]);
    }

    const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
    const status = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
    const queryBox = () => page.getByRole('textbox', { name: 'Query' });
    // The query box is CodeMirror's contenteditable once the editor has loaded, an input before.
    const queryText = () =>
      queryBox().evaluate((el) =>
        el.tagName === 'INPUT' ? String((el as unknown as { value: string }).value) : (el.textContent ?? ''),
      );

    beforeAll(async () => {
      if (!existsSync(CHROMIUM))
        throw new Error(
          `No Chromium at ${CHROMIUM} and LOGSCOPE_TEST_REQUIRE_BROWSER=1: install it or set LOGSCOPE_TEST_CHROMIUM`,
        );
      // The UI (and server) build, as the first `npm start` makes it.
      execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
        cwd: PACKAGE_ROOT,
        stdio: 'pipe',
        timeout: 110_000,
      });
      expect(existsSync(path.join(PACKAGE_ROOT, 'dist', 'ui', 'index.html'))).toBe(true);
      mkdirSync(ARTIFACTS, { recursive: true });

      t = await createTestApp();
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = t.app.server.address() as { port: number };
      base = `http://127.0.0.1:${port}`;
      const auth = { authorization: `token ${t.adminToken}` };
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/users',
        headers: auth,
        payload: { username: USERNAME, password: PASSWORD, is_admin: true },
      });
      expect(created.statusCode).toBe(201);

      // Demo events over the last 24 hours (ending a minute ago, so "Last 24 hours" holds
      // them all whenever the UI and the API ask).
      const gen = demoGenerator(7);
      const to = Date.now() - 60_000;
      const from = Date.now() - 23.5 * 3_600_000;
      const lines: string[] = [];
      for (let i = 0; i < EVENTS; i++)
        lines.push(JSON.stringify(gen.next(Math.round(from + ((to - from) * i) / EVENTS))));
      const ingested = await t.app.inject({
        method: 'POST',
        url: '/api/ingest',
        headers: { ...auth, 'content-type': 'application/x-ndjson' },
        payload: `${lines.join('\n')}\n`,
      });
      expect(ingested.json()).toMatchObject({ accepted: EVENTS, rejected: 0 });
      // One of each for the list pages, the operator's own (lists show the caller's).
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: USERNAME, password: PASSWORD },
      });
      const operator = { authorization: `token ${login.json().secret_key}` };
      for (const [url, payload] of Object.entries(SEED)) {
        const res = await t.app.inject({ method: 'POST', url, headers: operator, payload });
        expect([200, 201], `${url}: ${res.body}`).toContain(res.statusCode);
      }

      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
        ],
        timeout: 20_000,
      });
      // A fresh profile: launch() gives each browser a temporary user-data dir.
      context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
      page = await context.newPage();
      page.setDefaultTimeout(10_000);
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
        // React says this only in a development build: dist/ui must be a production one.
        if (m.text().includes('React DevTools')) consoleErrors.push(`development build: ${m.text()}`);
      });
      page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
    }, 120_000);

    afterAll(async () => {
      if (findings.length > 0 || consoleErrors.length > 0) {
        mkdirSync(ARTIFACTS, { recursive: true });
        writeFileSync(
          path.join(ARTIFACTS, 'findings.json'),
          `${JSON.stringify({ axe: findings, console: consoleErrors }, null, 2)}\n`,
        );
        if (findings.length > 0)
          console.info(
            `axe (moderate/minor): ${findings.map((f) => `${f.page}: ${f.id} (${f.impact})`).join('; ')}`,
          );
      }
      await context?.close().catch(() => {});
      await browser?.close().catch(() => {});
      await t?.close();
    }, 30_000);

    it('serves the sign-in page at / to a browser, without a token', async () => {
      const res = await page.goto(`${base}/`);
      expect(res?.status()).toBe(200);
      expect(res?.headers()['content-security-policy']).toBe(
        "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
      );
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await page.waitForURL(/\/login/);
      await shot('login');
      await axe('sign-in');
    });

    it('refuses a wrong password with an alert, then signs in and lands on Search', async () => {
      await page.getByLabel('Username').fill(USERNAME);
      await page.getByLabel('Password').fill('not-the-password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).toBeTruthy();

      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((u) => u.pathname === '/search');
      await queryBox().waitFor();
    });

    it('has the main navigation with every page', async () => {
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.waitFor();
      const links = nav.getByRole('link');
      expect(await links.allInnerTexts()).toEqual([...NAV]);
      expect(await nav.getByRole('link', { name: 'Search' }).getAttribute('aria-current')).toBe('page');
    });

    it('searches the last 24 hours and shows the count the API gives, and the rows', async () => {
      const query = 'status:>=400';
      const expected = await apiSearch(query);
      if (!('total' in expected)) throw new Error(expected.error);
      expect(expected.total).toBeGreaterThan(0);

      await queryBox().fill(query);
      await page.getByLabel('Time range').selectOption({ label: 'Last 24 hours' });
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      const text = `${expected.total.toLocaleString('en-US')} events`;
      await expect.poll(() => status().textContent(), { timeout: 10_000 }).toBe(text);
      expect(text).toMatch(/^[\d,]+ events$/);
      expect(new URL(page.url()).searchParams.get('q')).toBe(query);

      const results = page.getByRole('region', { name: 'Results' });
      const rows = results.locator('tbody').getByRole('row');
      await expect.poll(() => rows.count(), { timeout: 10_000 }).toBeGreaterThan(0);
      expect(await results.locator('tbody tr').first().textContent()).not.toContain('Loading');
      await shot('search');
      await axe('search');

      // And everything: the whole demo set.
      await queryBox().fill('');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await expect
        .poll(() => status().textContent(), { timeout: 10_000 })
        .toBe(`${EVENTS.toLocaleString('en-US')} events`);
    });

    it('opens an event in the "Event" dialog with its message; Esc closes it', async () => {
      const row = page.getByRole('region', { name: 'Results' }).locator('tbody').getByRole('row').first();
      const message = (await row.getByRole('cell').last().textContent()) ?? '';
      expect(message).not.toBe('');
      await row.click();
      const dialog = page.getByRole('dialog', { name: 'Event' });
      await dialog.waitFor();
      await expect.poll(() => dialog.textContent()).toContain(message);
      await shot('search-event');
      await axe('event dialog');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
    });

    it("shows a query's syntax error as an alert with the server's message, keeping the text", async () => {
      const bad = 'status:(500 OR';
      const expected = await apiSearch(bad);
      if (!('error' in expected)) throw new Error(`"${bad}" is valid: ${JSON.stringify(expected)}`);
      await queryBox().fill(bad);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toContain(expected.error);
      expect(await queryText()).toBe(bad);
      await shot('search-error');
      await axe('search with an error');
    });

    for (const name of NAV.filter((n) => n !== 'Search')) {
      it(`opens ${name} from the navigation`, async () => {
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();
        await page.waitForURL((u) => u.pathname === `/${name.toLowerCase()}`);
        await page.getByRole('heading', { level: 1, name }).waitFor();
        // Loaded: no "Loading…" left.
        await expect.poll(() => page.getByText('Loading…').count(), { timeout: 10_000 }).toBe(0);
        expect(await page.title()).toContain(name);
        const item = SHOWN[name];
        if (item) await page.getByText(item, { exact: true }).waitFor();
        await shot(name.toLowerCase());
        await axe(name);
      });
    }

    it('reloads a page at its own address (the server answers index.html)', async () => {
      const res = await page.goto(`${base}/tasks`);
      expect(res?.status()).toBe(200);
      await page.getByRole('heading', { level: 1, name: 'Tasks' }).waitFor();
    });

    it('fits a phone (390×844)', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      try {
        await page.goto(`${base}/search`);
        await queryBox().waitFor();
        await expect.poll(() => status().textContent(), { timeout: 10_000 }).toMatch(/^[\d,]+ events$/);
        const overflow = await page.evaluate<number>(
          'document.documentElement.scrollWidth - window.innerWidth',
        );
        expect(overflow, 'no horizontal scrolling of the page').toBeLessThanOrEqual(0);
        await shot('search-mobile');
        await axe('search (phone)');
      } finally {
        await page.setViewportSize({ width: 1280, height: 800 });
      }
    });

    it('goes back to sign-in when the session ends (an API 401), and returns after signing in', async () => {
      await page.goto(`${base}/search?q=error`);
      await queryBox().waitFor();
      const token = await page.evaluate<string | null>("window.localStorage.getItem('logscope.token')");
      expect(token).toBeTruthy();
      const deleted = await t.app.inject({
        method: 'DELETE',
        url: `/api/authtokens/${token}`,
        headers: { authorization: `token ${token}` },
      });
      expect(deleted.statusCode).toBe(204);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.waitForURL((u) => u.pathname === '/login');
      await page.getByRole('button', { name: 'Sign in' }).waitFor();

      await page.getByLabel('Username').fill(USERNAME);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((u) => u.pathname === '/search');
      expect(await queryText()).toBe('error');
    });

    it('logged no errors in the browser console', () => {
      // 401s of the expired session and the wrong password are the browser's own network lines.
      const unexpected = consoleErrors.filter((e) => !/status of 40[01]/.test(e));
      expect(unexpected).toEqual([]);
    });
  },
);
