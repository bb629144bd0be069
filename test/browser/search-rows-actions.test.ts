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
  queryText,
  startApp,
  writeFindings,
} from './browser.js';
import { BIG, ingestRows, rowsPage, SEVERITIES } from './search-rows-setup.js';

// What a daily user does from the result rows, in Chromium against a real server: a cell's
// actions (filter for, filter out, copy) by pointer and keyboard; screenshots at 1440 and
// 1024 px, light and dark (drawing 64 KB messages and 10,000 rows with no long task, a
// wall-clock bound: ./search-rows-scroll.timed.test.ts).
// Setup: ./browser.ts, ./search-rows-setup.ts.

describeBrowser('test/browser/search-rows-actions.test.ts', 'acting on the result rows, in Chromium', () => {
  let server: LiveApp;
  let b: Browsing;
  let page: Page;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];
  const { count, rows, param, events, open, forget, snap } = rowsPage(
    () => page,
    () => server.base,
  );

  beforeAll(async () => {
    server = await startApp();
    const token = await ingestRows(server);
    b = await openBrowser({
      context: { viewport: { width: 1440, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] },
      token,
      consoleErrors,
    });
    page = b.page;
  }, 120_000);

  afterAll(async () => {
    writeFindings('search-rows-actions-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('filters for or out a value, or copies it, from the actions over a cell', async () => {
    await forget();
    await open('app:rowtest', SEVERITIES.length);
    const host = rows().first().locator('td.c-host');
    expect(await host.textContent()).toBe('web-1');
    const filterFor = host.getByRole('button', { name: 'Filter for host:web-1' });
    expect(await filterFor.isVisible()).toBe(false);
    await host.hover();
    await filterFor.waitFor();
    await axe(page, 'cell actions', findings);
    await filterFor.click();
    await expect.poll(() => queryText(page)).toBe('app:rowtest host:"web-1"');
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(3));
    // No event opened by the click.
    expect(param('ev')).toBeNull();
    expect(await rows().locator('td.c-host').allTextContents()).toEqual(['web-1', 'web-1', 'web-1']);

    const again = rows().first().locator('td.c-host');
    await again.hover();
    await again.getByRole('button', { name: 'Filter out host:web-1' }).click();
    await expect.poll(() => queryText(page)).toBe('app:rowtest -host:"web-1"');
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(3));
    await expect
      .poll(() => rows().locator('td.c-host').allTextContents())
      .toEqual(['web-2', 'web-2', 'web-2']);

    const message = rows().first().locator('td.c-msg');
    const text = (await message.textContent()) ?? '';
    expect(text).toMatch(/^rowtest error event 1:/);
    await message.hover();
    await message.getByRole('button', { name: 'Copy message' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    // Seen beside the button pressed.
    await message.locator('.cell-action.copy[data-copied]').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(text);
    await snap('search-rows-copied');
  });

  it('reaches every cell and its actions from the keyboard', async () => {
    await forget();
    await open('app:rowtest', SEVERITIES.length);
    const active = () =>
      page.evaluate(() => {
        const el = document.activeElement;
        return el ? `${el.tagName.toLowerCase()}.${el.className}|${el.getAttribute('aria-label') ?? ''}` : '';
      });
    // The first cell's button is the row's tab stop; → moves along the row's cells.
    await rows().first().locator('button.row-open').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    expect(await active()).toBe('td.c-host|');
    const actions = rows().first().locator('td.c-host .cell-actions');
    expect(await actions.isVisible()).toBe(true);
    await page.keyboard.press('ArrowLeft');
    expect(await active()).toBe('td.c-sev|');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Tab');
    expect(await active()).toBe('button.cell-action filter-in|Filter for host:web-1');
    await page.keyboard.press('Enter');
    await expect.poll(() => queryText(page)).toBe('app:rowtest host:"web-1"');
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(3));

    // Enter on a cell opens its event, as a click on the row does.
    await rows().first().locator('button.row-open').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Event' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  it('looks right at 1440 and 1024 px, light and dark', async () => {
    await forget();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const viewport of [
        { width: 1440, height: 900 },
        { width: 1024, height: 768 },
      ]) {
        await page.setViewportSize(viewport);
        await open('app:rowtest OR app:bigmsg', SEVERITIES.length + BIG);
        const host = rows().nth(1).locator('td.c-host');
        await host.hover();
        await host.locator('.cell-actions').waitFor();
        await snap(`search-rows-${viewport.width}-${scheme}`);
      }
      if (scheme === 'dark') await axe(page, 'rows, dark', findings);
    }
    await page.emulateMedia({ colorScheme: null });
    await page.setViewportSize({ width: 1440, height: 900 });
  });
});
