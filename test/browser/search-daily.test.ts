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
  queryBox,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The search page as a daily user meets it, in Chromium against a real server: dragging
// on the timeline, the selection it leaves and the zoom to it move nothing on the page; Fields
// folded gives its width to the results; the field list shows no values of another
// search. Setup: ./browser.ts.

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

    it('dragging across the timeline moves nothing on the page; the selection zooms with Zoom in', async () => {
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
      // Released: a selection (for Explain or Zoom in), nothing applied and nothing moved.
      const selected = page.getByRole('group', { name: /^Selected / });
      await selected.waitFor();
      expect(new URL(page.url()).searchParams.get('range')).toBe('last_24_hours');
      expect(await layout()).toEqual(before);
      await selected.getByRole('button', { name: 'Zoom in' }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get('from')).not.toBeNull();
      expect(new URL(page.url()).searchParams.get('range')).toBeNull();
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).not.toBe(events(EVENTS));
      // Applied, the zoom moved nothing either: the timeline is still under the pointer.
      expect(await layout()).toEqual(before);
      // The time picker's button names the zoomed window; nothing opened for it.
      const range = page.getByRole('button', { name: /^Time range: / });
      expect(await range.textContent()).toMatch(/^Time range: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d to /);
      expect(await range.getAttribute('aria-expanded')).toBe('false');
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

    it('the field list shows only the shown search’s values: loading while they come, a late answer of an older search dropped', async () => {
      await page.goto(`${base}/search?range=last_24_hours`);
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS));
      const panel = page.getByRole('region', { name: 'Fields' });
      await panel.getByRole('button', { name: /^app [\d,]+$/ }).click();
      const filterFor = (value: string) => panel.getByRole('button', { name: `Filter for app:${value}` });
      await filterFor('nginx').waitFor();

      // The fields of a search answer only when the test says (the completion's are not held).
      const held: { query: string; release: () => Promise<void> }[] = [];
      await page.route('**/api/fields?*', async (route) => {
        const query = new URL(route.request().url()).searchParams.get('query') ?? '';
        if (query === '') return route.continue();
        const response = await route.fetch();
        held.push({ query, release: () => route.fulfill({ response }).catch(() => {}) });
      });
      const search = async (query: string) => {
        const shownBefore = await count().textContent();
        await queryBox(page).fill(query);
        await queryBox(page).press('Enter');
        await expect.poll(() => count().textContent(), { timeout: 10_000 }).toMatch(/^[\d,]+ events$/);
        await expect.poll(() => count().textContent()).not.toBe(shownBefore);
      };
      try {
        // The rows of app:sshd are there, its fields not yet: nothing of the search before.
        await search('app:sshd');
        await expect.poll(() => held.map((h) => h.query)).toEqual(['app:sshd']);
        await expect.poll(() => panel.getByText('Loading fields…').count()).toBe(1);
        expect(await filterFor('nginx').count()).toBe(0);
        expect(await panel.getByRole('button', { name: /^app [\d,]+$/ }).count()).toBe(0);
        await shot(page, 'search-fields-loading');

        // Another search before the first's fields came: its answer shows, the older one's,
        // arriving after, does not replace it.
        await search('app:firewall');
        await expect.poll(() => held.map((h) => h.query)).toEqual(['app:sshd', 'app:firewall']);
        await held[1]?.release();
        await filterFor('firewall').waitFor();
        await held[0]?.release();
        await page.waitForTimeout(300);
        expect(await filterFor('sshd').count()).toBe(0);
        expect(await filterFor('firewall').count()).toBe(1);
      } finally {
        await page.unroute('**/api/fields?*');
      }
    });
  },
);
