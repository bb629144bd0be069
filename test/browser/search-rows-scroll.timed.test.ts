import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type Browsing,
  closeAll,
  describeBrowser,
  type LiveApp,
  openBrowser,
  startApp,
  writeFindings,
} from './browser.js';
import { BIG, ingestRows, rowsPage, SEVERITIES } from './search-rows-setup.js';

// Drawing the result rows stays quick, in Chromium against a real server: 64 KB messages (one
// line, wrapped, scrolled) and 10,000 rows (scrolled to the middle and the end) with no long
// task over 200 ms. A wall-clock bound, so a timed file: it runs alone in CI, where a
// parallel file's load once stretched a task to 223 ms. Setup: ./browser.ts,
// ./search-rows-setup.ts.

const BULK = 10_000;

describeBrowser(
  'test/browser/search-rows-scroll.timed.test.ts',
  'drawing the result rows, in Chromium',
  () => {
    let server: LiveApp;
    let b: Browsing;
    let page: Page;
    const consoleErrors: string[] = [];
    const { count, results, rows, events, open, forget } = rowsPage(
      () => page,
      () => server.base,
    );

    beforeAll(async () => {
      server = await startApp();
      const token = await ingestRows(server, BULK);
      b = await openBrowser({ context: { viewport: { width: 1440, height: 900 } }, token, consoleErrors });
      page = b.page;
    }, 120_000);

    afterAll(async () => {
      writeFindings('search-rows-scroll-findings.json', [], consoleErrors);
      await closeAll(b, server);
    }, 30_000);

    it('renders 64 KB messages and scrolls 10,000 rows with no long task over 200 ms', async () => {
      // The longest task of the least of two runs: the browser shares two cores with the rest of
      // the suite, which once stretched one task to 331 ms; a page that is slow is slow twice.
      const first = await longTasksByPhase();
      const worst = (phases: Record<string, number[]>) => Math.max(0, ...Object.values(phases).flat());
      const least =
        worst(first) < 200 ? worst(first) : Math.min(worst(first), worst(await longTasksByPhase()));
      expect(least).toBeLessThan(200);
    }, 150_000);

    /** Draws 64 KB messages (one line, wrapped, scrolled) and 10,000 rows (scrolled): the long tasks by phase. */
    async function longTasksByPhase(): Promise<Record<string, number[]>> {
      await forget();
      await open('app:rowtest', SEVERITIES.length);
      await page.evaluate(() => {
        const w = window as unknown as { longTasks: number[] };
        w.longTasks = [];
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) w.longTasks.push(Math.round(entry.duration));
        }).observe({ type: 'longtask' });
      });
      /** The long tasks since the last phase, kept under the phase's name. */
      const phases: Record<string, number[]> = {};
      let seen = 0;
      const phase = async (name: string) => {
        const all = await page.evaluate(() => (window as unknown as { longTasks: number[] }).longTasks);
        phases[name] = all.slice(seen);
        seen = all.length;
      };
      const search = async (query: string, total: number) => {
        await page.getByRole('textbox', { name: 'Query' }).fill(query);
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        await expect.poll(() => count().textContent(), { timeout: 20_000 }).toBe(events(total));
        await expect.poll(() => rows().first().textContent()).toContain(query.slice(4));
      };
      const wrap = page.getByRole('switch', { name: 'Wrap lines' });
      const firstHeight = () =>
        rows()
          .first()
          .boundingBox()
          .then((r) => r?.height ?? 0);

      await search('app:bigmsg', BIG);
      await phase('64 KB messages, one line');
      await wrap.click();
      await expect.poll(firstHeight).toBeGreaterThan(300);
      await phase('wrapped');
      await results().evaluate((el) => el.scrollTo(0, el.scrollHeight));
      await expect.poll(() => rows().last().getAttribute('aria-rowindex')).toBe(String(BIG + 1));
      await phase('wrapped, scrolled to the end');
      await wrap.click();
      await expect
        .poll(() =>
          rows()
            .first()
            .boundingBox()
            .then((r) => r?.height ?? 0),
        )
        .toBeLessThan(34);
      await phase('one line again');

      await search('app:bulk', BULK);
      await phase('10,000 rows');
      // Scrolled to the middle and the end: each time the rows in view come and are drawn.
      for (const at of [0.5, 1]) {
        await results().evaluate((el, f) => el.scrollTo(0, (el.scrollHeight - el.clientHeight) * f), at);
        await expect
          .poll(() => results().locator('tbody tr.loading-row').count(), { timeout: 15_000 })
          .toBe(0);
        // The rows in view are drawn a moment after the placeholders go (a loaded machine saw none yet).
        await expect.poll(() => rows().count(), { timeout: 15_000 }).toBeGreaterThan(10);
        await phase(`scrolled to ${at * 100} %`);
      }
      await expect.poll(() => rows().last().getAttribute('aria-rowindex')).toBe(String(BULK + 1));
      console.info(`long tasks (ms) by phase: ${JSON.stringify(phases)}`);
      return phases;
    }
  },
);
