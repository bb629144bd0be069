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
  ingest as ingestInto,
  type LiveApp,
  openBrowser,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The live tail as a daily reader meets it, in Chromium against a real server: scrolled
// down or with an event open the rows stay where they are while new events are counted on
// a "N new — jump to newest" bar (the count said politely, at most every few seconds);
// jumping, scrolling back to the top or closing the event shows them from the top; the
// reader's own Pause stays; the count goes on past the rows kept. Setup: ./browser.ts.

const SEEDED = 300;
const USER = { username: 'tailer', password: 'tailer-password-1', admin: false };

describeBrowser(
  'test/browser/search-live.test.ts',
  'the live tail holds still while read, in Chromium',
  () => {
    let server: LiveApp;
    let b: Browsing;
    let page: Page;
    const findings: AxeFinding[] = [];
    const consoleErrors: string[] = [];
    /** Each event ingested gets a later time than the one before: newest first is ingest order reversed. */
    let clock = Date.now() - 5 * 60_000;
    let shown = SEEDED;

    const ingest = (messages: string[]) =>
      ingestInto(
        server.t,
        messages.map((message) => {
          clock = Math.max(clock + 1, Date.now() - 60_000);
          return { ts: clock / 1000, host: 'tail-1', app: 'tailer', severity: 'info', message };
        }),
      );
    const count = () => page.getByRole('status').filter({ hasText: /events$/ });
    const state = () =>
      page.getByRole('status').filter({ hasText: /^(Live|Connecting…|Reconnecting…|Paused.*)$/ });
    const results = () => page.getByRole('region', { name: 'Results' });
    const bar = () => page.locator('.live-new');
    const said = () => page.locator('.live-new-said');
    const events = (n: number) => `${n.toLocaleString('en-US')} events`;
    /** The results' scroll offset and the text of the row 100 px below the list's top edge. */
    const place = () =>
      results().evaluate((list) => {
        const box = list.getBoundingClientRect();
        const row = document.elementFromPoint(box.left + box.width / 2, box.top + 100)?.closest('tr');
        return { scrollTop: list.scrollTop, row: row?.textContent ?? '' };
      });
    const firstRow = () => results().locator('tbody tr.event-row').first().textContent();
    const wheel = async (dy: number) => {
      const box = await results().boundingBox();
      if (!box) throw new Error('no results');
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.wheel(0, dy);
    };

    beforeAll(async () => {
      server = await startApp();
      const token = await createUser(server.t, USER);
      await ingest(Array.from({ length: SEEDED }, (_, i) => `seeded ${i}`));
      b = await openBrowser({ context: { viewport: { width: 1440, height: 900 } }, token, consoleErrors });
      page = b.page;
    }, 120_000);

    afterAll(async () => {
      writeFindings('search-live-findings.json', findings, consoleErrors);
      await closeAll(b, server);
    }, 30_000);

    it('scrolled down, the rows stay put and "N new — jump to newest" counts; jumping shows them from the top', async () => {
      await page.goto(`${server.base}/search?range=last_15_minutes`);
      await page.getByRole('switch', { name: 'Live' }).click();
      await expect.poll(() => state().textContent(), { timeout: 15_000 }).toBe('Live');
      await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(SEEDED));
      await wheel(600);
      await expect.poll(() => state().textContent()).toBe('Paused while scrolled');
      const before = await place();
      expect(before.scrollTop).toBeGreaterThan(100);
      await ingest(['held one', 'held two', 'held three']);
      const jump = page.getByRole('button', { name: '3 new — jump to newest' });
      await jump.waitFor({ timeout: 5_000 });
      // Nothing moved under the reader, nothing was added to the rows.
      expect(await place()).toEqual(before);
      expect(await count().textContent()).toBe(events(shown));
      await expect.poll(() => said().textContent()).toBe('3 new events held while you read');
      await axe(page, 'live tail, held with new events', findings);
      mkdirSync('/tmp/shots', { recursive: true });
      for (const width of [1440, 1024])
        for (const scheme of ['light', 'dark'] as const) {
          await page.setViewportSize({ width, height: 900 });
          await page.emulateMedia({ colorScheme: scheme });
          await jump.waitFor();
          const name = `search-live-new-${width}-${scheme}`;
          await shot(page, name);
          copyFileSync(path.join(ARTIFACTS, `${name}.png`), `/tmp/shots/${name}.png`);
        }
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize({ width: 1440, height: 900 });
      if ((await place()).scrollTop <= 4) await wheel(600);

      await jump.click();
      shown += 3;
      await expect.poll(() => count().textContent(), { timeout: 5_000 }).toBe(events(shown));
      expect((await place()).scrollTop).toBe(0);
      expect(await firstRow()).toContain('held three');
      expect(await bar().count()).toBe(0);
      expect(await state().textContent()).toBe('Live');
    });

    it('scrolling back to the top shows what came meanwhile', async () => {
      await wheel(900);
      await expect.poll(() => state().textContent()).toBe('Paused while scrolled');
      await ingest(['while away']);
      await page.getByRole('button', { name: '1 new — jump to newest' }).waitFor({ timeout: 5_000 });
      expect(await count().textContent()).toBe(events(shown));
      await wheel(-5_000);
      shown += 1;
      await expect.poll(() => count().textContent(), { timeout: 5_000 }).toBe(events(shown));
      expect(await firstRow()).toContain('while away');
      expect(await bar().count()).toBe(0);
      await expect.poll(() => state().textContent()).toBe('Live');
    });

    it('an event open holds the rows; closing it shows the new ones', async () => {
      const top = await firstRow();
      await results().locator('tbody tr.event-row').first().click();
      const dialog = page.getByRole('dialog', { name: 'Event' });
      await dialog.waitFor();
      expect(await state().textContent()).toBe('Paused while an event is open');
      await ingest(['while open one', 'while open two']);
      // Beside the event panel the bar counts them; the rows are as they were.
      await expect.poll(() => bar().textContent(), { timeout: 5_000 }).toBe('2 new — jump to newest');
      expect(await firstRow()).toBe(top);
      expect(await count().textContent()).toBe(events(shown));
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      shown += 2;
      await expect.poll(() => count().textContent(), { timeout: 5_000 }).toBe(events(shown));
      expect(await firstRow()).toContain('while open two');
      expect(await bar().count()).toBe(0);
    });

    it('with an event open, jumping shows the new rows and leaves the event open', async () => {
      await results().locator('tbody tr.event-row').nth(1).click();
      const dialog = page.getByRole('dialog', { name: 'Event' });
      await dialog.waitFor();
      await expect.poll(() => state().textContent()).toBe('Paused while an event is open');
      await ingest(['jumped past']);
      const jump = page.getByRole('button', { name: '1 new — jump to newest' });
      await jump.waitFor({ timeout: 5_000 });
      await axe(page, 'live tail, held beside an open event', findings);
      await jump.click();
      shown += 1;
      await expect.poll(() => count().textContent(), { timeout: 5_000 }).toBe(events(shown));
      expect(await firstRow()).toContain('jumped past');
      expect(await dialog.isVisible()).toBe(true);
      // The bar went with its button: the focus is on the newest row, not lost.
      expect(await page.evaluate(() => document.activeElement?.closest('tr')?.textContent ?? '')).toContain(
        'jumped past',
      );
      expect(await state().textContent()).toBe('Live');
      // Jumped past, that event holds the rows no more: the next ones come in.
      await ingest(['after the jump']);
      shown += 1;
      await expect.poll(() => count().textContent(), { timeout: 5_000 }).toBe(events(shown));
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
    });

    it("Pause stays the reader's: at the top it holds, counts beside it, and only Resume shows them", async () => {
      await page.getByRole('button', { name: 'Pause' }).click();
      await expect.poll(() => state().textContent()).toBe('Paused');
      await ingest(['paused one']);
      await expect.poll(() => state().textContent(), { timeout: 5_000 }).toBe('Paused: 1 new');
      // The count is beside Resume; no second one over the rows.
      expect(await bar().count()).toBe(0);
      await wheel(600);
      await wheel(-5_000);
      await expect.poll(() => results().evaluate((list) => list.scrollTop)).toBe(0);
      expect(await state().textContent()).toBe('Paused: 1 new');
      expect(await count().textContent()).toBe(events(shown));
      await page.getByRole('button', { name: 'Resume' }).click();
      shown += 1;
      await expect.poll(() => count().textContent(), { timeout: 5_000 }).toBe(events(shown));
      expect(await firstRow()).toContain('paused one');
    });

    it('the count goes on past the rows kept, said at most every 5 s; jumping keeps the newest 2,000', async () => {
      await wheel(600);
      await expect.poll(() => state().textContent()).toBe('Paused while scrolled');
      // Every change of what is said, with when, in the page.
      await page.evaluate(() => {
        const region = document.querySelector('.live-new-said');
        const log: { at: number; text: string }[] = [];
        (window as unknown as { said: typeof log }).said = log;
        if (region)
          new MutationObserver(() =>
            log.push({ at: performance.now(), text: region.textContent ?? '' }),
          ).observe(region, { childList: true, characterData: true, subtree: true });
      });
      // Batches smaller than the tail's page (500), each seen before the next: exact counts.
      // Spread over more than 5 s, the count changes 6 times and is said at most twice.
      const BATCH = 400;
      const started = Date.now();
      for (let i = 1; i <= 6; i++) {
        await ingest(Array.from({ length: BATCH }, (_, j) => `burst ${i}-${j}`));
        const n = (i * BATCH).toLocaleString('en-US');
        await expect.poll(() => bar().textContent(), { timeout: 10_000 }).toBe(`${n} new — jump to newest`);
        await page.waitForTimeout(Math.max(0, (i * 7_000) / 6 - (Date.now() - started)));
      }
      await expect
        .poll(() => said().textContent(), { timeout: 8_000 })
        .toBe('2,400 new events held while you read');
      const log = await page.evaluate(
        () => (window as unknown as { said: { at: number; text: string }[] }).said,
      );
      const texts = log.filter((s) => s.text);
      expect(texts.length).toBeGreaterThanOrEqual(2);
      expect(texts.length).toBeLessThanOrEqual(3);
      for (let i = 1; i < texts.length; i++)
        expect(texts[i]!.at - texts[i - 1]!.at).toBeGreaterThanOrEqual(4_900);

      await bar().click();
      await expect.poll(() => count().textContent(), { timeout: 5_000 }).toBe(events(2_000));
      expect(await firstRow()).toContain('burst 6-399');
      expect((await place()).scrollTop).toBe(0);
    });

    it('more than a page between two updates: the count says it is at least that many', async () => {
      await wheel(600);
      await expect.poll(() => state().textContent()).toBe('Paused while scrolled');
      await ingest(Array.from({ length: 1_200 }, (_, j) => `flood ${j}`));
      // The server's page (500 events) cannot hold them all: some were never seen.
      await expect
        .poll(() => bar().textContent(), { timeout: 10_000 })
        .toMatch(/^[\d,]+\+ new — jump to newest$/);
      const n = Number((await bar().textContent())?.replace(/\D/g, ''));
      expect(n).toBeGreaterThanOrEqual(500);
      expect(n).toBeLessThanOrEqual(1_200);
      await bar().click();
      await expect.poll(firstRow, { timeout: 5_000 }).toContain('flood 1199');
    });
  },
);
