import type { Page, Response } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AxeFinding,
  axe,
  type Browsing,
  closeAll,
  createUser,
  demoEvents,
  describeBrowser,
  ingest,
  type LiveApp,
  openBrowser,
  queryBox,
  queryText,
  shot,
  signIn,
  startApp,
  storedToken,
  writeFindings,
} from './browser.js';

// The web UI meeting bad input and bad luck, in a real browser against a real server: a
// query's syntax error shown at its position with the text kept (in the editor and in the
// plain box); an expired session going to sign-in with a message and back to the same
// address after (a search, a dashboard); the live connection dropped by the server (a
// restart on the same port, a cut without a close frame) shown as reconnecting, then live
// again by itself with what was stored meanwhile and new events arriving. Setup:
// ./browser.ts.

const EVENTS = 600;
const USER = { username: 'recoverer', password: 'recoverer-password-1' };

describeBrowser('test/browser/recovery.timed.test.ts', 'bad input and bad luck in Chromium', () => {
  let server: LiveApp;
  let base: string;
  let b: Browsing;
  let page: Page;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  const count = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
  const liveState = () =>
    page.getByRole('status').filter({ hasText: /^(Live|Connecting…|Reconnecting…|Paused.*)$/ });
  const searchButton = () => page.getByRole('button', { name: 'Search', exact: true });
  const events = (n: number) => `${n.toLocaleString('en-US')} events`;

  /** The server's answer to a query that does not parse. */
  async function syntaxError(query: string): Promise<string> {
    const res = await server.app.inject({
      method: 'POST',
      url: '/api/query',
      headers: { authorization: `token ${server.t.adminToken}` },
      payload: { type: 'Search', params: { query, time_range: { preset: 'last_24_hours' } } },
    });
    expect(res.statusCode).toBe(400);
    return res.json().detail as string;
  }

  /** Where the query box marks an error: the text before the mark, or null without one. */
  const markedAt = () =>
    page.evaluate(() => {
      const content = document.querySelector('.cm-content');
      const mark = content?.querySelector('.cm-query-error, .cm-query-error-end');
      if (!content || !mark) return null;
      const range = document.createRange();
      range.setStart(content, 0);
      range.setEndBefore(mark);
      return { before: range.toString(), marked: mark.textContent ?? '' };
    });

  /** Where the query box's cursor is (its offset in the text). */
  const caretAt = () =>
    page.evaluate(() => {
      const content = document.querySelector('.cm-content');
      const sel = window.getSelection();
      if (!content || !sel?.anchorNode || !content.contains(sel.anchorNode)) return null;
      const range = document.createRange();
      range.setStart(content, 0);
      range.setEnd(sel.anchorNode, sel.anchorOffset);
      return range.toString().length;
    });

  /** Signs in on the sign-in page the app went to and waits for `url` again. */
  async function signInAgain(url: string) {
    await signIn(page, null, USER);
    await page.waitForURL((u) => u.pathname + u.search === url);
  }

  beforeAll(async () => {
    server = await startApp();
    base = server.base;
    await createUser(server.t, { ...USER, admin: false });
    await ingest(server, demoEvents(5, EVENTS, Date.now() - 23 * 3_600_000, Date.now() - 120_000));
    b = await openBrowser({ consoleErrors });
    page = b.page;
    await signIn(page, base, USER);
    await page.waitForURL((u) => u.pathname === '/search');
  }, 120_000);

  afterAll(async () => {
    writeFindings('recovery-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('shows a syntax error at its position in the editor, keeping the text; editing clears the mark', async () => {
    await page.goto(`${base}/search?range=last_24_hours`);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(events(EVENTS));
    await page.locator('.cm-content[aria-label="Query"]').waitFor();

    // Inside the query: the `)` where a value belongs.
    const bad = 'host:web-1 AND (status:500 OR ) message:timeout';
    const detail = await syntaxError(bad);
    expect(detail).toMatch(/^Syntax error at position 30 \(line 1, column 31\)/);
    await queryBox(page).fill(bad);
    await queryBox(page).press('Enter');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain(detail);
    // The place is marked under the message and in the box, whose text is as typed.
    expect(await alert.locator('mark').textContent()).toBe(')');
    expect(await alert.locator('.query-error-context').textContent()).toBe(bad);
    expect(await queryText(page)).toBe(bad);
    expect(await markedAt()).toEqual({ before: bad.slice(0, 30), marked: ')' });
    expect(await queryBox(page).getAttribute('aria-invalid')).toBe('true');
    expect(await queryBox(page).getAttribute('aria-describedby')).toBe(await alert.getAttribute('id'));
    // The cursor went to the error.
    await expect.poll(caretAt).toBe(30);
    await shot(page, 'search-syntax-error');
    await axe(page, 'search with a syntax error marked', findings);

    // Editing unmarks the box (the message stays until the next search).
    await queryBox(page).press('End');
    await queryBox(page).pressSequentially(' x');
    await expect.poll(markedAt).toBeNull();
    expect(await queryBox(page).getAttribute('aria-invalid')).toBeNull();

    // At the end of the query: the mark after the last character.
    const open = 'status:(500 OR';
    const atEnd = await syntaxError(open);
    await queryBox(page).fill(open);
    await searchButton().click();
    await expect.poll(() => alert.textContent()).toContain(atEnd);
    await expect.poll(markedAt).toEqual({ before: open, marked: '' });
    expect(await queryText(page)).toBe(open);
    expect(new URL(page.url()).searchParams.get('q')).toBe(open);

    // Mended, it searches: no alert, no mark.
    await queryBox(page).fill('status:(500 OR 404)');
    await queryBox(page).press('Enter');
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toMatch(/^[\d,]+ events$/);
    expect(await alert.count()).toBe(0);
    expect(await markedAt()).toBeNull();
  });

  it('shows the position in the plain query box too: the message marks it, the cursor goes there', async () => {
    await page.evaluate("window.localStorage.setItem('logscope.queryEditor', 'plain')");
    try {
      const bad = 'error AND NOT';
      const detail = await syntaxError(bad);
      await page.goto(`${base}/search?${new URLSearchParams({ q: bad, range: 'last_24_hours' })}`);
      const alert = page.getByRole('alert');
      await expect.poll(() => alert.textContent()).toContain(detail);
      const input = page.locator('input#query');
      expect(await input.inputValue()).toBe(bad);
      expect(await input.getAttribute('aria-invalid')).toBe('true');
      expect(await input.evaluate((el) => (el as HTMLInputElement).selectionStart)).toBe(bad.length);
      expect(await alert.locator('.query-error-context').textContent()).toBe(`${bad} `);
      await shot(page, 'search-syntax-error-plain');
    } finally {
      await page.evaluate("window.localStorage.removeItem('logscope.queryEditor')");
    }
  });

  it('an expired session on a search: sign-in says so, then the same address and results', async () => {
    const query = 'status:>=500';
    await page.goto(`${base}/search?${new URLSearchParams({ q: query, range: 'last_24_hours' })}`);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toMatch(/^[\d,]+ events$/);
    const shown = await count().textContent();
    const here = new URL(page.url());
    const url = here.pathname + here.search;
    expect(here.searchParams.get('q')).toBe(query);

    // The session's token is deleted (as an expiry, or a sign-out elsewhere, leaves it).
    const token = await storedToken(page);
    const deleted = await server.app.inject({
      method: 'DELETE',
      url: `/api/authtokens/${token}`,
      headers: { authorization: `token ${token}` },
    });
    expect(deleted.statusCode).toBe(204);
    await searchButton().click();
    await page.waitForURL((u) => u.pathname === '/login');
    const notice = page.getByRole('status').filter({ hasText: 'Your session has ended' });
    await notice.waitFor();
    expect(new URL(page.url()).searchParams.get('next')).toBe(url);
    await shot(page, 'session-expired');
    await axe(page, 'sign-in after the session ended', findings);

    await signInAgain(url);
    expect(await queryText(page)).toBe(query);
    await expect.poll(() => count().textContent(), { timeout: 10_000 }).toBe(shown);
    expect(await storedToken(page)).not.toBe(token);
  });

  it('an expired session on a dashboard is noticed without a click (its live connection ends)', async () => {
    const token = (await storedToken(page)) ?? '';
    const created = await server.app.inject({
      method: 'POST',
      url: '/api/dashboards',
      headers: { authorization: `token ${token}` },
      payload: { template: 'builtin/overview' },
    });
    expect(created.statusCode).toBe(201);
    const url = `/dashboards/${created.json().id}`;
    await page.goto(`${base}${url}`);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: /^Live$/ })
      .waitFor();

    const deleted = await server.app.inject({
      method: 'DELETE',
      url: `/api/authtokens/${token}`,
      headers: { authorization: `token ${token}` },
    });
    expect(deleted.statusCode).toBe(204);
    // No click: the server closes the connection (4401), the app asks and signs out.
    await page.waitForURL((u) => u.pathname === '/login', { timeout: 15_000 });
    await page.getByRole('status').filter({ hasText: 'Your session has ended' }).waitFor();
    await signInAgain(url);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: /^Live$/ })
      .waitFor();
  });

  it('live tail: the server restarts; "Reconnecting…" shows, then Live again by itself and new events', async () => {
    await page.goto(`${base}/search`);
    await page.getByRole('switch', { name: 'Live' }).click();
    await expect.poll(() => liveState().textContent(), { timeout: 10_000 }).toBe('Live');
    const rowWith = (text: string) =>
      page.getByRole('region', { name: 'Results' }).locator('tbody tr').filter({ hasText: text });
    await ingest(server, [
      { ts: Date.now() / 1000, host: 'probe-1', app: 'probe', message: 'before the restart' },
    ]);
    await rowWith('before the restart').waitFor({ timeout: 5000 });

    // Down for a while (connections refused): the page says so.
    await server.restart(async () => {
      await expect.poll(() => liveState().textContent(), { timeout: 10_000 }).toBe('Reconnecting…');
      await page.getByText('The connection to the server was lost.').waitFor();
      // Still refused after a retry or two: the state stays.
      await new Promise((r) => setTimeout(r, 1500));
      expect(await liveState().textContent()).toBe('Reconnecting…');
      await shot(page, 'search-live-reconnecting');
      await axe(page, 'search, live, reconnecting', findings);
      // "Retry now" tries at once instead of after the backoff (and fails again, for now).
      const attempt = page.waitForEvent('websocket', { timeout: 1000 });
      await page.getByRole('button', { name: 'Retry now' }).click();
      await attempt;
      await expect.poll(() => liveState().textContent()).toBe('Reconnecting…');
      // Stored while the page could not hear of it (straight into the stores: no HTTP now).
      const stored = await server.t.rt.services.ingest.ingest(
        [
          {
            index: 0,
            value: { ts: Date.now() / 1000, host: 'probe-3', app: 'probe', message: 'while down' },
          },
        ],
        null,
      );
      expect(stored.accepted).toBe(1);
    });
    // Back by itself (the backoff is at most a few seconds by now).
    await expect.poll(() => liveState().textContent(), { timeout: 15_000 }).toBe('Live');
    expect(await page.getByText('The connection to the server was lost.').count()).toBe(0);
    expect(await rowWith('before the restart').count()).toBe(1);
    // What was stored meanwhile comes with the next full run of the tailed Search (every
    // liveRefreshMs, 5 s).
    await rowWith('while down').waitFor({ timeout: 10_000 });

    const started = Date.now();
    await ingest(server, [
      { ts: Date.now() / 1000, host: 'probe-2', app: 'probe', message: 'after the restart' },
    ]);
    await rowWith('after the restart').waitFor({ timeout: 5000 });
    expect(Date.now() - started).toBeLessThan(5000);
    await shot(page, 'search-live-reconnected');
    await page.getByRole('switch', { name: 'Live' }).click();
  });

  it('live tail: its query removed on the server; the tail starts a new one and keeps its rows', async () => {
    await page.goto(`${base}/search`);
    // The tail's own Search (the page's search may be posting too).
    const tailSearch = (r: Response) =>
      r.url().endsWith('/api/query') &&
      r.request().method() === 'POST' &&
      /"preset":"last_15_minutes".*"page_size":500|"page_size":500.*"preset":"last_15_minutes"/.test(
        r.request().postData() ?? '',
      );
    const created = page.waitForResponse(tailSearch);
    await page.getByRole('switch', { name: 'Live' }).click();
    const first = await created;
    const qid = ((await first.json()) as { query_id: string }).query_id;
    // The page's own session (queries are their owner's).
    const authorization = (await first.request().allHeaders()).authorization as string;
    await expect.poll(() => liveState().textContent(), { timeout: 10_000 }).toBe('Live');
    const rowWith = (text: string) =>
      page.getByRole('region', { name: 'Results' }).locator('tbody tr').filter({ hasText: text });
    await ingest(server, [
      { ts: Date.now() / 1000, host: 'probe-4', app: 'probe', message: 'before removal' },
    ]);
    await rowWith('before removal').waitFor({ timeout: 5000 });
    // Removed on the server (as the query TTL or another tab would): the server ends the
    // subscription, and the page starts a new Search by itself.
    const again = page.waitForResponse(
      (r) => r.url().endsWith('/api/query') && r.request().method() === 'POST',
    );
    const removed = await server.app.inject({
      method: 'GET',
      url: `/api/query/${qid}/remove`,
      headers: { authorization },
    });
    expect(removed.statusCode).toBeLessThan(300);
    expect(((await (await again).json()) as { query_id: string }).query_id).not.toBe(qid);
    await ingest(server, [
      { ts: Date.now() / 1000, host: 'probe-5', app: 'probe', message: 'after removal' },
    ]);
    await rowWith('after removal').waitFor({ timeout: 5000 });
    expect(await rowWith('before removal').count()).toBe(1);
    expect(await liveState().textContent()).toBe('Live');
    await page.getByRole('switch', { name: 'Live' }).click();
  });

  it('a dashboard whose connection is cut (no close frame) reconnects and shows new events', async () => {
    const token = (await storedToken(page)) ?? '';
    const created = await server.app.inject({
      method: 'POST',
      url: '/api/dashboards',
      headers: { authorization: `token ${token}` },
      payload: { template: 'builtin/overview' },
    });
    expect(created.statusCode).toBe(201);
    await page.goto(`${base}/dashboards/${created.json().id}`);
    const state = page.locator('.dash-live[role="status"]');
    await expect.poll(() => state.textContent(), { timeout: 10_000 }).toBe('Live');
    const latest = page.getByRole('region', { name: 'Latest errors', exact: true });
    await expect.poll(() => latest.locator('tbody tr').count(), { timeout: 15_000 }).toBeGreaterThan(0);

    // Every state the page shows from here on, as it shows it.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seenStates: string[] }).seenStates = seen;
      const el = document.querySelector('.dash-live[role="status"]');
      if (!el) throw new Error('no live state');
      new MutationObserver(() => seen.push(el.textContent ?? '')).observe(el, {
        subtree: true,
        characterData: true,
        childList: true,
      });
      // And whether the "connection lost" notice showed meanwhile.
      const w = window as unknown as { bannerShown: boolean };
      w.bannerShown = false;
      new MutationObserver(() => {
        if (document.querySelector('.live-lost')) w.bannerShown = true;
      }).observe(document.body, { subtree: true, childList: true });
    });
    expect(server.cutWebsockets()).toBeGreaterThan(0);
    const seen = () => page.evaluate(() => (window as unknown as { seenStates: string[] }).seenStates);
    // Reconnecting first, Live last; the first retry comes within a second.
    await expect.poll(async () => (await seen()).at(-1), { timeout: 10_000 }).toBe('Live');
    expect((await seen())[0]).toBe('Reconnecting…');
    expect(await page.evaluate(() => (window as unknown as { bannerShown: boolean }).bannerShown)).toBe(true);
    expect(await page.getByText('The connection to the server was lost.').count()).toBe(0);

    const marker = `checkout failed: after the cut ${Date.now()}`;
    await ingest(server, [
      { time: new Date(Date.now() - 5_000).toISOString(), service: 'checkout', level: 'error', msg: marker },
    ]);
    await latest.getByText(marker).waitFor({ timeout: 8_000 });
  });

  it('logged no errors in the browser console but the expected ones', () => {
    // The refused query (400), the ended session (401), and, while the server was down,
    // the refused connections (the websocket's and the session check's).
    const unexpected = consoleErrors.filter(
      (e) =>
        !/status of 40[01]/.test(e) && !/ERR_CONNECTION_REFUSED|WebSocket connection to .* failed/.test(e),
    );
    expect(unexpected).toEqual([]);
  });
});
