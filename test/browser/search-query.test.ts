import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SYNTAX_SECTIONS } from '../../ui/src/pages/search/syntax-examples.js';
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
  queryText,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The query box's helpers and an empty result's offers, in Chromium against a real server:
// the queries searched last (↑ in the empty box, the History button, Clear history), the
// syntax help (opened from the keyboard, an example put in the box and searched), and a
// search that matched nothing offering a wider range and, for a misspelt field, the field
// that exists. Setup: ./browser.ts.

const USER = { username: 'querier', password: 'querier-password-1', admin: false };
/** 60 events two to three hours ago: none in the last hour. */
const EVENTS = 60;
const HOSTS = ['web-1', 'web-2', 'db-1'];
const WEB_1 = EVENTS / 3;
const STATUS_500 = EVENTS / 5;
type Look = readonly [number, 'light' | 'dark'];
/** 1440 and 1024 px wide, light and dark; or two of those (a screenshot costs seconds under load). */
const ALL: readonly Look[] = [
  [1440, 'light'],
  [1440, 'dark'],
  [1024, 'light'],
  [1024, 'dark'],
];
const SOME: readonly Look[] = [
  [1440, 'dark'],
  [1024, 'light'],
];

describeBrowser(
  'test/browser/search-query.test.ts',
  'the query box’s history and syntax help, empty results',
  () => {
    let server: LiveApp;
    let base: string;
    let b: Browsing;
    let page: Page;
    const findings: AxeFinding[] = [];
    const consoleErrors: string[] = [];

    const count = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
    const events = (n: number) => `${n.toLocaleString('en-US')} events`;
    const listbox = () => page.getByRole('listbox');
    const editor = () => page.locator('.cm-content[aria-label="Query"]');
    /** Types a query and searches it with the Search button (a completion list cannot take the Enter). */
    const search = async (q: string, expected: number) => {
      await queryBox(page).fill(q);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await expect.poll(() => count().textContent()).toBe(events(expected));
    };
    /** Screenshots at these widths and colour schemes (`reopen` shows the popover or panel again). */
    const shots = async (name: string, looks: readonly Look[], reopen: () => Promise<void>) => {
      for (const [width, scheme] of looks) {
        await page.setViewportSize({ width, height: 900 });
        await page.emulateMedia({ colorScheme: scheme });
        await reopen();
        await shot(page, `${name}-${width}-${scheme}`);
      }
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.emulateMedia({ colorScheme: 'light' });
    };

    beforeAll(async () => {
      server = await startApp();
      base = server.base;
      const token = await createUser(server.t, USER);
      const start = Date.now() - 3 * 3_600_000;
      await ingest(
        server.t,
        Array.from({ length: EVENTS }, (_, i) => ({
          ts: (start + i * 60_000) / 1000,
          host: HOSTS[i % 3],
          app: 'nginx',
          status: i % 5 === 0 ? 500 : 200,
          severity: i % 5 === 0 ? 'error' : 'info',
          message: `GET /page/${i} status ${i % 5 === 0 ? 500 : 200}`,
        })),
      );
      b = await openBrowser({ context: { viewport: { width: 1440, height: 900 } }, token, consoleErrors });
      page = b.page;
    }, 120_000);

    afterAll(async () => {
      writeFindings('search-query-findings.json', findings, consoleErrors);
      await closeAll(b, server);
    }, 30_000);

    it('↑ in the empty box offers the queries searched last, newest first, each once; one chosen runs with Enter', async () => {
      await page.goto(`${base}/search?range=last_4_hours`);
      // The browser's first page: the editor's chunk may take a while to come under load.
      await editor().waitFor({ timeout: 30_000 });
      await expect.poll(() => count().textContent()).toBe(events(EVENTS));
      await search('host:web-1', WEB_1);
      await search('status:500', STATUS_500);
      await search('host:web-2', WEB_1);
      await search('host:web-1', WEB_1);

      // ↑ in the empty box: the list, newest first, each once.
      await queryBox(page).fill('');
      await page.waitForTimeout(200);
      await page.keyboard.press('ArrowUp');
      await listbox().waitFor();
      expect(await listbox().getByRole('option').allInnerTexts()).toEqual([
        'host:web-1',
        'host:web-2',
        'status:500',
      ]);
      await axe(page, 'query history in the box', findings);
      await shot(page, 'search-query-history-list');
      // The list ignores keys for a moment after opening.
      await page.waitForTimeout(150);
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      expect(await queryText(page)).toBe('host:web-2');
      await page.keyboard.press('Enter');
      await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe('host:web-2');
      await expect.poll(() => count().textContent()).toBe(events(WEB_1));
      expect(await page.evaluate(() => window.localStorage.getItem('logscope.queryHistory'))).toBe(
        JSON.stringify(['host:web-2', 'host:web-1', 'status:500']),
      );
    });

    it('the History button lists them; one chosen goes into the box and Enter runs it; Clear history forgets them', async () => {
      // The list the test before left (written here, so that this test runs alone too).
      await page.goto(`${base}/search?range=last_4_hours`);
      await page.evaluate(() =>
        window.localStorage.setItem(
          'logscope.queryHistory',
          JSON.stringify(['host:web-2', 'host:web-1', 'status:500']),
        ),
      );
      await page.reload();
      await editor().waitFor({ timeout: 30_000 });
      await expect.poll(() => count().textContent()).toBe(events(EVENTS));
      const historyButton = page.getByRole('button', { name: 'Query history' });
      await historyButton.click();
      const dialog = page.getByRole('dialog', { name: 'Recent queries' });
      await dialog.waitFor();
      expect(await historyButton.getAttribute('aria-expanded')).toBe('true');
      expect(await dialog.getByRole('listitem').allInnerTexts()).toEqual([
        'host:web-2',
        'host:web-1',
        'status:500',
      ]);
      // The focus is on the newest; ↓ moves on.
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('status:500');
      await axe(page, 'query history popover', findings);
      await shots('search-query-history', SOME, async () => {
        if (!(await dialog.isVisible())) await historyButton.click();
        await dialog.waitFor();
      });
      await dialog.getByRole('button', { name: 'status:500' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(await queryText(page)).toBe('status:500');
      expect(await editor().evaluate((el) => el === document.activeElement)).toBe(true);
      await page.keyboard.press('Enter');
      await expect.poll(() => count().textContent()).toBe(events(STATUS_500));
      expect(await page.evaluate(() => window.localStorage.getItem('logscope.queryHistory'))).toBe(
        JSON.stringify(['status:500', 'host:web-2', 'host:web-1']),
      );

      // Clear history: nothing listed, nothing kept, ↑ offers nothing.
      await historyButton.click();
      await dialog.getByRole('button', { name: 'Clear history' }).click();
      await dialog.getByText('The queries you search show here').waitFor();
      expect(await dialog.getByRole('listitem').count()).toBe(0);
      expect(await page.evaluate(() => window.localStorage.getItem('logscope.queryHistory'))).toBeNull();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await page.reload();
      await editor().waitFor();
      await queryBox(page).fill('');
      await page.waitForTimeout(200);
      await page.keyboard.press('ArrowUp');
      await page.waitForTimeout(300);
      expect(await listbox().count()).toBe(0);
    });

    it('opens the syntax help from the keyboard; an example chosen goes into the box and Enter searches it', async () => {
      await page.goto(`${base}/search?range=last_4_hours`);
      await editor().waitFor();
      await expect.poll(() => count().textContent()).toBe(events(EVENTS));
      // From the box, Tab reaches History, then Syntax.
      await queryBox(page).click();
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      const syntaxButton = page.getByRole('button', { name: 'Query syntax' });
      expect(await syntaxButton.evaluate((el) => el === document.activeElement)).toBe(true);
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Query syntax' });
      await dialog.waitFor();
      const examples = SYNTAX_SECTIONS.flatMap((s) => s.examples.map((e) => e.query));
      expect(await dialog.locator('.syntax-example').allInnerTexts()).toEqual(examples);
      // The first example has the focus.
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(examples[0]);
      await axe(page, 'syntax help', findings);
      await shots('search-query-syntax', ALL, async () => {
        if (!(await dialog.isVisible())) await syntaxButton.click();
        await dialog.waitFor();
      });

      // Escape closes it, the focus back on its button.
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expect(await syntaxButton.evaluate((el) => el === document.activeElement)).toBe(true);

      await page.keyboard.press('Enter');
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'status:>=500', exact: true }).focus();
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached' });
      expect(await queryText(page)).toBe('status:>=500');
      // The focus is in the box, so Enter searches it.
      expect(await editor().evaluate((el) => el.contains(document.activeElement))).toBe(true);
      await page.keyboard.press('Enter');
      await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe('status:>=500');
      await expect.poll(() => count().textContent()).toBe(events(STATUS_500));
      expect(await page.getByRole('alert').count()).toBe(0);

      // Every example is a query the server runs (those with pipes as a Table).
      for (const query of examples) {
        const res = await server.app.inject({
          method: 'POST',
          url: '/api/query',
          headers: { authorization: `token ${server.t.adminToken}` },
          payload: {
            type: query.includes('|') ? 'Table' : 'Search',
            params: { query, time_range: { preset: 'last_4_hours' } },
          },
        });
        expect([200, 202], `${query}: ${res.body}`).toContain(res.statusCode);
        expect(res.json().status, query).not.toBe('ERROR');
      }
    });

    it('a search that matches nothing offers a wider range, with what it holds, which finds the events', async () => {
      await page.goto(`${base}/search?range=last_hour&q=${encodeURIComponent('host:web-1')}`);
      await expect.poll(() => count().textContent()).toBe(events(0));
      const results = page.getByRole('region', { name: 'Results' });
      await results.getByText('No events match host:web-1 in this time range.').waitFor();
      const wider = results.getByRole('button', { name: 'Search the last 4 hours' });
      await wider.waitFor();
      await results.getByText(events(WEB_1), { exact: true }).waitFor();
      await axe(page, 'empty result with a wider range', findings);
      await shots('search-query-empty', ALL, async () => {
        await wider.waitFor();
      });
      await wider.click();
      await expect.poll(() => count().textContent()).toBe(events(WEB_1));
      expect(new URL(page.url()).searchParams.get('range')).toBe('last_4_hours');
      expect(await queryText(page)).toBe('host:web-1');
    });

    it('says how the search met the word index: a word no block holds is answered without reading', async () => {
      await page.goto(`${base}/search?range=last_4_hours&q=${encodeURIComponent('zirconium')}`);
      await expect.poll(() => count().textContent()).toBe(events(0));
      await expect
        .poll(() => page.locator('.index-status').textContent())
        .toBe('word index: none of 1 block holds it, nothing read');
      await shot(page, 'search-query-index-status');
    });

    it('a misspelt field offers the field that exists; the fix finds the events', async () => {
      await page.goto(`${base}/search?range=last_4_hours&q=${encodeURIComponent('hots:web-1')}`);
      await expect.poll(() => count().textContent()).toBe(events(0));
      const results = page.getByRole('region', { name: 'Results' });
      await results.getByText('No event in this range has the field hots; did you mean host?').waitFor();
      const fix = results.getByRole('button', { name: 'Use host instead' });
      await fix.waitFor();
      await results.getByText(events(WEB_1), { exact: true }).waitFor();
      // Wider ranges hold no hots either.
      await results.getByText(/^No events match in .+ either\.$/).waitFor({ timeout: 20_000 });
      await axe(page, 'empty result with a field fix', findings);
      await shots('search-query-field-fix', SOME, async () => {
        await fix.waitFor();
      });
      await fix.click();
      await expect.poll(() => count().textContent()).toBe(events(WEB_1));
      expect(await queryText(page)).toBe('host:web-1');
      expect(new URL(page.url()).searchParams.get('q')).toBe('host:web-1');
    });
  },
);
