import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AxeFinding,
  axe,
  type Browsing,
  closeAll,
  createUser,
  demoEvents,
  describeBrowser,
  ingest,
  type LiveApp,
  openBrowser,
  queryBox as queryBoxOf,
  queryText as queryTextOf,
  shot,
  startApp,
  storedToken,
  writeFindings,
} from './browser.js';

// The web UI in a real browser against a real server: sign-in, navigation, a search and
// its count, an event, a query error, an expired session, every page's accessibility
// (axe) and screenshots (test-artifacts/ui/). The accessible names used here are the
// UI's contract with its users and with this test. Setup: ./browser.ts.

const EVENTS = 2000;
const USERNAME = 'operator';
const PASSWORD = 'operator-password-1';
const NAV = [
  'Search',
  'Dashboards',
  'Metrics',
  'Tasks',
  'Triggers',
  'Alerting',
  'Reports',
  'Schedules',
  'Settings',
] as const;
/** Made through the API before the pages are opened; each list page must show its item. */
const SEED = {
  '/api/dashboards': { title: 'Web traffic' },
  '/api/tasks': { title: 'Investigate the 500s on web-3', priority: 'high', due_date: '2020-01-01' },
  '/api/triggers': {
    name: 'Failed root logins',
    query: 'action:login_failure user:root',
    severity: 'critical',
  },
  '/api/log-metrics': { name: 'web_requests', query: 'app:web' },
};
/** A page's address when it is not its name in lower case (`/metrics` is Prometheus'). */
const PATHS: Partial<Record<(typeof NAV)[number], string>> = { Metrics: '/log-metrics' };
const SHOWN: Partial<Record<(typeof NAV)[number], string>> = {
  Dashboards: 'Web traffic',
  Tasks: 'Investigate the 500s on web-3',
  Triggers: 'Failed root logins',
  Metrics: 'web_requests',
};

