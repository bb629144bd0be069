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
  queryBox,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The search page's histogram in Chromium against a real server, read as a person reads
// it: bars as wide as the chart allows, stacked by severity with a legend counting what
// was ingested, time labels at round hours of the browser's zone (Asia/Kolkata, 5:30
// from UTC, so UTC's round hours would show as :30), a tooltip with a bar's span and
// counts, a click or Enter zooming to a bar, the chart one Tab stop, plain bars while the
// split is on its way or when it fails, and no split of a search replaced. Setup: ./browser.ts.

const ZONE = 'Asia/Kolkata';
const ZONE_OFFSET_S = 5.5 * 3600;
const USER = { username: 'reader', password: 'reader-password-1', admin: false };

/**
 * One event a minute over 23.5 hours in a fixed mix of six severities and none (`other`),
 * a burst of errors, and the rarest, five critical ones: a Timeline split names only the 5
 * most common values, so one split alone would fold these into `other`.
 */
function makeEvents(nowMs: number): { ts: number; severity: string }[] {
  const out: { ts: number; severity: string }[] = [];
  const first = nowMs - 23.5 * 3_600_000;
  for (let i = 0; i < 1400; i++) {
    const severity =
      i % 20 === 0
        ? 'error'
        : i % 10 === 5
          ? 'warning'
          : i % 5 === 3
            ? 'debug'
            : i % 50 === 7
              ? 'notice'
              : i % 100 === 9
                ? 'other'
                : 'info';
    out.push({ ts: (first + i * 60_000 + 500) / 1000, severity });
  }
  const burst = nowMs - 6 * 3_600_000;
  for (let i = 0; i < 60; i++) out.push({ ts: (burst + i * 2000) / 1000, severity: 'error' });
  for (let i = 0; i < 5; i++) out.push({ ts: (nowMs - (3 + i) * 3_600_000) / 1000, severity: 'critical' });
  return out;
}

const ORDER = ['critical', 'error', 'warning', 'notice', 'info', 'debug', 'other'];
const n = (v: number) => v.toLocaleString('en-US');

/** `YYYY-MM-DD HH:mm[:ss]` in the test's zone → Unix seconds. */
function zoneTime(text: string): number {
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d)(?::(\d\d))?$/.exec(text);
  if (!m) throw new Error(`not a time: ${text}`);
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0)) as number[];
  return Date.UTC(y as number, (mo as number) - 1, d, h, mi, s) / 1000 - ZONE_OFFSET_S;
}

/** A bar's span as the tooltip writes it (`2024-05-01 10:00 – 10:05`, the date again past midnight). */
function parseSpan(text: string): { from: number; to: number } {
  const [a, b] = text.split(' – ') as [string, string];
  return { from: zoneTime(a), to: zoneTime(b.length > 8 ? b : `${a.slice(0, 10)} ${b}`) };
}

