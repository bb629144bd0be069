import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Download, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ARTIFACTS,
  type AxeFinding,
  axe,
  type Browsing,
  closeAll,
  describeBrowser,
  ingest,
  type LiveApp,
  openBrowser,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The search page's "Create trigger…" and its report notice, in Chromium against a real
// server: the dialog prefilled from the search (query with its stream, pipes left out, a
// threshold), a preview of the last 24 h equal to counting the ingested bursts by hand,
// following the threshold and the query (an older query's late answer dropped), the trigger
// saved as shown, a bad threshold refused at its field, the action hidden from a user who may
// not manage triggers; and the report dialog's notice turning to ready with its download.
// Setup: ./browser.ts.

const APP = 'trigtest';
/** Bursts of matches (events 2 s apart) hours apart: how many events each has. */
const BURSTS = [15, 25, 35, 45, 55];
const SHOTS = '/tmp/shots';

/** Firings (rising edges) of `count op value` over per-second windows, counted naively. */
function naiveFirings(tsList: readonly number[], from: number, to: number, value: number, window: number) {
  const seconds = tsList.map(Math.floor);
  const out: number[] = [];
  let firing = false;
  for (let s = from; s < to; s++) {
    let n = 0;
    for (const x of seconds) if (x > s - window && x <= s) n++;
    const on = n > value;
    if (on && !firing) out.push(s);
    firing = on;
  }
  return out;
}

