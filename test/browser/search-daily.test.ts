import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AxeFinding,
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

// The search page as a daily user meets it, in Chromium against a real server: dragging
// on the timeline, and the zoom applied on release, move nothing on the page; Fields
// folded gives its width to the results. Setup: ./browser.ts.

const EVENTS = 600;
const USER = { username: 'steady', password: 'steady-password-1', admin: false };

describeBrowser(
  'test/browser/search-daily.test.ts',
  'the search page as a daily user meets it, in Chromium',
  () => {
    let server: LiveApp;
    let base: string;
    let b: Browsing;
    let page: Page;
    const findings: AxeFinding[] = [];
    const consoleErrors: string[] = [];

    const count = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
    const events = (n: number) => `${n.toLocaleString('en-US')} events`;

    beforeAll(async () => {
      server = await startApp();
      base = server.base;
      const token = await createUser(server.t, USER);
      await ingest(server.t, demoEvents(7, EVENTS, Date.now() - 20 * 3_600_000, Date.now() - 60_000));
      b = await openBrowser({ context: { viewport: { width: 1440, height: 900 } }, token, consoleErrors });
      page = b.page;
    }, 120_000);

    afterAll(async () => {
      writeFindings('search-daily-findings.json', findings, consoleErrors);
      await closeAll(b, server);
    }, 30_000);

    /** Where the parts below the timeline are, and how far the page is scrolled. */
    const layout = () =>
      page.evaluate(() => {
        const top = (selector: string) => document.querySelector(selector)?.getBoundingClientRect().top ?? -1;
        return {
          timeline: top('section.timeline'),
          status: top('.status-row'),
          results: top('.search-body'),
          scrolled: document.scrollingElement?.scrollTop ?? 0,
        };
      });

    it('dragging across the timeline moves nothing on the page; the zoom applies on release', async () => {
      await page.goto(`${base}/search?range=last_24_hours`);
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS));
      const chart = page.locator('svg.timeline-chart.zoomable');
      const box = await chart.boundingBox();
      if (!box) throw new Error('no timeline');
      const before = await layout();
      const y = box.y + box.height / 2;
      await page.mouse.move(box.x + box.width * 0.2, y);
      await page.mouse.down();
      const during = [];
      for (const at of [0.3, 0.45, 0.6, 0.75]) {
        await page.mouse.move(box.x + box.width * at, y, { steps: 4 });
        during.push(await layout());
      }
      await page.locator('.timeline-selection').waitFor();
      await shot(page, 'search-timeline-dragging');
      for (const l of during) expect(l).toEqual(before);
      // Nothing applied yet: the address still holds the preset.
      expect(new URL(page.url()).searchParams.get('range')).toBe('last_24_hours');
      await page.mouse.up();
      await expect.poll(() => new URL(page.url()).searchParams.get('from')).not.toBeNull();
      expect(new URL(page.url()).searchParams.get('range')).toBeNull();
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).not.toBe(events(EVENTS));
      // Applied, the zoom moved nothing either: the timeline is still under the pointer.
      expect(await layout()).toEqual(before);
      expect(await page.getByRole('combobox', { name: 'Time range' }).inputValue()).toBe('zoomed');
      await shot(page, 'search-timeline-zoomed');
    });

    it('folding Fields gives its width to the results table, at 1440 and 1024 px', async () => {
      const toggle = page.getByRole('button', { name: 'Fields' });
      const results = page.getByRole('region', { name: 'Results' });
      const width = async (selector: string) => (await page.locator(selector).boundingBox())?.width ?? 0;
      for (const viewport of [
        { width: 1440, height: 900 },
        { width: 1024, height: 768 },
      ]) {
        await page.setViewportSize(viewport);
        await page.goto(`${base}/search?range=last_24_hours`);
        await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS));
        expect(await toggle.getAttribute('aria-expanded')).toBe('true');
        const body = await width('.search-body');
        const open = (await results.boundingBox())?.width ?? 0;
        expect(await width('.field-panel')).toBeGreaterThan(180);
        await toggle.click();
        expect(await toggle.getAttribute('aria-expanded')).toBe('false');
        // The folded list is as wide as its heading; the table takes the rest.
        await expect.poll(() => width('.field-panel')).toBeLessThan(120);
        const folded = (await results.boundingBox())?.width ?? 0;
        expect(folded, `${viewport.width} px`).toBeGreaterThan(open + 60);
        expect(folded + (await width('.field-panel')) + 8).toBeCloseTo(body, 0);
        await shot(page, `search-fields-folded-${viewport.width}`);
        await toggle.click();
        await expect.poll(() => results.boundingBox().then((box) => box?.width ?? 0)).toBeCloseTo(open, 0);
      }
      await page.setViewportSize({ width: 1440, height: 900 });
    });
  },
);
