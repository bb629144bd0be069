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
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The search page's time picker (custom From/To, kept in the address), zooming to a span
// dragged across on the timeline, selectable columns, and the admin's Users section in Settings, in a real
// browser against a real server. Setup: ./browser.ts.

const EVENTS = 1000;
const USERNAME = 'ranger';
const PASSWORD = 'ranger-password-1';

describeBrowser(
  'test/browser/search-more.timed.test.ts',
  'time ranges, zoom, columns and users in Chromium',
  () => {
    let server: LiveApp;
    let t: LiveApp['t'];
    let base: string;
    let b: Browsing;
    let browser: Browsing['browser'];
    let page: Page;
    let userToken: string;
    const findings: AxeFinding[] = [];
    const consoleErrors: string[] = [];

    const auth = () => ({ authorization: `token ${t.adminToken}` });

    /** The API's count for a query over an absolute window. */
    async function apiCount(query: string, ts_from: number, ts_to: number): Promise<number> {
      let res = await t.app.inject({
        method: 'POST',
        url: '/api/query',
        headers: auth(),
        payload: { type: 'Search', params: { query, time_range: { ts_from, ts_to } } },
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

    const count = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
    const events = (n: number) => `${n.toLocaleString('en-US')} events`;
    const rangeButton = () => page.getByRole('button', { name: /^Time range: / });
    const fromInput = () => page.getByLabel('From', { exact: true });
    const toInput = () => page.getByLabel('To', { exact: true });
    const urlRange = () => {
      const p = new URL(page.url()).searchParams;
      return { from: Number(p.get('from')), to: Number(p.get('to')), range: p.get('range') };
    };
    /** A From/To value (`YYYY-MM-DD HH:mm:ss`) as the browser reads it (its own zone): Unix seconds. */
    const localSeconds = (value: string) =>
      page.evaluate((v) => Math.floor(new Date(v).getTime() / 1000), value);
    const localValue = (seconds: number) =>
      page.evaluate((s) => {
        const d = new Date(s * 1000);
        const p = (n: number) => String(n).padStart(2, '0');
        return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
      }, seconds);

    beforeAll(async () => {
      server = await startApp();
      ({ t, base } = server);
      userToken = await createUser(t, { username: USERNAME, password: PASSWORD, admin: true });

      // Demo events over the last 23 hours, ending two minutes ago.
      await ingest(t, demoEvents(11, EVENTS, Date.now() - 23 * 3_600_000, Date.now() - 120_000));

      // A zone away from UTC: From/To are the browser's wall-clock times.
      b = await openBrowser({ context: { timezoneId: 'America/New_York' }, token: userToken, consoleErrors });
      ({ browser, page } = b);
    }, 120_000);

    afterAll(async () => {
      writeFindings('search-more-findings.json', findings, consoleErrors);
      await closeAll(b, server);
    }, 30_000);

    it('custom From/To narrows the count to the API’s; the address keeps it across reload and Back', async () => {
      await page.goto(`${base}/search?range=last_24_hours`);
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS));
      await rangeButton().click();
      await fromInput().waitFor();

      // From after To is refused with an alert.
      const now = Math.floor(Date.now() / 1000);
      const from = await localValue(now - 10 * 3600);
      const to = await localValue(now - 5 * 3600);
      await fromInput().fill(to);
      await toInput().fill(from);
      await page.getByRole('button', { name: 'Apply range' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('From must be before To.');
      expect(urlRange().range).toBe('last_24_hours');

      await fromInput().fill(from);
      await toInput().fill(to);
      await page.getByRole('button', { name: 'Apply range' }).click();
      const tsFrom = await localSeconds(from);
      const tsTo = await localSeconds(to);
      await expect.poll(() => urlRange()).toEqual({ from: tsFrom, to: tsTo, range: null });
      expect(await page.getByRole('alert').count()).toBe(0);
      const expected = await apiCount('', tsFrom, tsTo);
      expect(expected).toBeGreaterThan(0);
      expect(expected).toBeLessThan(EVENTS);
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(expected));
      expect(await rangeButton().textContent()).toContain(from);

      await page.reload();
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(expected));
      await rangeButton().click();
      expect(await fromInput().inputValue()).toBe(from);
      expect(await toInput().inputValue()).toBe(to);
      await page.keyboard.press('Escape');

      await page.goBack();
      await expect.poll(() => urlRange().range).toBe('last_24_hours');
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS));
      expect(await rangeButton().textContent()).toContain('Last 24 hours');
      await page.goForward();
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(expected));
      await axe(page, 'search with a custom range', findings);
    });

    it('dragging on the timeline selects a span, Zoom in zooms to it; Zoom out doubles it', async () => {
      await page.goto(`${base}/search?range=last_24_hours`);
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS));
      const chart = page.locator('svg.timeline-chart.zoomable');
      await chart.waitFor();
      const box = await chart.boundingBox();
      if (!box) throw new Error('no timeline');
      const y = box.y + box.height / 2;
      await page.mouse.move(box.x + box.width * 0.3, y);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.45, y, { steps: 5 });
      await page.mouse.move(box.x + box.width * 0.6, y, { steps: 5 });
      // A visible selection while dragging.
      const sel = page.locator('.timeline-selection');
      await sel.waitFor();
      const selBox = await sel.boundingBox();
      expect(selBox?.width ?? 0).toBeGreaterThan(box.width * 0.25);
      await page.mouse.up();
      // The selection stays (for Explain or Zoom in) until it is zoomed to.
      await page
        .getByRole('group', { name: /^Selected / })
        .getByRole('button', { name: 'Zoom in' })
        .click();
      expect(await sel.count()).toBe(0);

      await expect.poll(() => urlRange().from).toBeGreaterThan(0);
      const zoomed = urlRange();
      const span = zoomed.to - zoomed.from;
      expect(span).toBeLessThan(24 * 3600 * 0.4);
      expect(span).toBeGreaterThan(24 * 3600 * 0.2);
      const expected = await apiCount('', zoomed.from, zoomed.to);
      expect(expected).toBeGreaterThan(0);
      expect(expected).toBeLessThan(EVENTS);
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(expected));
      // Nothing opens (it would cover the timeline); the time picker's button names the range.
      expect(await rangeButton().textContent()).toMatch(/^Time range: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d to /);
      expect(await fromInput().count()).toBe(0);

      // The keyboard way out: twice the span around the same middle.
      await page.getByRole('button', { name: 'Zoom out' }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => urlRange().to - urlRange().from).toBeGreaterThanOrEqual(2 * span);
      const out = urlRange();
      expect(out.to - out.from).toBeLessThanOrEqual(2 * span + 1);
      expect(Math.abs((out.from + out.to) / 2 - (zoomed.from + zoomed.to) / 2)).toBeLessThanOrEqual(1);
      await expect
        .poll(() => count().textContent(), { timeout: 10_000 })
        .toBe(events(await apiCount('', out.from, out.to)));
      await axe(page, 'search zoomed', findings);

      // Zooming again from an absolute range: the screenshot shows the selection.
      await count().click();
      const again = await chart.boundingBox();
      if (!again) throw new Error('no timeline');
      const y2 = again.y + again.height / 2;
      await page.mouse.move(again.x + again.width * 0.5, y2);
      await page.mouse.down();
      await page.mouse.move(again.x + again.width * 0.7, y2, { steps: 5 });
      await sel.waitFor();
      await shot(page, 'search-range');
      await page.mouse.up();
      await page
        .getByRole('group', { name: /^Selected / })
        .getByRole('button', { name: 'Zoom in' })
        .click();
      await expect.poll(() => urlRange().to - urlRange().from).toBeLessThan(out.to - out.from);
      const last = urlRange();
      await expect
        .poll(() => count().textContent(), { timeout: 10_000 })
        .toBe(events(await apiCount('', last.from, last.to)));
    });

    it('chooses the columns of the results table, kept across reloads', async () => {
      await page.goto(`${base}/search?range=last_24_hours`);
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS));
      const results = page.getByRole('region', { name: 'Results' });
      const headers = () => results.locator('thead th').allInnerTexts();
      expect(await headers()).toEqual(['Time', 'Severity', 'Host', 'App', 'Message']);
      const button = page.getByRole('button', { name: 'Columns' });
      await button.click();
      expect(await button.getAttribute('aria-expanded')).toBe('true');
      await page.getByRole('checkbox', { name: 'status', exact: true }).check();
      await page.getByRole('checkbox', { name: 'App', exact: true }).uncheck();
      // A column shown goes before the message, which stays last.
      await expect.poll(headers).toEqual(['Time', 'Severity', 'Host', 'status', 'Message']);
      // Some row has a status (the nginx events).
      await expect
        .poll(() => results.locator('tbody td.c-field').allInnerTexts())
        .toContainEqual(expect.stringMatching(/^\d{3}$/));
      await axe(page, 'search with the column picker open', findings);
      await page.keyboard.press('Escape');
      expect(await button.getAttribute('aria-expanded')).toBe('false');

      await page.reload();
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS));
      await expect.poll(headers).toEqual(['Time', 'Severity', 'Host', 'status', 'Message']);
      // Still virtualised: far fewer rows in the DOM than events.
      expect(await results.locator('tbody tr').count()).toBeLessThan(200);
      await page.evaluate("window.localStorage.removeItem('logscope.columns')");
    });

    it('an admin creates a user who can then sign in; API errors show as an alert', async () => {
      await page.goto(`${base}/settings`);
      const users = page.getByRole('region', { name: 'Users' });
      await users.getByRole('cell', { name: USERNAME, exact: true }).waitFor();
      await users.getByLabel('Username').fill('newbie');
      await users.getByLabel('Password').fill('newbie-password-1');
      await users.getByRole('checkbox', { name: 'manage_tasks' }).check();
      await users.getByRole('button', { name: 'Create user' }).click();
      const row = users
        .getByRole('row')
        .filter({ has: page.getByRole('cell', { name: 'newbie', exact: true }) });
      await row.waitFor();
      expect(await row.innerText()).toContain('manage_tasks');

      // The same name again: the API's 409 as an alert.
      const before = consoleErrors.length;
      await users.getByLabel('Username').fill('newbie');
      await users.getByRole('button', { name: 'Create user' }).click();
      await expect.poll(() => users.getByRole('alert').textContent()).toMatch(/\S/);
      // The browser logs the refused request itself.
      consoleErrors.splice(before);
      await users.getByLabel('Username').fill('');
      await shot(page, 'settings-users');
      await axe(page, 'settings with users', findings);

      // The new user signs in (a fresh browser session) and sees no Users section.
      const other = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
      try {
        const p2 = await other.newPage();
        p2.setDefaultTimeout(10_000);
        await p2.goto(`${base}/login`);
        await p2.getByLabel('Username').fill('newbie');
        await p2.getByLabel('Password').fill('newbie-password-1');
        await p2.getByRole('button', { name: 'Sign in' }).click();
        await p2.waitForURL(/\/search/);
        await p2.goto(`${base}/settings`);
        await p2.getByRole('heading', { level: 2, name: 'API tokens' }).waitFor();
        expect(await p2.getByRole('heading', { name: 'Users' }).count()).toBe(0);
      } finally {
        await other.close();
      }
    });

    it('logged no errors in the browser console', () => {
      expect(consoleErrors).toEqual([]);
    });
  },
);
