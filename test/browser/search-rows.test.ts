import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AxeFinding,
  axe,
  type Browsing,
  closeAll,
  describeBrowser,
  type LiveApp,
  openBrowser,
  startApp,
  writeFindings,
} from './browser.js';
import { BIG, ingestRows, rowsPage, SEVERITIES } from './search-rows-setup.js';

// The result rows' columns as a daily user arranges them, in Chromium against a real
// server: the message last and widest, columns resized and moved (pointer and keyboard)
// and kept with the view, long lines wrapped or not, each row's severity stripe. Cell
// actions and speed: search-rows-actions.test.ts. Setup: ./browser.ts, ./search-rows-setup.ts.

describeBrowser(
  'test/browser/search-rows.test.ts',
  'the result rows’ columns as a daily user arranges them, in Chromium',
  () => {
    let server: LiveApp;
    let b: Browsing;
    let page: Page;
    const findings: AxeFinding[] = [];
    const consoleErrors: string[] = [];
    const { count, results, rows, header, width, headers, param, events, open, forget, snap } = rowsPage(
      () => page,
      () => server.base,
    );

    beforeAll(async () => {
      server = await startApp();
      const token = await ingestRows(server);
      b = await openBrowser({
        context: {
          viewport: { width: 1440, height: 900 },
          permissions: ['clipboard-read', 'clipboard-write'],
        },
        token,
        consoleErrors,
      });
      page = b.page;
    }, 120_000);

    afterAll(async () => {
      writeFindings('search-rows-findings.json', findings, consoleErrors);
      await closeAll(b, server);
    }, 30_000);

    it('shows the message last and widest, taking the spare width; the other columns fit their content', async () => {
      await forget();
      for (const viewport of [
        { width: 1440, height: 900 },
        { width: 1024, height: 768 },
      ]) {
        await page.setViewportSize(viewport);
        await open('app:rowtest', SEVERITIES.length);
        expect(await headers()).toEqual(['Time', 'Severity', 'Host', 'App', 'Message']);
        const message = await width('Message');
        const others = await Promise.all(['Time', 'Severity', 'Host', 'App'].map(width));
        for (const w of others) expect(message, `${viewport.width} px`).toBeGreaterThan(w);
        const table = (await results().locator('table').boundingBox())?.width ?? 0;
        expect(message + others.reduce((a, w) => a + w, 0)).toBeCloseTo(table, 0);
        // Host and App are as wide as their content (a few letters), not a fixed share.
        expect(others[2]).toBeLessThan(100);
        // No value of a sized column is cut.
        const cut = await results()
          .locator('tbody td:not(.c-msg)')
          .evaluateAll((cells) =>
            cells.filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent),
          );
        expect(cut, `${viewport.width} px`).toEqual([]);
      }
      await page.setViewportSize({ width: 1440, height: 900 });
    });

    it("resizes a column by dragging its header's edge or with ←/→ on it; the width stays with the view", async () => {
      await open('app:rowtest', SEVERITIES.length);
      const before = await width('Host');
      const handle = results().getByRole('separator', { name: 'Resize Host' });
      const box = await handle.boundingBox();
      if (!box) throw new Error('no resize handle');
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width / 2 + 80, box.y + box.height / 2, { steps: 8 });
      await page.mouse.up();
      await expect.poll(() => width('Host')).toBeCloseTo(before + 80, 0);
      const dragged = await width('Host');
      expect(param('widths')).toBe(`host:${Math.round(dragged)}`);
      // Dragging the edge sorted nothing.
      expect(param('sort')).toBeNull();

      await page.reload();
      await expect.poll(() => count().textContent(), { timeout: 15_000 }).toBe(events(SEVERITIES.length));
      expect(await width('Host')).toBeCloseTo(dragged, 0);
      // Remembered by the browser too: a new search without the address's widths has it.
      await open('app:rowtest', SEVERITIES.length);
      expect(await width('Host')).toBeCloseTo(dragged, 0);

      // The keyboard: the handle takes the focus, → widens by 16 px, Shift+← narrows by 64.
      await handle.focus();
      await page.keyboard.press('ArrowRight');
      await expect.poll(() => width('Host')).toBeCloseTo(dragged + 16, 0);
      expect(await handle.getAttribute('aria-valuenow')).toBe(String(Math.round(dragged + 16)));
      await page.keyboard.press('Shift+ArrowLeft');
      await expect.poll(() => width('Host')).toBeCloseTo(dragged - 48, 0);

      // A double-click fits it to its content again.
      await handle.dblclick();
      await expect.poll(() => width('Host')).toBeCloseTo(before, 0);
      expect(param('widths')).toBeNull();
    });

    it('moves a column by dragging its header, or from the column picker by keyboard; the order stays with the view', async () => {
      await forget();
      await open('app:rowtest', SEVERITIES.length);
      const app = await header('App').boundingBox();
      const time = await header('Time').boundingBox();
      if (!app || !time) throw new Error('no headers');
      await page.mouse.move(app.x + app.width / 2, app.y + app.height / 2);
      await page.mouse.down();
      await page.mouse.move(time.x + 10, time.y + time.height / 2, { steps: 10 });
      await expect.poll(() => results().locator('th.drop-before').count()).toBe(1);
      await page.mouse.up();
      await expect.poll(() => headers()).toEqual(['App', 'Time', 'Severity', 'Host', 'Message']);
      expect(param('cols')).toBe('app,time,severity,host,message');
      // The drop was no click on App's sort button.
      expect(param('sort')).toBeNull();
      expect(await rows().first().locator('td').first().textContent()).toBe('rowtest');

      await page.reload();
      await expect.poll(() => count().textContent(), { timeout: 15_000 }).toBe(events(SEVERITIES.length));
      expect(await headers()).toEqual(['App', 'Time', 'Severity', 'Host', 'Message']);

      // The keyboard: Columns lists the order, each column with Move left and Move right.
      const columns = page.getByRole('button', { name: 'Columns' });
      await columns.click();
      const right = page.getByRole('button', { name: 'Move App right' });
      await right.focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => headers()).toEqual(['Time', 'App', 'Severity', 'Host', 'Message']);
      // The focus stays on the button pressed, so it can be pressed again.
      expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
        'Move App right',
      );
      await axe(page, 'column picker with the order', findings);
      await snap('search-rows-column-order');
      await page.keyboard.press('Escape');
      expect(param('cols')).toBe('time,app,severity,host,message');
      // A column shown goes before the message, which stays last.
      await columns.click();
      await page.getByRole('checkbox', { name: 'Severity' }).uncheck();
      await page.getByRole('checkbox', { name: 'Severity' }).check();
      await page.keyboard.press('Escape');
      expect(await headers()).toEqual(['Time', 'App', 'Host', 'Severity', 'Message']);
      await forget();
    });

    it('wraps long messages when asked (remembered), one line with an ellipsis otherwise', async () => {
      await forget();
      await open('app:bigmsg', BIG);
      const first = rows().first();
      const height = async () => (await first.boundingBox())?.height ?? 0;
      expect(await height()).toBeLessThan(34);
      const wrap = page.getByRole('switch', { name: 'Wrap lines' });
      expect(await wrap.getAttribute('aria-checked')).toBe('false');
      await wrap.click();
      expect(await wrap.getAttribute('aria-checked')).toBe('true');
      await expect.poll(height).toBeGreaterThan(300);
      // A 64 KB message is cut where no one reads on; the event holds it whole.
      await first.getByText(/more characters$/).waitFor();
      await axe(page, 'rows wrapped', findings);
      await snap('search-rows-wrapped');

      await page.reload();
      await expect.poll(() => count().textContent(), { timeout: 15_000 }).toBe(events(BIG));
      expect(await wrap.getAttribute('aria-checked')).toBe('true');
      await expect.poll(height).toBeGreaterThan(300);
      await wrap.click();
      await expect.poll(height).toBeLessThan(34);
      expect(
        await first.locator('td.c-msg .cell-value').evaluate((c) => getComputedStyle(c).textOverflow),
      ).toBe('ellipsis');
    });

    it("starts each row with its severity's stripe, named for screen readers when no column says it", async () => {
      await forget();
      await open('app:rowtest', SEVERITIES.length);
      const colours = new Set<string>();
      for (const severity of SEVERITIES) {
        const row = results().locator(`tr.sev-row-${severity}`);
        expect(await row.count(), severity).toBe(1);
        const stripe = row.locator('td:first-child .sev-stripe');
        const colour = await stripe.evaluate((s) => getComputedStyle(s).backgroundColor);
        expect(colour, severity).not.toBe('rgba(0, 0, 0, 0)');
        colours.add(colour);
        // The severity column says it: the stripe is not read twice.
        expect(await stripe.getAttribute('aria-hidden')).toBe('true');
      }
      expect(colours.size).toBe(SEVERITIES.length);

      await page.getByRole('button', { name: 'Columns' }).click();
      await page.getByRole('checkbox', { name: 'Severity' }).uncheck();
      await page.keyboard.press('Escape');
      for (const severity of SEVERITIES)
        await results()
          .locator(`tr.sev-row-${severity}`)
          .getByRole('img', { name: `Severity: ${severity}` })
          .waitFor();
      await axe(page, 'rows with named stripes', findings);
      await forget();
    });
  },
);