describeBrowser('test/browser/search-histogram.test.ts', 'the search page’s histogram in Chromium', () => {
  let server: LiveApp;
  let base: string;
  let b: Browsing;
  let page: Page;
  let events: { ts: number; severity: string }[];
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  const count = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
  const chart = () => page.locator('svg.timeline-chart');
  const slider = () => page.getByRole('slider', { name: /^Events per / });
  const legend = () => page.getByRole('list', { name: 'Severities' });
  const tooltip = () => page.locator('.timeline-tooltip');
  /** The ingested events per severity in `[from, to)`, in the chart's order. */
  const expected = (from: number, to: number) => {
    const inside = events.filter((e) => e.ts >= from && e.ts < to);
    return ORDER.map((s) => [s, inside.filter((e) => e.severity === s).length] as const).filter(
      ([, c]) => c > 0,
    );
  };
  const urlRange = () => {
    const p = new URL(page.url()).searchParams;
    return { from: Number(p.get('from')), to: Number(p.get('to')) };
  };
  /** The tooltip's rows: `[name, count]`, the total last. */
  const tooltipRows = () =>
    tooltip()
      .locator('tr')
      .evaluateAll((rows) =>
        rows.map((r) => [r.querySelector('th')?.textContent, r.querySelector('td')?.textContent]),
      );
  const day = async () => {
    await page.goto(`${base}/search?range=last_24_hours`);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(`${n(events.length)} events`);
    await legend().waitFor();
  };
  /** The client point at the middle of the tallest bar. */
  const tallest = () =>
    page.evaluate(() => {
      let best = { x: 0, y: 0, h: -1 };
      for (const g of document.querySelectorAll('g.timeline-bar')) {
        const r = g.getBoundingClientRect();
        if (r.height > best.h) best = { x: r.x + r.width / 2, y: r.y + r.height / 2, h: r.height };
      }
      return best;
    });

  beforeAll(async () => {
    server = await startApp();
    base = server.base;
    const token = await createUser(server.t, USER);
    events = makeEvents(Date.now());
    await ingest(
      server.t,
      events.map((e, i) => ({
        ts: new Date(e.ts * 1000).toISOString(),
        ...(e.severity === 'other' ? {} : { severity: e.severity }),
        host: `web-${i % 3}`,
        app: 'shop',
        message: `request ${i} ${e.severity}`,
      })),
    );
    b = await openBrowser({
      context: { viewport: { width: 1440, height: 900 }, timezoneId: ZONE },
      token,
      consoleErrors,
    });
    page = b.page;
  }, 120_000);

  afterAll(async () => {
    writeFindings('search-histogram-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  /** The checks any width holds: bars at most a third of the pixels, stacked, labelled, counted. */
  async function readable(label: string) {
    const all = expected(0, Number.POSITIVE_INFINITY);
    expect(await legend().getByRole('listitem').allTextContents()).toEqual(
      all.map(([s, c]) => `${s} ${n(c)}`),
    );
    const width = (await chart().boundingBox())?.width ?? 0;
    const bars = await page.locator('g.timeline-bar').count();
    expect(bars, label).toBeLessThanOrEqual(width / 3);
    expect(bars, label).toBeGreaterThan(width / 20);
    // Stacked: bars of several segments, one colour per severity.
    const segments = await page
      .locator('g.timeline-bar')
      .evaluateAll((gs) => gs.map((g) => g.children.length));
    expect(Math.max(...segments)).toBeGreaterThanOrEqual(3);
    for (const s of ORDER) expect(await page.locator(`rect.tl-${s}`).count(), s).toBeGreaterThan(0);
    // Time labels at the zone's round hours (the date at midnight): UTC's would be :30.
    const ticks = await page.locator('.timeline-ticks span').allTextContents();
    expect(ticks.length, label).toBeGreaterThanOrEqual(5);
    for (const t of ticks) expect(t).toMatch(/^([01]\d|2[0-3]):00$|^\d\d-\d\d$/);
    // A count axis from 0.
    const counts = await page.locator('.timeline-yaxis span').allTextContents();
    expect(counts[0]).toBe('0');
    expect(counts.length).toBeGreaterThanOrEqual(3);
    const summary = (await slider().getAttribute('aria-label')) ?? '';
    expect(summary).toMatch(/^Events per \d+[smhd]: /);
    expect(summary).toContain(`: ${n(events.length)} in all, at most `);
    expect(summary).toContain(`in one bar; ${all.map(([s, c]) => `${s} ${n(c)}`).join(', ')}`);
  }

  it('bars fit the width, stacked by severity, the legend counting what was ingested; the tooltip and a click on a bar', async () => {
    await day();
    await readable('1440 px');
    await shot(page, 'search-histogram-1440-light');

    // The tooltip: the tallest bar's span, its counts per severity and total.
    const at = await tallest();
    await page.mouse.move(at.x, at.y);
    await tooltip().waitFor();
    const span = parseSpan((await tooltip().locator('.timeline-tooltip-time').textContent()) ?? '');
    expect(span.to).toBeGreaterThan(span.from);
    const want = expected(span.from, span.to);
    const total = want.reduce((s, [, c]) => s + c, 0);
    // The burst's bar, its errors the most.
    expect(want.find(([s]) => s === 'error')?.[1]).toBeGreaterThanOrEqual(20);
    expect(await tooltipRows()).toEqual([...want.map(([s, c]) => [s, n(c)]), ['Total', n(total)]]);
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'search-histogram-tooltip-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.mouse.move(at.x, at.y + 300);
    await expect.poll(() => tooltip().count()).toBe(0);

    // A click zooms to the bar.
    await page.mouse.click(at.x, at.y);
    await expect.poll(() => urlRange()).toEqual(span);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(`${n(total)} events`);
  });

  it('at 1024 px, resized, the bars follow the width', async () => {
    await day();
    const before = await page.locator('g.timeline-bar').count();
    await page.setViewportSize({ width: 1024, height: 768 });
    await expect.poll(() => page.locator('g.timeline-bar').count()).toBeLessThan(before);
    await readable('1024 px');
    await shot(page, 'search-histogram-1024-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'search-histogram-1024-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  it('from the keyboard: one Tab stop, arrows move between bars with the tooltip, Enter zooms', async () => {
    await day();
    await page.getByRole('switch', { name: 'Live' }).focus();
    await page.keyboard.press('Tab');
    expect(await slider().evaluate((el) => el === document.activeElement)).toBe(true);
    // Tabbed to: the last bar with events is shown.
    await tooltip().waitFor();
    const max = Number(await slider().getAttribute('aria-valuemax'));
    const start = Number(await slider().getAttribute('aria-valuenow'));
    expect(start).toBeGreaterThan(max - 5);
    for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowLeft');
    expect(Number(await slider().getAttribute('aria-valuenow'))).toBe(start - 6);
    const time = (await tooltip().locator('.timeline-tooltip-time').textContent()) ?? '';
    const span = parseSpan(time);
    const want = expected(span.from, span.to);
    const total = want.reduce((s, [, c]) => s + c, 0);
    // The slider's value says what the tooltip shows.
    expect(await slider().getAttribute('aria-valuetext')).toBe(
      `${time}: ${[`${n(total)} events`, ...want.map(([s, c]) => `${s} ${n(c)}`)].join(', ')}`,
    );
    expect(await tooltipRows()).toEqual([...want.map(([s, c]) => [s, n(c)]), ['Total', n(total)]]);
    // axe on the page as the chart's states leave it: the legend, ticks, focus and tooltip
    // (in the dark theme: the light one's colours are the same variables every page is
    // checked with).
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'search-histogram-keyboard-dark');
    await axe(page, 'histogram, keyboard, dark', findings);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.keyboard.press('Home');
    expect(await slider().getAttribute('aria-valuenow')).toBe('1');
    // One Tab stop: the next is the Zoom out button.
    await page.keyboard.press('Tab');
    expect(
      await page.getByRole('button', { name: 'Zoom out' }).evaluate((el) => el === document.activeElement),
    ).toBe(true);
    expect(await tooltip().count()).toBe(0);
    await page.keyboard.press('Shift+Tab');
    for (let i = 0; i < 12; i++) await page.keyboard.press('ArrowRight');
    const chosen = parseSpan((await tooltip().locator('.timeline-tooltip-time').textContent()) ?? '');
    await page.keyboard.press('Enter');
    await expect.poll(() => urlRange()).toEqual(chosen);
    const inChosen = expected(chosen.from, chosen.to).reduce((s, [, c]) => s + c, 0);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(`${n(inChosen)} events`);
    // The focus stays on the chart, now of the zoomed range.
    expect(await slider().evaluate((el) => el === document.activeElement)).toBe(true);
  });

  it('plain bars while the split is on its way or fails; a replaced search’s split never shows', async () => {
    await day();
    // The split Timelines (two a search) answer only when the test says.
    const held: { query: string; release: () => Promise<void>; fail: () => Promise<void> }[] = [];
    await page.route('**/api/query', async (route) => {
      const body = route.request().postData() ?? '';
      if (route.request().method() !== 'POST' || !body.includes('"split_by"')) return route.continue();
      const query = (JSON.parse(body) as { params: { query: string } }).params.query;
      held.push({
        query,
        release: async () => route.fulfill({ response: await route.fetch() }).catch(() => {}),
        fail: () => route.fulfill({ status: 500, json: { detail: 'boom' } }).catch(() => {}),
      });
    });
    const of = (query: string) => held.filter((h) => h.query === query);
    const search = async (query: string, total: number) => {
      await queryBox(page).fill(query);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(`${n(total)} events`);
      await expect.poll(() => of(query).length).toBe(2);
    };
    const total = (severity: string) => events.filter((e) => e.severity === severity).length;
    try {
      await search('severity:error', total('error'));
      // The plain counts meanwhile: one colour, no legend.
      await expect.poll(() => page.locator('rect.tl-all').count()).toBeGreaterThan(0);
      expect(await legend().count()).toBe(0);
      await shot(page, 'search-histogram-plain');
      // Another search before the split came: the first one's, arriving late, is not shown.
      await search('severity:debug', total('debug'));
      for (const h of of('severity:error')) await h.release();
      await page.waitForTimeout(300);
      expect(await legend().count()).toBe(0);
      for (const h of of('severity:debug')) await h.release();
      await expect
        .poll(() => legend().getByRole('listitem').allTextContents())
        .toEqual([`debug ${n(total('debug'))}`]);
      expect(await page.locator('rect.tl-error').count()).toBe(0);
      expect(await page.locator('rect.tl-all').count()).toBe(0);
      // A split that fails leaves the plain bars and says nothing.
      await search('severity:warning', total('warning'));
      await of('severity:warning')[0]?.release();
      await of('severity:warning')[1]?.fail();
      await page.waitForTimeout(300);
      expect(await page.locator('rect.tl-all').count()).toBeGreaterThan(0);
      expect(await legend().count()).toBe(0);
      expect(await page.getByRole('alert').count()).toBe(0);
    } finally {
      await page.unroute('**/api/query');
    }
  });
});