describeBrowser('test/browser/ui.test.ts', 'the web UI in Chromium', () => {
  let server: LiveApp;
  let t: LiveApp['t'];
  let base: string;
  let b: Browsing;
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

  const status = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
  const queryBox = () => queryBoxOf(page);
  const queryText = () => queryTextOf(page);

  beforeAll(async () => {
    server = await startApp();
    ({ t, base } = server);
    const operatorToken = await createUser(t, { username: USERNAME, password: PASSWORD, admin: true });

    // Demo events over the last 24 hours (ending a minute ago, so "Last 24 hours" holds
    // them all whenever the UI and the API ask).
    await ingest(t, demoEvents(7, EVENTS, Date.now() - 23.5 * 3_600_000, Date.now() - 60_000));
    // One of each for the list pages, the operator's own (lists show the caller's).
    const operator = { authorization: `token ${operatorToken}` };
    for (const [url, payload] of Object.entries(SEED)) {
      const res = await t.app.inject({ method: 'POST', url, headers: operator, payload });
      expect([200, 201], `${url}: ${res.body}`).toContain(res.statusCode);
    }

    b = await openBrowser({ consoleErrors });
    page = b.page;
  }, 120_000);

  afterAll(async () => {
    writeFindings('findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('serves the sign-in page at / to a browser, without a token', async () => {
    const res = await page.goto(`${base}/`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toBe(
      "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
    );
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.waitForURL(/\/login/);
    await shot(page, 'login');
    await axe(page, 'sign-in', findings);
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
    await page.getByRole('button', { name: /^Time range: / }).click();
    await page
      .getByRole('dialog', { name: 'Time range' })
      .getByRole('button', { name: 'Last 24 hours' })
      .click();
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const text = `${expected.total.toLocaleString('en-US')} events`;
    await expect.poll(() => status().textContent(), { timeout: 10_000 }).toBe(text);
    expect(text).toMatch(/^[\d,]+ events$/);
    expect(new URL(page.url()).searchParams.get('q')).toBe(query);

    const results = page.getByRole('region', { name: 'Results' });
    const rows = results.locator('tbody').getByRole('row');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await results.locator('tbody tr').first().textContent()).not.toContain('Loading');
    await shot(page, 'search');
    await axe(page, 'search', findings);

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
    await shot(page, 'search-event');
    await axe(page, 'event dialog', findings);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  it("acts on an event's fields from its dialog: top values, then filter for a value", async () => {
    const row = page.getByRole('region', { name: 'Results' }).locator('tbody').getByRole('row').first();
    await row.click();
    const dialog = page.getByRole('dialog', { name: 'Event' });
    await dialog.waitFor();
    // The hints come with the event (actions_hint): Top values of its host.
    await dialog.getByRole('button', { name: 'Top values: host' }).click();
    const result = dialog.locator('.hint-result');
    await result.getByRole('heading', { name: /Top values of host/ }).waitFor();
    await result.getByRole('heading', { name: 'Top values of host in this search' }).waitFor();
    const shown = await result.locator('li').allTextContents();
    // As the API counts the hosts of the same search.
    const top = (
      await t.app.inject({
        method: 'POST',
        url: '/api/query',
        headers: { authorization: `token ${t.adminToken}` },
        payload: { type: 'TopN', params: { field: 'host', n: 10, time_range: { preset: 'last_24_hours' } } },
      })
    ).json() as { results: { items: Array<{ value: string; count: number }> } };
    expect(shown).toEqual(top.results.items.map((i) => `${i.value} ${i.count.toLocaleString('en-US')}`));
    await shot(page, 'search-event-hints');
    await axe(page, 'event dialog with top values', findings);
    // Filter for the event's host: the dialog closes, the query narrows to it.
    const host =
      (await dialog
        .locator('tr')
        .filter({ has: page.getByRole('rowheader', { name: 'host', exact: true }) })
        .getByRole('cell')
        .first()
        .textContent()) ?? '';
    expect(host).not.toBe('');
    await dialog.getByRole('button', { name: 'Filter for value: host' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => queryText()).toContain(`host:"${host}"`);
    const expected = await apiSearch(`host:"${host}"`);
    if ('error' in expected) throw new Error(expected.error);
    await expect
      .poll(() => status().textContent(), { timeout: 10_000 })
      .toBe(`${expected.total.toLocaleString('en-US')} events`);
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
    await shot(page, 'search-error');
    await axe(page, 'search with an error', findings);
  });

  for (const name of NAV.filter((n) => n !== 'Search')) {
    it(`opens ${name} from the navigation`, async () => {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();
      await page.waitForURL((u) => u.pathname === (PATHS[name] ?? `/${name.toLowerCase()}`));
      await page.getByRole('heading', { level: 1, name }).waitFor();
      // Loaded: no "Loading…" left.
      await expect.poll(() => page.getByText('Loading…').count(), { timeout: 10_000 }).toBe(0);
      expect(await page.title()).toContain(name);
      const item = SHOWN[name];
      if (item) await page.getByText(item, { exact: true }).waitFor();
      await shot(page, name.toLowerCase());
      await axe(page, name, findings);
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
      await shot(page, 'search-mobile');
      await axe(page, 'search (phone)', findings);
      // The navigation folds into a Menu button; Esc from inside closes it and returns the focus.
      const menu = page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Menu' });
      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tasks' }).focus();
      await page.keyboard.press('Escape');
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await menu.evaluate((el) => el === document.activeElement)).toBe(true);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('goes back to sign-in when the session ends (an API 401), and returns after signing in', async () => {
    await page.goto(`${base}/search?q=error`);
    await queryBox().waitFor();
    const token = await storedToken(page);
    expect(token).toBeTruthy();
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/api/authtokens/${token}`,
      headers: { authorization: `token ${token}` },
    });
    expect(deleted.statusCode).toBe(204);
    // The page learns it from the search's 401, or sooner from its live connection, which
    // the server closes when the token is deleted: the button may be gone before the click.
    await page
      .getByRole('button', { name: 'Search', exact: true })
      .click({ timeout: 2000 })
      .catch(() => undefined);
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
});
