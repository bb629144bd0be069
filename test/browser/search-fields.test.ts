import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AxeFinding,
  axe,
  type Browsing,
  closeAll,
  createUser,
  describeBrowser,
  ingest,
  type LiveApp,
  openBrowser,
  queryText,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The field list beside the results, as a daily user works it, in Chromium against a real
// server: each value's bar is its share of the sample, the box finds a field by name, a
// toggle shows a field as a column (and in the address), type marks read out, the whole
// list works from the keyboard, and a field of 20,000 distinct values keeps the page
// responsive. Setup: ./browser.ts.

const USER = { username: 'fielder', password: 'fielder-password-1', admin: false };
/** The shop's events: their hosts, statuses and flags in known numbers. */
const SHOP = 400;
const HOSTS: Array<[string, number]> = [
  ['web-1', 200],
  ['web-2', 120],
  ['db-1', 80],
];
const BULK = 20_000;
const LONG_TASK_MS = 200;

function shopEvents(now: number): object[] {
  const out: object[] = [];
  let i = 0;
  for (const [host, n] of HOSTS)
    for (let k = 0; k < n; k++, i++)
      out.push({
        timestamp: new Date(now - 3_600_000 + i * 1000).toISOString(),
        app: 'shop',
        host,
        message: `order ${i}`,
        status: i % 4 === 0 ? 500 : 200,
        client: `10.0.0.${i % 7}`,
        paid: i % 5 !== 0,
        cart_items: i % 3,
      });
  return out;
}