describeBrowser('test/browser/search-trigger.test.ts', 'Create trigger from a search, in Chromium', () => {
  let server: LiveApp;
  let t: LiveApp['t'];
  let base: string;
  let b: Browsing;
  let page: Page;
  let maker: { id: number; token: string };
  let plain: { id: number; token: string };
  let streamId: number;
  /** The matches' times (Unix s), and the bursts' events alone. */
  const matches: number[] = [];
  const bigOnes: number[] = [];
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  const dialog = () => page.getByRole('dialog', { name: 'Create trigger' });
  const preview = () => dialog().getByRole('region', { name: 'The last 24 hours' }).getByRole('status');
  const triggers = async () =>
    (await t.as(maker.token, { method: 'GET', url: '/api/triggers' })).json().results as Array<
      Record<string, unknown>
    >;

  beforeAll(async () => {
    server = await startApp();
    t = server.t;
    base = server.base;
    mkdirSync(SHOTS, { recursive: true });
    maker = await t.user('maker', { permissions: ['manage_triggers'] });
    plain = await t.user('plain');
    const stream = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/streams',
      payload: { title: 'Payments', rule: `app:${APP}`, readers: { users: [maker.id, plain.id], teams: [] } },
    });
    expect(stream.statusCode).toBe(201);
    streamId = stream.json().id;

    // Even seconds (the preview reads 2-second buckets), well inside the last 24 h.
    const now = Math.floor(Date.now() / 1000 / 2) * 2;
    const records: object[] = [];
    BURSTS.forEach((size, i) => {
      const start = now - (21 - 4 * i) * 3600;
      for (let k = 0; k < size; k++) {
        const ts = start + 2 * k;
        matches.push(ts);
        bigOnes.push(ts);
        records.push({ ts, app: APP, host: 'db-1', message: `disk full burst ${i} event ${k}`, size: 'big' });
      }
    });
    // One match every 20 minutes besides (10 minutes off the bursts' starts), and other apps'
    // events that the query leaves out.
    for (let ts = now - 23 * 3600 + 600; ts < now - 600; ts += 1200) {
      matches.push(ts);
      records.push({ ts, app: APP, host: 'db-2', message: 'disk check ok' });
      records.push({ ts: ts + 2, app: 'other', host: 'web-1', message: 'disk full elsewhere' });
    }
    await ingest(t, records);
    b = await openBrowser({
      context: { viewport: { width: 1440, height: 900 }, timezoneId: 'UTC' },
      token: maker.token,
      consoleErrors,
    });
    page = b.page;
  }, 120_000);

  afterAll(async () => {
    writeFindings('search-trigger-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  /** The search page with `query` over the last 24 hours, once it has answered. */
  async function search(query: string) {
    await page.goto(`${base}/search?${new URLSearchParams({ q: query, range: 'last_24_hours' })}`);
    await page
      .locator('.status-row .count')
      .filter({ hasText: /events|rows?$/ })
      .waitFor({ timeout: 15_000 });
  }

  it('opens prefilled from the search: its query and stream, the pipes left out, more than 10 in 5 minutes', async () => {
    await search(`stream:${streamId} AND app:${APP} | stats count() by host`);
    await page.getByRole('button', { name: 'Create trigger…' }).click();
    await dialog().waitFor();
    expect(await dialog().getByLabel('Name').inputValue()).toBe(`app:${APP}`);
    const query = dialog().getByLabel('Query');
    expect(await query.inputValue()).toBe(`stream:${streamId} AND app:${APP}`);
    const describedBy = (await query.getAttribute('aria-describedby')) ?? '';
    const hint = await page.locator(`[id="${describedBy.split(' ')[0]}"]`).textContent();
    expect(hint).toContain('In the stream “Payments”.');
    expect(hint).toContain('pipes are left out');
    expect(await dialog().getByLabel('Fires when').inputValue()).toBe('gt');
    expect(await dialog().getByLabel('N (matches)').inputValue()).toBe('10');
    expect(await dialog().getByLabel('Window (minutes)').inputValue()).toBe('5');
    expect(await dialog().getByLabel('Cooldown (minutes)').inputValue()).toBe('5');
    expect(await dialog().getByLabel('Open a task when it fires').isChecked()).toBe(true);
  });

  it('previews the firings of the last 24 h as counted from the ingested events, following the threshold', async () => {
    const from = Math.floor(Date.now() / 1000) - 86_400;
    const to = from + 86_400;
    const expected = (value: number) => naiveFirings(matches, from, to, value, 300);
    // Each burst crosses once, the matches between them never do.
    expect(expected(10).length).toBe(5);
    expect(expected(30).length).toBe(3);
    expect(expected(50).length).toBe(1);

    await expect.poll(() => preview().textContent(), { timeout: 15_000 }).toMatch(/^Would have fired/);
    expect(await preview().textContent()).toBe(
      `Would have fired 5 times in the last 24 h. Busiest 5-minute window: ${BURSTS.at(-1)} matches.`,
    );
    // The listed times are the firings counted here, in the browser's zone (UTC).
    const times = await dialog().getByRole('list', { name: 'Firings' }).locator('time').allTextContents();
    const stamp = (s: number) => new Date(s * 1000).toISOString().slice(5, 19).replace('T', ' ');
    expect(times).toEqual(expected(10).map(stamp));
    const chart = dialog().getByRole('img');
    expect(await chart.getAttribute('aria-label')).toContain('against the threshold 10; 5 firings marked');

    const n = dialog().getByLabel('N (matches)');
    await n.fill('30');
    await expect.poll(() => preview().textContent()).toMatch(/^Would have fired 3 times in the last 24 h\./);
    expect(await dialog().getByRole('list', { name: 'Firings' }).locator('time').allTextContents()).toEqual(
      expected(30).map(stamp),
    );
    await n.fill('50');
    await expect.poll(() => preview().textContent()).toMatch(/^Would have fired 1 time in the last 24 h\./);
    await n.fill('60');
    await expect.poll(() => preview().textContent()).toMatch(/^Would not have fired in the last 24 h\./);
    // A wider window holds a burst and the matches around it.
    await n.fill('10');
    await dialog().getByLabel('Window (minutes)').fill('60');
    await expect
      .poll(() => preview().textContent())
      .toBe(
        `Would have fired ${naiveFirings(matches, from, to, 10, 3600).length} times in the last 24 h. Busiest 1-hour window: ${
          BURSTS.at(-1)! + 3
        } matches.`,
      );
    await dialog().getByLabel('Window (minutes)').fill('5');
    await n.fill('30');
    await expect.poll(() => preview().textContent()).toMatch(/^Would have fired 3 times/);

    for (const width of [1440, 1024]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.setViewportSize({ width, height: 900 });
        await page.emulateMedia({ colorScheme });
        const name = `search-trigger-${width}-${colorScheme}`;
        await shot(page, name);
        copyFileSync(path.join(ARTIFACTS, `${name}.png`), path.join(SHOTS, `${name}.png`));
        // Light is checked with the field error below.
        if (width === 1024 && colorScheme === 'dark')
          await axe(page, 'create trigger dialog, dark', findings);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  it('previews the query as typed: an older query answering late is dropped', async () => {
    // The first query typed answers 2.5 s late; the second at once.
    const slow = `app:${APP} AND host:db-2`;
    let released: Promise<void> = Promise.resolve();
    const hold = async (route: Route) => {
      const body = route.request().postDataJSON() as { params?: { query?: string } } | null;
      if (body?.params?.query !== slow) return route.continue();
      released = new Promise<void>((r) => setTimeout(r, 2500)).then(() => route.continue().catch(() => {}));
      await released;
    };
    await page.route('**/api/query', hold);
    try {
      const query = dialog().getByLabel('Query');
      await query.fill(slow);
      await page.waitForRequest(
        (r) => r.url().endsWith('/api/query') && r.postData()?.includes('db-2') === true,
      );
      await query.fill(`app:${APP} AND size:big`);
      await expect
        .poll(() => preview().textContent(), { timeout: 10_000 })
        .toMatch(/^Would have fired 3 times/);
      // The slow answer (no firing at 30: one match every 20 minutes) comes and is not shown.
      await released;
      await page.waitForTimeout(300);
      expect(await preview().textContent()).toMatch(/^Would have fired 3 times/);
      expect(await dialog().getByRole('list', { name: 'Firings' }).locator('time').count()).toBe(3);
    } finally {
      await page.unroute('**/api/query', hold);
    }
    expect(bigOnes.length).toBe(BURSTS.reduce((a, x) => a + x, 0));
    await dialog().getByLabel('Query').fill(`stream:${streamId} AND app:${APP}`);
    await expect
      .poll(() => preview().textContent(), { timeout: 10_000 })
      .toMatch(/^Would have fired 3 times/);
  });

  it('refuses a bad threshold at its field and creates nothing', async () => {
    const before = (await triggers()).length;
    const n = dialog().getByLabel('N (matches)');
    await n.fill('-5');
    expect(await preview().textContent()).toMatch(/needs N as a whole number/);
    await dialog().getByRole('button', { name: 'Create trigger' }).click();
    await expect.poll(() => n.getAttribute('aria-invalid')).toBe('true');
    const errorId = ((await n.getAttribute('aria-describedby')) ?? '').split(' ').at(-1);
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toBe('Must be >= 0.');
    expect(await dialog().getByRole('alert').filter({ hasText: 'not created' }).textContent()).toBe(
      'The trigger was not created: see the marked fields.',
    );
    await n.fill('2.5');
    await dialog().getByRole('button', { name: 'Create trigger' }).click();
    await expect.poll(() => page.locator(`[id="${errorId}"]`).textContent()).toBe('Must be an integer.');
    await axe(page, 'create trigger dialog with a field error', findings);
    await shot(page, 'search-trigger-field-error');
    expect((await triggers()).length).toBe(before);
  });

  it('saves the trigger as shown and links to it', async () => {
    await dialog().getByLabel('N (matches)').fill('30');
    await dialog().getByLabel('Name').fill('Disk bursts');
    await dialog().getByLabel('Severity').selectOption('high');
    await dialog().getByRole('button', { name: 'Create trigger' }).click();
    const done = dialog().getByRole('status').filter({ hasText: 'Created the trigger' });
    await done.waitFor();
    expect(await done.textContent()).toContain('Created the trigger “Disk bursts”.');
    const saved = (await triggers()).filter((x) => x.name === 'Disk bursts');
    expect(saved).toHaveLength(1);
    expect(saved[0]).toMatchObject({
      query: `stream:${streamId} AND app:${APP}`,
      severity: 'high',
      create_task: true,
      cooldown_seconds: 300,
      enabled: true,
      owner: maker.id,
      condition: { type: 'threshold', op: 'gt', value: 30, window_seconds: 300, group_by: [] },
    });
    expect(await dialog().getByRole('button', { name: 'Create trigger' }).count()).toBe(0);
    await done.getByRole('link', { name: 'Open it in Triggers' }).click();
    // Under the full suite's load (two test files and their servers beside the browser)
    // this navigation once took past the page's 10 s default.
    await page.waitForURL(
      (u) => u.pathname === '/triggers' && u.searchParams.get('edit') === String(saved[0]?.id),
      { timeout: 30_000 },
    );
    const form = page.getByRole('form', { name: 'Edit trigger “Disk bursts”' });
    await form.waitFor();
    expect(await form.getByLabel('N (events)').inputValue()).toBe('30');
  });

  it('follows the report it made: ready, with a Download that gives the file', async () => {
    await search(`app:${APP}`);
    await page.getByRole('button', { name: 'Export' }).click();
    await page.getByRole('menuitem', { name: 'Report…' }).click();
    const report = page.getByRole('dialog', { name: 'Report' });
    await report.getByLabel('Format').selectOption('csv');
    await report.getByLabel('Title').fill('Disk report');
    await report.getByRole('button', { name: 'Create report' }).click();
    const notice = report.getByRole('status').filter({ hasText: 'Disk report' });
    await expect.poll(() => notice.textContent(), { timeout: 20_000 }).toMatch(/^“Disk report” is ready\./);
    expect(await report.getByText('Generating').count()).toBe(0);
    await axe(page, 'report dialog, ready', findings);
    await shot(page, 'search-report-ready');
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 20_000 }),
      notice.getByRole('button', { name: 'Download' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/\.csv$/);
    const text = readFileSync(await (download as Download).path(), 'utf8');
    // Every match of the search, and the header.
    expect(text.split(/\r?\n/).filter(Boolean).length).toBe(matches.length + 1);
    await expect.poll(() => notice.textContent()).toContain('Downloaded');
  });

  it('offers no Create trigger to a user who may not manage triggers', async () => {
    const context = await b.browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
    try {
      await context.addInitScript(
        `window.localStorage.setItem('logscope.token', ${JSON.stringify(plain.token)})`,
      );
      const theirs = await context.newPage();
      const me = theirs.waitForResponse((r) => r.url().endsWith('/api/users/me') && r.ok(), {
        timeout: 15_000,
      });
      await theirs.goto(`${base}/search?${new URLSearchParams({ q: `app:${APP}`, range: 'last_24_hours' })}`);
      await me;
      // Their search works and its other actions are there; the permission is known (the answer above is in).
      await theirs.getByRole('button', { name: 'Add to dashboard' }).waitFor({ timeout: 15_000 });
      await theirs.waitForTimeout(300);
      expect(await theirs.getByRole('button', { name: 'Create trigger…' }).count()).toBe(0);
      expect((await me).url()).toContain('/api/users/me');
      const who = await t.as(plain.token, { method: 'GET', url: '/api/users/me' });
      expect(who.json()).toMatchObject({ username: 'plain', is_admin: false, permissions: [] });
    } finally {
      await context.close();
    }
  });
});
