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
  ingest as ingestInto,
  type LiveApp,
  openBrowser,
  queryBox as queryBoxOf,
  queryText as queryTextOf,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The search page in a real browser against a real server: the field list (filter in and
// out, counts equal to the API's), the live tail (an event ingested during the test shows
// within 3 s; Pause holds new rows back), the phone layout, the navigation staying put and
// list counts in words. Setup: ./browser.ts.

const EVENTS = 1000;
const USERNAME = 'searcher';
const PASSWORD = 'searcher-password-1';

describeBrowser('test/browser/search.timed.test.ts', 'the search page in Chromium', () => {
  let server: LiveApp;
  let t: LiveApp['t'];
  let base: string;
  let b: Browsing;
  let page: Page;
  let userToken: string;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];
  const requested: string[] = [];

  const auth = () => ({ authorization: `token ${t.adminToken}` });

  /** The API's count for a query over the last 24 hours. */
  async function apiCount(query: string): Promise<number> {
    let res = await t.app.inject({
      method: 'POST',
      url: '/api/query',
      headers: auth(),
      payload: { type: 'Search', params: { query, time_range: { preset: 'last_24_hours' } } },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    for (let i = 0; res.json().status !== 'SUCCESS' && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await t.app.inject({
        method: 'GET',
        url: `/api/query/${res.json().query_id}`,
        headers: auth(),
      });
    }
    expect(res.json().status).toBe('SUCCESS');
    return res.json().results.total as number;
  }

  const ingest = (records: object[]) => ingestInto(t, records);

  const count = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
  const queryBox = () => queryBoxOf(page);
  const queryText = () => queryTextOf(page);
  const fields = () => page.getByRole('region', { name: 'Fields' });
  const results = () => page.getByRole('region', { name: 'Results' });
  const liveSwitch = () => page.getByRole('switch', { name: 'Live' });
  const events = (n: number) => `${n.toLocaleString('en-US')} events`;

  beforeAll(async () => {
    server = await startApp();
    ({ t, base } = server);
    userToken = await createUser(t, { username: USERNAME, password: PASSWORD, admin: true });
    const task = await t.app.inject({
      method: 'POST',
      url: '/api/tasks',
      headers: { authorization: `token ${userToken}` },
      payload: { title: 'Look at the field list', priority: 'low' },
    });
    expect([200, 201]).toContain(task.statusCode);

    // Demo events over the last 23 hours, ending two minutes ago.
    await ingest(demoEvents(11, EVENTS, Date.now() - 23 * 3_600_000, Date.now() - 120_000));

    // Signed in: the token where the UI keeps it.
    b = await openBrowser({ token: userToken, consoleErrors });
    page = b.page;
    page.on('request', (r) => requested.push(r.url()));
  }, 120_000);

  afterAll(async () => {
    writeFindings('search-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('lists the fields of the results; "Filter for" and "Filter out" narrow the query', async () => {
    await page.goto(`${base}/search?range=last_24_hours`);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS));
    const panel = fields();
    await panel.waitFor();
    const host = panel.getByRole('button', { name: /^host [\d,]+$/ });
    await host.click();
    expect(await host.getAttribute('aria-expanded')).toBe('true');

    const filterFor = panel.getByRole('button', { name: /^Filter for host:/ }).first();
    const label = (await filterFor.getAttribute('aria-label')) ?? '';
    const value = label.replace(/^Filter for host:/, '');
    expect(value).not.toBe('');
    await filterFor.click();
    const query = `host:"${value}"`;
    await expect.poll(() => queryText()).toBe(query);
    const expected = await apiCount(query);
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(EVENTS);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(expected));
    expect(new URL(page.url()).searchParams.get('q')).toBe(query);
    // The list follows the new query: every sampled event has that host.
    await panel.getByRole('button', { name: `host ${expected.toLocaleString('en-US')}` }).waitFor();

    // Filter out the same value: the opposite term replaces it.
    // The field stays open across searches.
    expect(await panel.getByRole('button', { name: /^host [\d,]+$/ }).getAttribute('aria-expanded')).toBe(
      'true',
    );
    await panel.getByRole('button', { name: `Filter out host:${value}` }).click();
    await expect.poll(() => queryText()).toBe(`-${query}`);
    const rest = await apiCount(`-${query}`);
    expect(rest).toBe(EVENTS - expected);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(rest));

    // A second field's value joins the query.
    const severity = panel.getByRole('button', { name: /^severity [\d,]+$/ });
    await severity.click();
    const sev = panel.getByRole('button', { name: /^Filter for severity:/ }).first();
    const sevValue = ((await sev.getAttribute('aria-label')) ?? '').replace(/^Filter for severity:/, '');
    await sev.click();
    const both = `-${query} severity:"${sevValue}"`;
    await expect.poll(() => queryText()).toBe(both);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(await apiCount(both)));

    await panel.getByRole('button', { name: 'Top values' }).first().click();
    await panel.getByText(/^Top 10 of [\d,]+ events with/).waitFor();
    await shot(page, 'search-fields');
    await axe(page, 'search with the field list', findings);
  });

  it('tails live: an event ingested now shows within 3 s; Pause holds rows back; off unsubscribes', async () => {
    await queryBox().fill('');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS));

    const sw = liveSwitch();
    expect(await sw.getAttribute('aria-checked')).toBe('false');
    await sw.click();
    expect(await sw.getAttribute('aria-checked')).toBe('true');
    const state = page.getByRole('status').filter({ hasText: /^(Live|Connecting…|Reconnecting…|Paused.*)$/ });
    await expect.poll(() => state.textContent(), { timeout: 10_000 }).toBe('Live');
    // The newest matches of the window are there first.
    await expect.poll(() => results().locator('tbody tr.event-row').count()).toBeGreaterThan(0);

    const rowWith = (text: string) => results().locator('tbody tr').filter({ hasText: text });
    const started = Date.now();
    await ingest([
      {
        ts: Date.now() / 1000,
        host: 'probe-1',
        app: 'probe',
        severity: 'warning',
        message: 'live probe one',
      },
    ]);
    await rowWith('live probe one').waitFor({ timeout: 3000 });
    const took = Date.now() - started;
    expect(took).toBeLessThan(3000);
    // Newest first: the probe is the first row.
    expect(await results().locator('tbody tr').first().textContent()).toContain('live probe one');
    await shot(page, 'search-live');
    await axe(page, 'search, live', findings);

    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => state.textContent()).toMatch(/^Paused/);
    await ingest([
      { ts: Date.now() / 1000, host: 'probe-2', app: 'probe', severity: 'info', message: 'live probe two' },
    ]);
    await expect.poll(() => state.textContent(), { timeout: 3000 }).toBe('Paused: 1 new');
    expect(await rowWith('live probe two').count()).toBe(0);
    await page.getByRole('button', { name: 'Resume' }).click();
    await rowWith('live probe two').waitFor({ timeout: 3000 });
    expect(await results().locator('tbody tr').first().textContent()).toContain('live probe two');

    // Off: a normal search again, and the server has no subscriber for the tail.
    await sw.click();
    expect(await sw.getAttribute('aria-checked')).toBe('false');
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS + 2));
    expect(await state.count()).toBe(0);
  });

  it('fits a phone: severity badges inside their cells, the placeholder inside the box', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    // The plain box's placeholder is measured here (the editor draws its own).
    await page.evaluate("window.localStorage.setItem('logscope.queryEditor', 'plain')");
    try {
      await page.goto(`${base}/search?range=last_24_hours`);
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS + 2));
      await expect.poll(() => results().locator('tbody .sev').count()).toBeGreaterThan(0);
      const overflows = await page.evaluate(`(() => {
          const bad = [];
          for (const badge of document.querySelectorAll('tbody .sev')) {
            const cell = badge.closest('td').getBoundingClientRect();
            const b = badge.getBoundingClientRect();
            if (b.right > cell.right + 0.5) bad.push(badge.textContent);
          }
          return bad;
        })()`);
      expect(overflows).toEqual([]);
      const placeholder = await page.evaluate<{ text: number; box: number }>(`(() => {
          const input = document.querySelector('input#query');
          const s = getComputedStyle(input);
          const ctx = document.createElement('canvas').getContext('2d');
          ctx.font = s.font;
          return {
            text: ctx.measureText(input.placeholder).width,
            box: input.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight),
          };
        })()`);
      expect(placeholder.text).toBeLessThanOrEqual(placeholder.box);
      const overflow = await page.evaluate<number>(
        'document.documentElement.scrollWidth - window.innerWidth',
      );
      expect(overflow).toBeLessThanOrEqual(0);
      // The field list folds away on a phone and opens on demand.
      const toggle = fields().getByRole('button', { name: 'Fields' });
      expect(await toggle.getAttribute('aria-expanded')).toBe('false');
      await toggle.click();
      await fields()
        .getByRole('button', { name: /^host [\d,]+$/ })
        .waitFor();
      await shot(page, 'search-fields-mobile');
      await axe(page, 'search (phone)', findings);
    } finally {
      await page.evaluate("window.localStorage.removeItem('logscope.queryEditor')");
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('keeps the navigation links in place whichever is active; counts one task as "1 task"', async () => {
    const nav = page.getByRole('navigation', { name: 'Main' });
    const boxes = async () =>
      Promise.all((await nav.getByRole('link').all()).map(async (l) => (await l.boundingBox())?.x ?? -1));
    await page.goto(`${base}/search`);
    await nav.waitFor();
    const before = await boxes();
    await nav.getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Tasks' }).waitFor();
    expect(await boxes()).toEqual(before);
    await page.getByText('1 task', { exact: true }).waitFor();
  });

  it('loads CodeMirror after the page (a chunk of its own): highlighting, completion, Enter searches, / focuses', async () => {
    // A chunk of its own, fetched after the page: not part of the initial JavaScript.
    expect(requested.some((u) => /QueryEditor-[\w-]+\.js$/.test(u))).toBe(true);
    await page.evaluate("window.localStorage.setItem('logscope.queryEditor', 'codemirror')");
    try {
      await page.goto(`${base}/search?range=last_24_hours`);
      const editor = page.locator('.cm-content[aria-label="Query"]');
      await editor.waitFor();
      expect(await page.locator('input#query').count()).toBe(0);
      expect(requested.some((u) => /QueryEditor-[\w-]+\.js$/.test(u))).toBe(true);
      // The same contract as the input: a textbox named "Query" that fill() types into.
      const box = queryBox();
      await box.fill('NOT timeout AND host:');
      const listbox = page.getByRole('listbox');
      await listbox.waitFor({ timeout: 5000 });
      const options = await listbox.getByRole('option').allInnerTexts();
      expect(options.length).toBeGreaterThan(0);
      // CodeMirror ignores Enter for 75 ms after the list opens (interactionDelay), so a
      // quick Enter searches rather than picks; a person reads the list first.
      await page.waitForTimeout(150);
      await page.keyboard.press('Enter');
      const query = ((await box.textContent()) ?? '').trim();
      expect(query).toMatch(/^NOT timeout AND host:"[^"]+"$/);
      // Highlighting: the field name, the value and the keyword are told apart.
      const colour = (text: string) =>
        editor
          .locator('span')
          .filter({ hasText: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) })
          .first()
          .evaluate((el) => getComputedStyle(el).color);
      const [field, keyword, value] = await Promise.all([
        colour('host'),
        colour('AND'),
        colour(query.slice(query.indexOf('"'))),
      ]);
      expect(new Set([field, keyword, value]).size).toBe(3);
      await shot(page, 'search-editor');
      // Enter searches (no line break) and the count is the API's.
      await box.press('Enter');
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(await apiCount(query)));
      expect(await editor.locator('.cm-line').count()).toBe(1);
      expect(new URL(page.url()).searchParams.get('q')).toBe(query);
      // `/` from elsewhere focuses it.
      await count().click();
      await page.keyboard.press('/');
      expect(await editor.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
      // A filter from the field list reaches the editor.
      const sev = fields().getByRole('button', { name: /^severity [\d,]+$/ });
      await sev.click();
      const filter = fields()
        .getByRole('button', { name: /^Filter out severity:/ })
        .first();
      const sevValue = ((await filter.getAttribute('aria-label')) ?? '').replace(/^Filter out severity:/, '');
      await filter.click();
      await expect
        .poll(async () => (await box.textContent())?.trim())
        .toBe(`${query} -severity:"${sevValue}"`);
      await axe(page, 'search with the CodeMirror query box', findings);
    } finally {
      await page.evaluate("window.localStorage.removeItem('logscope.queryEditor')");
    }
  });

  it('logged no errors in the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
