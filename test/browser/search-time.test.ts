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

// The search page's time picker as a daily user drives it, in Chromium against a real
// server: one button naming the range opens one popover, where a range is typed (`2h`),
// a preset or a recent range chosen, or From/To entered as ISO times in the browser's
// zone; Shift earlier/later move the window by its length; the keyboard alone does it
// all. The address holds what was applied. Setup: ./browser.ts.

/** Events long ago (20 h to 3 h back) and recent ones (the last 100 minutes): a 2 h window holds exactly the recent. */
const OLD = 300;
const RECENT = 120;
const USER = { username: 'clockwise', password: 'clockwise-password-1', admin: false };
/** A zone half an hour off whole hours, without daylight saving: From/To must be read in it. */
const ZONE = 'Asia/Kolkata';
const ZONE_OFFSET_S = 5.5 * 3600;
/** Unix seconds as From/To show them in ZONE. */
const zonedText = (ts: number) =>
  new Date((ts + ZONE_OFFSET_S) * 1000).toISOString().slice(0, 19).replace('T', ' ');

describeBrowser('test/browser/search-time.test.ts', 'the time picker’s popover, in Chromium', () => {
  let server: LiveApp;
  let base: string;
  let b: Browsing;
  let page: Page;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  const count = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
  const events = (n: number) => `${n.toLocaleString('en-US')} events`;
  const rangeButton = () => page.getByRole('button', { name: /^Time range: / });
  const popover = () => page.getByRole('dialog', { name: 'Time range' });
  const typed = () => page.getByRole('textbox', { name: 'Relative range' });
  const recent = () => popover().getByRole('group', { name: 'Recent' }).getByRole('button');
  const address = () => {
    const p = new URL(page.url()).searchParams;
    return { range: p.get('range'), from: Number(p.get('from')), to: Number(p.get('to')) };
  };
  const focusedId = () => page.evaluate(() => document.activeElement?.id ?? '');
  const focusedName = () => page.evaluate(() => document.activeElement?.textContent ?? '');

  /** The API's count over an absolute window. */
  async function apiCount(ts_from: number, ts_to: number): Promise<number> {
    const t = server.t;
    const headers = { authorization: `token ${t.adminToken}` };
    let res = await t.app.inject({
      method: 'POST',
      url: '/api/query',
      headers,
      payload: { type: 'Search', params: { query: '', time_range: { ts_from, ts_to } } },
    });
    for (let i = 0; res.json().status !== 'SUCCESS' && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await t.app.inject({ method: 'GET', url: `/api/query/${res.json().query_id}`, headers });
    }
    return res.json().results.total as number;
  }

  beforeAll(async () => {
    server = await startApp();
    base = server.base;
    const token = await createUser(server.t, USER);
    const now = Date.now();
    await ingest(server.t, [
      ...demoEvents(3, OLD, now - 20 * 3_600_000, now - 3 * 3_600_000),
      ...demoEvents(4, RECENT, now - 100 * 60_000, now - 60_000),
    ]);
    b = await openBrowser({
      context: { viewport: { width: 1440, height: 900 }, timezoneId: ZONE },
      token,
      consoleErrors,
    });
    page = b.page;
  }, 120_000);

  afterAll(async () => {
    writeFindings('search-time-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('a typed 2h searches the last 2 hours, kept relative in the address; banana changes nothing', async () => {
    await page.goto(`${base}/search?range=last_24_hours`);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(OLD + RECENT));
    expect(await rangeButton().textContent()).toContain('Last 24 hours');

    await rangeButton().click();
    expect(await rangeButton().getAttribute('aria-expanded')).toBe('true');
    // The focus is in the popover, on the box to type in.
    expect(await focusedId()).toBe('range-text');
    await typed().fill('banana');
    await typed().press('Enter');
    const alert = popover().getByRole('alert');
    expect(await alert.textContent()).toBe(
      '“banana” is not a range. For example 15m, 2h, 3d, 1w, last 2h or now-2h.',
    );
    expect(await typed().getAttribute('aria-invalid')).toBe('true');
    expect(await typed().getAttribute('aria-describedby')).toBe(
      `range-text-hint ${await alert.getAttribute('id')}`,
    );
    // Nothing changed: the address, the count, the popover still open for a fix.
    expect(address().range).toBe('last_24_hours');
    expect(await count().textContent()).toBe(events(OLD + RECENT));
    expect(await popover().isVisible()).toBe(true);
    await shot(page, 'search-time-invalid');
    await axe(page, 'time picker with a bad range typed', findings);

    // Editing clears the message; 2h applies.
    await typed().fill('2h');
    expect(await alert.count()).toBe(0);
    expect(await typed().getAttribute('aria-invalid')).toBeNull();
    await typed().press('Enter');
    await expect.poll(() => address().range).toBe('last_2_hours');
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(RECENT));
    expect(await popover().count()).toBe(0);
    expect(await rangeButton().textContent()).toContain('Last 2 hours');
    // The timeline's axis spans the 2 hours (its labels are minutes, local time).
    const [start, end] = await page.locator('.timeline-axis-labels > span[aria-hidden]').allInnerTexts();
    const minutes = (s: string | undefined) => Date.parse(`${s?.replace(' ', 'T')}:00Z`) / 60_000;
    expect(minutes(end) - minutes(start)).toBeGreaterThanOrEqual(119);
    expect(minutes(end) - minutes(start)).toBeLessThanOrEqual(121);

    // The address reloads to the same relative range.
    await page.reload();
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(RECENT));
    expect(await rangeButton().textContent()).toContain('Last 2 hours');
    // (axe on the whole page takes 20-30 s on a loaded 2-core machine.)
  }, 90_000);

  it('recent ranges: the last applied first, each once, kept across a reload', async () => {
    await page.goto(`${base}/search?range=last_2_hours`);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(RECENT));
    await rangeButton().click();
    await popover().getByRole('button', { name: 'Last 24 hours' }).click();
    await expect.poll(() => address().range).toBe('last_24_hours');
    await rangeButton().click();
    expect(await recent().allInnerTexts()).toEqual(['Last 24 hours', 'Last 2 hours']);
    // Typed again (as 120 minutes, the same range): first again, listed once.
    await typed().fill('last 120 minutes');
    await typed().press('Enter');
    await expect.poll(() => address().range).toBe('last_2_hours');
    await page.reload();
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(RECENT));
    await rangeButton().click();
    expect(await recent().allInnerTexts()).toEqual(['Last 2 hours', 'Last 24 hours']);
    // A recent range applies as a preset does.
    await recent().filter({ hasText: 'Last 24 hours' }).click();
    await expect.poll(() => address().range).toBe('last_24_hours');
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(OLD + RECENT));
  });

  it('Shift earlier and later move the window by its own length, then absolute in the address', async () => {
    await page.goto(`${base}/search?range=last_2_hours`);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(RECENT));
    const earlier = page.getByRole('button', { name: 'Shift earlier' });
    const later = page.getByRole('button', { name: 'Shift later' });
    // A window ending now has nothing later.
    expect(await later.isDisabled()).toBe(true);
    expect(await earlier.getAttribute('title')).toBe('Move the window 2 hours earlier');

    const now = Math.floor(Date.now() / 1000);
    await earlier.click();
    await expect.poll(() => address().range).toBeNull();
    const first = address();
    expect(first.to - first.from).toBe(7200);
    // The 2 hours before the last 2 hours (pinned when the search ran).
    expect(Math.abs(first.to - (now - 7200))).toBeLessThan(30);
    await expect
      .poll(() => count().textContent(), { timeout: 10_000 })
      .toBe(events(await apiCount(first.from, first.to)));

    await earlier.click();
    await expect.poll(() => address().from).toBe(first.from - 7200);
    expect(address().to).toBe(first.from);
    const second = address();
    await expect
      .poll(() => count().textContent(), { timeout: 10_000 })
      .toBe(events(await apiCount(second.from, second.to)));
    expect(await rangeButton().textContent()).toContain(`${zonedText(second.from)} to`);

    // Later, now enabled, moves it back; Back in the browser too.
    expect(await later.isDisabled()).toBe(false);
    await later.click();
    await expect.poll(() => address()).toEqual(first);
    await page.goBack();
    await expect.poll(() => address()).toEqual(second);
  });

  it('From/To take ISO times in the browser’s zone, named beside them', async () => {
    await page.goto(`${base}/search?range=last_24_hours`);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(OLD + RECENT));
    await rangeButton().click();
    const group = popover().getByRole('group', { name: 'Absolute range' });
    // (Chromium's ICU names Asia/Kolkata by its older name.)
    expect(await group.locator('#range-zone').textContent()).toMatch(
      /^YYYY-MM-DD HH:mm:ss, 24-hour, in Asia\/(Kolkata|Calcutta)$/,
    );
    const from = Math.floor(Date.now() / 1000 / 60) * 60 - 10 * 3600;
    const to = from + 3 * 3600 + 30;
    await group.getByLabel('From', { exact: true }).fill(zonedText(from));
    await group.getByLabel('To', { exact: true }).fill(zonedText(to).replace(' ', 'T'));
    await group.getByRole('button', { name: 'Apply range' }).click();
    await expect.poll(() => address()).toEqual({ range: null, from, to });
    await expect
      .poll(() => count().textContent(), { timeout: 10_000 })
      .toBe(events(await apiCount(from, to)));
    expect(await popover().count()).toBe(0);
    expect(await rangeButton().textContent()).toContain(zonedText(from));
    // Opened again, From/To hold it; the recent list has it first.
    await rangeButton().click();
    expect(await group.getByLabel('From', { exact: true }).inputValue()).toBe(zonedText(from));
    expect(await recent().first().textContent()).toContain(zonedText(from));
    // A click outside closes it.
    await page.getByRole('region', { name: 'Timeline' }).click({ position: { x: 5, y: 5 } });
    await popover().waitFor({ state: 'detached' });
    expect(await rangeButton().getAttribute('aria-expanded')).toBe('false');
  });

  it('works from the keyboard alone: open, type, Enter; Escape returns to the button; Tab moves on', async () => {
    await page.goto(`${base}/search?range=last_24_hours`);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(OLD + RECENT));
    await page.getByRole('button', { name: 'Shift earlier' }).focus();
    await page.keyboard.press('Tab');
    expect(await focusedName()).toMatch(/^Time range: Last 24 hours/);
    await page.keyboard.press('Enter');
    await popover().waitFor();
    expect(await focusedId()).toBe('range-text');
    await page.keyboard.type('4h');
    await page.keyboard.press('Enter');
    await expect.poll(() => address().range).toBe('last_4_hours');
    expect(await popover().count()).toBe(0);
    expect(await focusedName()).toMatch(/^Time range: Last 4 hours/);

    // Escape closes it, the focus back on the button.
    await page.keyboard.press('Space');
    await popover().waitFor();
    expect(await rangeButton().getAttribute('aria-expanded')).toBe('true');
    await page.keyboard.press('Escape');
    await popover().waitFor({ state: 'detached' });
    expect(await rangeButton().getAttribute('aria-expanded')).toBe('false');
    expect(await focusedName()).toMatch(/^Time range: /);

    // Tab goes through the popover in reading order: the box, Apply, From, To, Apply
    // range, the presets; Shift+Tab from the box returns to the button, still open.
    await page.keyboard.press('Enter');
    await popover().waitFor();
    await page.keyboard.press('Shift+Tab');
    expect(await focusedName()).toMatch(/^Time range: /);
    expect(await popover().isVisible()).toBe(true);
    await page.keyboard.press('Tab');
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      order.push((await focusedId()) || (await focusedName()));
    }
    expect(order).toEqual([
      'Apply',
      'range-from',
      'range-to',
      'Apply range',
      'Last 5 minutes',
      'Last 15 minutes',
    ]);
    // A preset by the keyboard.
    await page.keyboard.press('Enter');
    await expect.poll(() => address().range).toBe('last_15_minutes');
    expect(await focusedName()).toMatch(/^Time range: Last 15 minutes/);

    // Tab past the popover's last control closes it; the focus goes on (Shift later is
    // disabled: the next control is Search).
    await page.keyboard.press('Enter');
    await popover().waitFor();
    await popover().getByRole('group', { name: 'Recent' }).getByRole('button').last().focus();
    await page.keyboard.press('Tab');
    await popover().waitFor({ state: 'detached' });
    expect(await focusedName()).toBe('Search');
  });

  it('screenshots: the popover at 1440 and 1024 px, light and dark', async () => {
    for (const width of [1440, 1024]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}/search?range=last_24_hours`);
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(OLD + RECENT));
      await rangeButton().click();
      await typed().fill('banana');
      await typed().press('Enter');
      await popover().getByRole('alert').waitFor();
      // Inside the window: nothing cut off at either edge.
      const box = await popover().boundingBox();
      expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
      expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(width);
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        await shot(page, `search-time-popover-${width}-${colorScheme}`);
      }
      if (width === 1440) await axe(page, 'time picker, dark', findings);
    }
    // A phone: one column, inside the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.keyboard.press('Escape');
    await rangeButton().click();
    const box = await popover().boundingBox();
    expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
    expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(390);
    await shot(page, 'search-time-popover-390-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 90_000);

  it('logged no errors in the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
