import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ARTIFACTS,
  type AxeFinding,
  axe,
  type Browsing,
  closeAll,
  createUser,
  describeBrowser,
  ingest,
  type LiveApp,
  openBrowser,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The event panel beside the results, in Chromium against a real server, keyboard only:
// the table is one Tab stop whose arrows, j/k, Home/End move between rows, Enter opens the
// row in the panel beside them (both seen at 1440 px), j/k step the panel, Escape closes it
// with the focus back on the row; the query's terms marked in rows and panel. Screenshots
// at 1440 and 1024 px, light and dark (/tmp/shots/search-panel-*.png).

const USER = { username: 'paneller', password: 'paneller-password-1', admin: false };
const N = 8;

describeBrowser('test/browser/search-panel.test.ts', 'the event panel and the keyboard, in Chromium', () => {
  let server: LiveApp;
  let b: Browsing;
  let page: Page;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];
  const results = () => page.getByRole('region', { name: 'Results' });
  const rows = () => results().locator('tbody tr.event-row');
  const panel = () => page.getByRole('dialog', { name: 'Event' });
  const param = (name: string) => new URL(page.url()).searchParams.get(name);
  /** The index (data-index) of the row holding the focus, or null. */
  const focusedRow = () =>
    page.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('data-index') ?? null);
  const snap = async (name: string) => {
    await shot(page, name);
    mkdirSync('/tmp/shots', { recursive: true });
    copyFileSync(path.join(ARTIFACTS, `${name}.png`), path.join('/tmp/shots', `${name}.png`));
  };
  const open = async (query: string, total: number) => {
    await page.goto(`${server.base}/search?range=last_24_hours&q=${encodeURIComponent(query)}`);
    await expect
      .poll(
        () =>
          page
            .getByRole('status')
            .filter({ hasText: /events$/ })
            .first()
            .textContent(),
        {
          timeout: 15_000,
        },
      )
      .toBe(`${total} events`);
    await rows().first().waitFor();
  };

  beforeAll(async () => {
    server = await startApp();
    const token = await createUser(server.t, USER);
    const now = Date.now();
    await ingest(
      server.t,
      Array.from({ length: N }, (_, i) => ({
        '@timestamp': new Date(now - (i + 1) * 60_000).toISOString(),
        host: `web-${i % 2}`,
        app: 'paneltest',
        severity: i % 3 ? 'info' : 'error',
        message: `panel event ${i}: payment ${i % 2 ? 'declined' : 'Timeout'} for order ${1000 + i} via gateway peer web-1`,
      })),
    );
    b = await openBrowser({ context: { viewport: { width: 1440, height: 900 } }, token, consoleErrors });
    page = b.page;
  }, 120_000);

  afterAll(async () => {
    writeFindings('search-panel-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('the table is one Tab stop; arrows, j/k, Home/End move; Enter opens the panel beside; j/k step it; Escape returns to the row', async () => {
    await open('app:paneltest', N);
    // Tab from the Wrap/Columns controls reaches the table once: the first row.
    await results().locator('tbody tr.event-row').first().locator('.row-open').focus();
    await page.keyboard.press('Shift+Tab');
    await expect.poll(focusedRow).toBeNull();
    await page.keyboard.press('Tab');
    await expect.poll(focusedRow).toBe('0');
    const tabbable = await rows().evaluateAll(
      (trs) => trs.filter((tr) => tr.querySelector<HTMLElement>('.row-open')?.tabIndex === 0).length,
    );
    expect(tabbable).toBe(1);
    await page.keyboard.press('ArrowDown');
    await expect.poll(focusedRow).toBe('1');
    await page.keyboard.press('j');
    await expect.poll(focusedRow).toBe('2');
    await page.keyboard.press('k');
    await expect.poll(focusedRow).toBe('1');
    await page.keyboard.press('End');
    await expect.poll(focusedRow).toBe(String(N - 1));
    await page.keyboard.press('ArrowDown'); // at the end: stays
    await expect.poll(focusedRow).toBe(String(N - 1));
    await page.keyboard.press('Home');
    await expect.poll(focusedRow).toBe('0');
    await page.keyboard.press('ArrowUp'); // at the start: stays
    await expect.poll(focusedRow).toBe('0');
    await page.keyboard.press('j');
    // Tab leaves the table (the next control is not a row).
    await page.keyboard.press('Tab');
    await expect.poll(focusedRow).toBeNull();
    await page.keyboard.press('Shift+Tab');
    await expect.poll(focusedRow).toBe('1');

    // Enter opens row 1 in the panel, beside the results (no modal: both seen).
    await page.keyboard.press('Enter');
    await panel().waitFor();
    await expect.poll(() => panel().locator('.event-message').textContent()).toMatch(/^panel event 1:/);
    const ev1 = param('ev');
    expect(ev1).not.toBeNull();
    const p = await panel().boundingBox();
    const r = await results().boundingBox();
    expect(p && r).toBeTruthy();
    if (p && r) {
      expect(p.x).toBeGreaterThanOrEqual(r.x + r.width - 1);
      expect(r.width).toBeGreaterThan(500);
      expect(p.width).toBeGreaterThan(350);
    }
    expect(await rows().nth(1).getAttribute('aria-current')).toBe('true');
    // The results stay usable: no backdrop makes the rest of the page inert.
    expect(await page.evaluate(() => document.querySelector('dialog:modal'))).toBeNull();
    // The focus is on the panel's heading, not on a write action.
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H2');
    await axe(page, 'event panel open', findings);

    // j/k step the panel through the results; at the ends nothing happens.
    await page.keyboard.press('j');
    await expect.poll(() => panel().locator('.event-message').textContent()).toMatch(/^panel event 2:/);
    expect(param('ev')).not.toBe(ev1);
    expect(await rows().nth(2).getAttribute('aria-current')).toBe('true');
    expect(await rows().nth(1).getAttribute('aria-current')).toBeNull();
    await page.keyboard.press('k');
    await page.keyboard.press('k');
    await expect.poll(() => panel().locator('.event-message').textContent()).toMatch(/^panel event 0:/);
    await page.keyboard.press('k');
    await page.waitForTimeout(200);
    expect(await panel().locator('.event-message').textContent()).toMatch(/^panel event 0:/);
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => panel().locator('.event-message').textContent()).toMatch(/^panel event 1:/);

    // Escape closes it; the focus is back on its row, the address forgets it.
    await page.keyboard.press('Escape');
    await panel().waitFor({ state: 'detached' });
    await expect.poll(focusedRow).toBe('1');
    expect(param('ev')).toBeNull();

    // With the panel open, the table's arrows move the row and the panel follows it.
    await page.keyboard.press('Enter');
    await panel().waitFor();
    await rows().nth(1).locator('.row-open').focus();
    await page.keyboard.press('ArrowDown');
    await expect.poll(focusedRow).toBe('2');
    await expect.poll(() => panel().locator('.event-message').textContent()).toMatch(/^panel event 2:/);
    await page.keyboard.press('Escape');
    await panel().waitFor({ state: 'detached' });
    await expect.poll(focusedRow).toBe('2');
  }, 60_000);

  it("marks the query's terms in the rows' messages and the panel, not a negated one", async () => {
    await open('app:paneltest payment GATEWAY -host:web-1', N / 2);
    const rowMarks = await rows().locator('td.c-msg mark').allTextContents();
    expect(rowMarks.length).toBe(N);
    expect([...new Set(rowMarks.map((m) => m.toLowerCase()))].sort()).toEqual(['gateway', 'payment']);
    // The negated value is in every message ("peer web-1"): not marked.
    expect(await rows().first().locator('td.c-msg').textContent()).toContain('peer web-1');
    await rows().first().locator('.row-open').focus();
    await page.keyboard.press('Enter');
    await panel().waitFor();
    const message = panel().locator('.event-message');
    await expect.poll(() => message.locator('mark').allTextContents()).toEqual(['payment', 'gateway']);
    const marks = await panel().locator('table.fields mark').allTextContents();
    expect(marks).toContain('paneltest');
    expect(marks).toContain('payment');
    expect(marks.some((m) => /web-1/.test(m))).toBe(false);
    expect(await panel().locator('mark', { hasText: 'declined' }).count()).toBe(0);
    await axe(page, 'event panel with marked terms', findings);
    await snap('search-panel-marks');
    await page.emulateMedia({ colorScheme: 'dark' });
    await snap('search-panel-marks-dark');
    await axe(page, 'marked terms, dark', findings);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.keyboard.press('Escape');
    await panel().waitFor({ state: 'detached' });
  }, 60_000);

  it('screenshots with the panel open at 1440 and 1024 px, light and dark', async () => {
    await open('app:paneltest', N);
    await rows().nth(1).click();
    await panel().waitFor();
    for (const width of [1440, 1024]) {
      await page.setViewportSize({ width, height: 900 });
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await snap(`search-panel-${width}-${scheme}`);
      }
      // Beside, not over, the results at both widths.
      const p = await panel().boundingBox();
      const r = await results().boundingBox();
      if (p && r) expect(p.x).toBeGreaterThanOrEqual(r.x + r.width - 1);
    }
    await axe(page, 'event panel, dark, 1024 px', findings);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 60_000);
});