describeBrowser('test/browser/search-fields.test.ts', 'the field list, in Chromium', () => {
  let server: LiveApp;
  let b: Browsing;
  let page: Page;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  const panel = () => page.getByRole('region', { name: 'Fields' });
  const count = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
  const named = (name: string) => ({ name: new RegExp(`^${name} [\\d,]+$`) });
  const fieldButton = (name: string) => panel().getByRole('button', named(name));
  // A field's item: the one holding its name's button (a locator relative to the item).
  const row = (name: string) =>
    panel()
      .locator('li.field')
      .filter({ has: page.getByRole('button', named(name)) });
  const open = async (q: string, n: number) => {
    await page.goto(`${server.base}/search?${new URLSearchParams({ range: 'last_24_hours', q })}`);
    await expect
      .poll(() => count().textContent(), { timeout: 20_000 })
      .toBe(`${n.toLocaleString('en-US')} events`);
    await fieldButton('host').waitFor({ timeout: 20_000 });
  };

  beforeAll(async () => {
    server = await startApp();
    const token = await createUser(server.t, USER);
    const now = Date.now();
    await ingest(server.t, shopEvents(now));
    // A field of as many distinct values as events, in batches.
    for (let start = 0; start < BULK; start += 5_000)
      await ingest(
        server.t,
        Array.from({ length: 5_000 }, (_, k) => ({
          timestamp: new Date(now - 7_200_000 + (start + k) * 100).toISOString(),
          app: 'bulk',
          host: 'batch-1',
          message: 'bulk import',
          request_id: `r-${start + k}`,
        })),
      );
    await openBrowser({ context: { viewport: { width: 1440, height: 900 } }, token, consoleErrors }).then(
      (opened) => {
        b = opened;
        page = opened.page;
      },
    );
    await page.addInitScript(() => {
      const w = window as unknown as { longTasks: number[] };
      w.longTasks = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) w.longTasks.push(e.duration);
      }).observe({ type: 'longtask', buffered: true });
    });
  }, 120_000);

  afterAll(async () => {
    writeFindings('search-fields-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('each value’s bar is as wide a part of its track as its share of the sample, the count read out', async () => {
    await open('app:shop', SHOP);
    await fieldButton('host').click();
    const values = row('host').locator('li.field-value');
    await expect.poll(() => values.count()).toBe(HOSTS.length);
    for (const [i, [host, n]] of HOSTS.entries()) {
      const value = values.nth(i);
      expect(await value.locator('.value-text').textContent()).toBe(host);
      const share = value.locator('.value-share');
      expect(await share.textContent()).toBe(
        `${Math.round((n / SHOP) * 100)} %, ${n} of ${SHOP} sampled events`,
      );
      expect(await share.getAttribute('title')).toBe(`${n} of ${SHOP} sampled events`);
      const track = await value.locator('.value-bar').boundingBox();
      const bar = await value.locator('.value-bar > span').boundingBox();
      expect((bar?.width ?? 0) / (track?.width ?? 1)).toBeCloseTo(n / SHOP, 2);
    }
    // "Top values" counts over every matching event: shares of the events with the field.
    await row('host').getByRole('button', { name: 'Top values' }).click();
    await row('host').getByText(`Top 10 of ${SHOP} events with host`).waitFor();
    expect(await values.first().locator('.value-share').getAttribute('title')).toBe(
      `200 of ${SHOP} events with host`,
    );
    await fieldButton('host').click();
  });

  it('marks each field’s type with a name read out', async () => {
    await open('app:shop', SHOP);
    const mark = async (field: string) =>
      (await row(field).getByRole('img').getAttribute('aria-label')) ?? '(none)';
    expect(await mark('status')).toBe('number');
    expect(await mark('cart_items')).toBe('number');
    expect(await mark('client')).toBe('IP address');
    expect(await mark('ts')).toBe('time');
    expect(await mark('paid')).toBe('true or false');
    expect(await mark('host')).toBe('text');
    expect(await panel().getByRole('img').count()).toBe(await panel().locator('li.field').count());
  });

  it('the box narrows the list to the fields whose name holds what is typed; Escape empties it', async () => {
    await open('app:shop', SHOP);
    const names = () => panel().locator('.field-label').allTextContents();
    const all = await names();
    expect(all.length).toBeGreaterThan(8);
    const box = panel().getByRole('searchbox', { name: 'Find a field' });
    await box.fill('ST');
    await expect.poll(names).toEqual(all.filter((n) => n.toLowerCase().includes('st')));
    expect(await names()).toEqual(expect.arrayContaining(['host', 'status']));
    await box.fill('nothing-like-it');
    await expect.poll(names).toEqual([]);
    await panel().getByText('No field’s name holds “nothing-like-it”.').waitFor();
    await box.press('Escape');
    expect(await box.inputValue()).toBe('');
    await expect.poll(names).toEqual(all);
  });

  it('a field’s toggle adds it as a column of the results and to the address, and takes it away', async () => {
    await open('app:shop', SHOP);
    const toggle = row('cart_items').getByRole('button', { name: 'Show cart_items as a column' });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    const results = page.getByRole('region', { name: 'Results' });
    expect(await results.getByRole('columnheader', { name: /cart_items/ }).count()).toBe(0);
    await toggle.click();
    await results.getByRole('columnheader', { name: /cart_items/ }).waitFor();
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => new URL(page.url()).searchParams.get('cols') ?? '').toContain('cart_items');
    // Its cells hold the field's values.
    const cells = await results.locator('tbody tr').first().locator('td').allTextContents();
    expect(cells).toEqual(expect.arrayContaining([expect.stringMatching(/^[012]$/)]));
    // A built-in column the reader shows already: pressed; taken away, the table loses it.
    const hostToggle = row('host').getByRole('button', { name: 'Show host as a column' });
    expect(await hostToggle.getAttribute('aria-pressed')).toBe('true');
    await hostToggle.click();
    await expect.poll(() => results.getByRole('columnheader', { name: /^Host/ }).count()).toBe(0);
    await hostToggle.click();
    await toggle.click();
    await expect.poll(() => results.getByRole('columnheader', { name: /cart_items/ }).count()).toBe(0);
    expect(new URL(page.url()).searchParams.get('cols') ?? '').not.toContain('cart_items');
  });

  it('works from the keyboard: the box, ↓ to the fields, Enter opens one, Tab to its filter', async () => {
    await open('app:shop', SHOP);
    const box = panel().getByRole('searchbox', { name: 'Find a field' });
    await box.focus();
    await page.keyboard.type('sta');
    await expect.poll(() => panel().locator('.field-label').allTextContents()).toEqual(['status']);
    await page.keyboard.press('ArrowDown');
    expect(await fieldButton('status').evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('ArrowUp');
    expect(await box.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    expect(await fieldButton('status').getAttribute('aria-expanded')).toBe('true');
    // Next: the column toggle, then the first value's "Filter for".
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Show status as a column',
    );
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Filter for status:200',
    );
    await shot(page, 'search-fields-keyboard');
    await axe(page, 'the field list: found, opened, focused', findings);
    await page.keyboard.press('Enter');
    await expect.poll(() => queryText(page)).toBe('app:shop status:200');
    await expect.poll(() => count().textContent(), { timeout: 20_000 }).toBe('300 events');
  });

  it(`a field of ${BULK.toLocaleString('en-US')} distinct values: its top values only, no task over ${LONG_TASK_MS} ms`, async () => {
    await page.goto(
      `${server.base}/search?${new URLSearchParams({ range: 'last_24_hours', q: 'app:bulk' })}`,
    );
    await expect
      .poll(() => count().textContent(), { timeout: 20_000 })
      .toBe(`${BULK.toLocaleString('en-US')} events`);
    // From the rows shown on: the field list's answer, drawn, and a field opened.
    await page.evaluate(() => (window as unknown as { longTasks: number[] }).longTasks.splice(0));
    const field = fieldButton('request_id');
    await field.waitFor({ timeout: 20_000 });
    expect(await field.textContent()).toBe('request_id 10,000');
    await field.click();
    const values = row('request_id').locator('li.field-value');
    await expect.poll(() => values.count()).toBe(5);
    expect(await values.first().locator('.value-share').textContent()).toMatch(
      /^<1 %, 1 of 10,000 sampled events$/,
    );
    await page.waitForTimeout(300);
    const tasks = await page.evaluate(() => (window as unknown as { longTasks: number[] }).longTasks.slice());
    expect(Math.max(0, ...tasks)).toBeLessThan(LONG_TASK_MS);
  });

  it('looks right at 1440 and 1024 px, light and dark (screenshots), and passes axe in the dark', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1440, 1024]) {
        await page.setViewportSize({ width, height: 900 });
        await open('app:shop', SHOP);
        await fieldButton('host').click();
        await fieldButton('paid').click();
        await row('status').getByRole('button', { name: 'Show status as a column' }).click();
        await page
          .getByRole('region', { name: 'Results' })
          .getByRole('columnheader', { name: /status/ })
          .waitFor();
        await panel()
          .locator('.field-panel-body')
          .evaluate((el) => el.scrollTo(0, 0));
        await shot(page, `search-fields-${width}-${scheme}`);
        // axe once here (it is slow): the list open, two fields open, a column pressed, dark.
        if (scheme === 'dark' && width === 1440) await axe(page, 'the field list open, dark', findings);
        await row('status').getByRole('button', { name: 'Show status as a column' }).click();
      }
    }
    await page.emulateMedia({ colorScheme: null });
  });
});
