import { readFileSync } from 'node:fs';
import type { Download, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  axe,
  type Browsing,
  closeAll,
  createUser,
  demoEvents,
  describeBrowser,
  ingest,
  type LiveApp,
  openBrowser,
  shot,
  signIn,
  startApp,
} from './browser.js';

// Tasks, triggers, reports and the search page's Export / Add to dashboard in a real
// browser against a real server: a task made and closed, a task made from an event, a
// trigger whose bad query is refused as you type, a PDF report downloaded, a CSV export,
// a search added to a dashboard; axe and screenshots (test-artifacts/ui/). Setup:
// ./browser.ts.

const EVENTS = 1000;
const USERNAME = 'worker';
const PASSWORD = 'worker-password-1';
const ERRORS_QUERY = 'status:>=500';

describeBrowser('test/browser/work.test.ts', 'tasks, triggers and reports in Chromium', () => {
  let server: LiveApp;
  let t: LiveApp['t'];
  let base: string;
  let b: Browsing;
  let page: Page;
  let operator: { authorization: string };
  let dashboardId: number;
  const consoleErrors: string[] = [];

  const status = () => page.getByRole('status').filter({ hasText: /events$|Search/ });
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });

  async function call(method: 'GET' | 'POST', url: string, payload?: object) {
    const res = await t.app.inject({ method, url, headers: operator, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> & { results?: unknown[] } };
  }

  async function downloaded(click: () => Promise<void>): Promise<{ name: string; bytes: Buffer }> {
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 20_000 }), click()]);
    const file = await (download as Download).path();
    return { name: download.suggestedFilename(), bytes: readFileSync(file) };
  }

  /** The search page with `query` over the last 24 hours, its results counted. */
  async function search(query: string) {
    await page.goto(`${base}/search?${new URLSearchParams({ q: query, range: 'last_24_hours' })}`);
    await expect.poll(() => status().textContent(), { timeout: 15_000 }).toMatch(/^[\d,]+ events$/);
  }

  beforeAll(async () => {
    server = await startApp();
    ({ t, base } = server);
    operator = {
      authorization: `token ${await createUser(t, { username: USERNAME, password: PASSWORD, admin: false })}`,
    };
    await ingest(t, demoEvents(11, EVENTS, Date.now() - 23 * 3_600_000, Date.now() - 60_000));

    const board = await call('POST', '/api/dashboards', { title: 'Ops board' });
    expect(board.status).toBe(201);
    dashboardId = board.body.id as number;

    b = await openBrowser({
      context: { timezoneId: 'Europe/Berlin', acceptDownloads: true },
      consoleErrors,
    });
    page = b.page;
    await signIn(page, base, { username: USERNAME, password: PASSWORD });
    await page.waitForURL((u) => u.pathname === '/search');
  }, 120_000);

  afterAll(async () => {
    await closeAll(b, server);
  }, 30_000);

  it('creates a task, lists it under Open, closes it and it leaves Open', async () => {
    await nav('Tasks').click();
    await page.getByRole('heading', { level: 1, name: 'Tasks' }).waitFor();
    const title = 'Rotate the TLS certificate on lb-1';
    await page.getByLabel('Title').fill(title);
    await page.getByLabel('Priority').selectOption('high');
    await page.getByLabel('Due date').fill('2031-05-04');
    await page.getByLabel('Assignee').fill(USERNAME);
    await page.getByRole('button', { name: 'Create task' }).click();

    const open = page.getByRole('button', { name: 'Open', exact: true });
    expect(await open.getAttribute('aria-pressed')).toBe('true');
    const row = page.getByRole('row').filter({ hasText: title });
    await row.waitFor();
    expect(await row.textContent()).toContain('2031-05-04');
    expect(await row.textContent()).toContain(USERNAME);
    expect(await row.textContent()).toContain('high');

    await page.getByRole('button', { name: 'Mine' }).click();
    await row.waitFor();

    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await row.getByRole('button', { name: `Close “${title}”` }).click();
    await row.waitFor({ state: 'detached' });
    const list = await call('GET', `/api/tasks?title=${encodeURIComponent(title)}`);
    expect(list.body.results).toMatchObject([{ title, is_open: false, priority: 'high' }]);

    await page.getByRole('button', { name: 'All' }).click();
    await row.waitFor();
    expect(await row.textContent()).toContain('Closed');
    await row.getByRole('button', { name: `Reopen “${title}”` }).waitFor();
  });

  it('the event dialog opens on its heading: Enter twice creates no task; Create task asks once, naming it, and links the event', async () => {
    await search('');
    const first = page.getByRole('region', { name: 'Results' }).locator('tbody').getByRole('row').first();
    await first.locator('button.row-open').focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Event' });
    await dialog.waitFor();
    const field = async (name: string) =>
      (
        (await dialog
          .locator('table.fields tr')
          .filter({ has: page.locator('th', { hasText: new RegExp(`^${name}$`) }) })
          .locator('td')
          .first()
          .textContent()) ?? ''
      ).trim();
    const evId = await field('ev_id');
    expect(evId).not.toBe('');
    const linkedTasks = async () => {
      const tasks = await call('GET', '/api/tasks?page_size=100');
      return (tasks.body.results as { title: string; ev_ids: string[] }[]).filter((x) =>
        x.ev_ids.includes(evId),
      );
    };

    // Enter again, as a reader does once the dialog is up: no action that writes has the focus.
    await page.keyboard.press('Enter');
    await page.waitForTimeout(500);
    expect(await linkedTasks()).toEqual([]);
    expect(await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 40))).toMatch(/^<h2\b/);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Event');
    expect(await dialog.getByRole('group', { name: /Create a task/ }).count()).toBe(0);

    // Create task asks first, saying what it will create; Cancel creates nothing.
    const title = (await field('message')).split('\n')[0]?.trim() ?? '';
    await dialog.getByRole('button', { name: 'Create task…' }).click();
    const confirm = dialog.getByRole('group', { name: /Create a task/ });
    expect(await confirm.textContent()).toContain(`“${title}”`);
    await shot(page, 'event-dialog-task-confirm');
    await axe(page, 'event dialog, creating a task');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await linkedTasks()).toEqual([]);

    await dialog.getByRole('button', { name: 'Create task…' }).click();
    await confirm.getByRole('button', { name: 'Create task', exact: true }).click();
    await dialog.getByRole('status').filter({ hasText: 'Created task' }).waitFor();

    const linked = await linkedTasks();
    expect(linked).toHaveLength(1);
    expect(linked[0]?.title).toBe(title);

    await dialog.getByRole('link', { name: /Created|#/ }).click();
    await page.waitForURL((u) => u.pathname === '/tasks');
    const link = page.getByRole('link', { name: evId });
    await link.click();
    await page.waitForURL((u) => u.pathname === '/search');
    expect(new URL(page.url()).searchParams.get('q')).toBe(`ev_id:"${evId}"`);
    await expect.poll(() => status().textContent(), { timeout: 15_000 }).toMatch(/^1 events?$/);
  });

  it('refuses a trigger with a bad query as you type, then creates one with a good query', async () => {
    await page.goto(`${base}/triggers`);
    await page.getByRole('heading', { level: 1, name: 'Triggers' }).waitFor();
    const name = 'Server errors on the web tier';
    await page.getByLabel('Name').fill(name);
    const query = page.getByLabel('Query');
    await query.fill('status:(500 OR');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBeTruthy();
    expect(await query.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('button', { name: 'Create trigger' }).isDisabled()).toBe(true);
    await shot(page, 'triggers-invalid');

    await query.fill(ERRORS_QUERY);
    await alert.waitFor({ state: 'detached' });
    await page.getByLabel('Action').selectOption('task');
    const create = page.getByRole('button', { name: 'Create trigger' });
    await expect.poll(() => create.isEnabled()).toBe(true);
    await create.click();
    const row = page.getByRole('row').filter({ hasText: name });
    await row.waitFor();
    expect(await row.textContent()).toContain('Opens a task');
    const listed = await call('GET', '/api/triggers');
    expect(listed.body.results).toMatchObject([{ name, query: ERRORS_QUERY, create_task: true }]);

    // An event after the trigger exists matches it; its matches list it.
    const ingested = await t.app.inject({
      method: 'POST',
      url: '/api/ingest',
      headers: { authorization: `token ${t.adminToken}`, 'content-type': 'application/x-ndjson' },
      payload: `${JSON.stringify({ ts: new Date().toISOString(), host: 'web-9', status: 503, message: 'upstream timed out' })}\n`,
    });
    expect(ingested.statusCode).toBe(200);
    const matches = row.getByRole('button', { name: 'Matches' });
    let text = '';
    for (let i = 0; i < 20 && !/1 recorded match/.test(text); i++) {
      if ((await matches.getAttribute('aria-expanded')) === 'true') await matches.click();
      await new Promise((r) => setTimeout(r, 300));
      await matches.click();
      const panel = page.locator('.matches-row');
      await expect.poll(() => panel.textContent(), { timeout: 10_000 }).not.toContain('Looking');
      text = (await panel.textContent()) ?? '';
    }
    expect(text).toContain('1 recorded match');
    expect(text).toContain('upstream timed out');
  });

  it('exports the search as CSV with its header row', async () => {
    await search(ERRORS_QUERY);
    await page.getByRole('button', { name: 'Export' }).click();
    await page.getByRole('menuitem', { name: 'CSV' }).waitFor();
    await shot(page, 'search-export');
    await axe(page, 'search with the Export menu');
    const { name, bytes } = await downloaded(() => page.getByRole('menuitem', { name: 'CSV' }).click());
    expect(name).toMatch(/\.csv$/);
    const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
    const header = text.split(/\r?\n/)[0] ?? '';

    // The API's own export of the same search gives the same header.
    const q = await call('POST', '/api/query', {
      type: 'Search',
      params: { query: ERRORS_QUERY, time_range: { preset: 'last_24_hours' }, sort: ['-ts'] },
    });
    const api = await t.app.inject({
      method: 'GET',
      url: `/api/query/${q.body.query_id}/export?ftype=csv`,
      headers: operator,
    });
    expect(header).toBe(api.body.replace(/^\uFEFF/, '').split(/\r?\n/)[0]);
    expect(header).toContain('message');
    expect(text.split(/\r?\n/).filter(Boolean).length).toBeGreaterThan(1);
  });

  it('generates a PDF report of the search and downloads it from Reports', async () => {
    await search(ERRORS_QUERY);
    await page.getByRole('button', { name: 'Export' }).click();
    await page.getByRole('menuitem', { name: 'Report…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Report' });
    await dialog.waitFor();
    await dialog.getByLabel('Format').selectOption('pdf');
    await dialog.getByLabel('Title').fill('5xx report');
    expect(await dialog.getByLabel('Time zone').inputValue()).toBe('Europe/Berlin');
    await dialog.getByRole('button', { name: 'Create report' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Generating' }).waitFor();
    await dialog.getByRole('link', { name: 'Open Reports' }).click();
    await page.waitForURL((u) => u.pathname === '/reports');

    const download = page.getByRole('button', { name: 'Download “5xx report”' });
    await download.waitFor({ timeout: 30_000 });
    const row = page.getByRole('row').filter({ hasText: '5xx report' });
    expect(await row.textContent()).toContain('READY');
    const { name, bytes } = await downloaded(() => download.click());
    expect(name).toMatch(/\.pdf$/);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('%PDF');
  });

  it('creates a report of a dashboard from the Reports page; its notice turns from Generating to ready, with the download', async () => {
    await page.getByRole('radio', { name: 'Dashboard' }).check();
    await page.getByRole('combobox', { name: 'Dashboard' }).selectOption({ label: 'Ops board' });
    await page.getByLabel('Format').selectOption('json');
    await page.getByLabel('Title (optional)').fill('Ops board export');
    await page.getByRole('button', { name: 'Create report' }).click();
    await page.getByRole('row').filter({ hasText: 'Ops board export' }).waitFor();
    const reports = await call('GET', '/api/reports');
    expect(reports.body.results).toContainEqual(
      expect.objectContaining({
        title: 'Ops board export',
        ftype: 'json',
        timezone: 'Europe/Berlin',
        source: { kind: 'dashboard', dashboard_id: dashboardId },
      }),
    );
    await page.getByRole('button', { name: 'Download “Ops board export”' }).waitFor({ timeout: 30_000 });
    // The notice follows the report: ready, with its download, and no longer Generating.
    const notice = page.getByRole('status').filter({ hasText: 'Ops board export' });
    await expect
      .poll(() => notice.textContent(), { timeout: 10_000 })
      .toMatch(/^“Ops board export” is ready\./);
    expect(await page.getByRole('status').filter({ hasText: 'Generating' }).count()).toBe(0);
    await shot(page, 'reports-ready-notice');
    const { name, bytes } = await downloaded(() =>
      notice.getByRole('button', { name: 'Download now' }).click(),
    );
    expect(name).toMatch(/\.json$/);
    expect(bytes.length).toBeGreaterThan(0);
  });

  it('adds the search to a dashboard as a Search table widget', async () => {
    await search(ERRORS_QUERY);
    await page.getByRole('button', { name: 'Add to dashboard' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add to dashboard' });
    await dialog.waitFor();
    await dialog.getByLabel('Dashboard').selectOption({ label: 'Ops board' });
    await dialog.getByLabel('Widget title').fill('Server errors');
    await dialog.getByRole('button', { name: 'Add widget' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Added' }).waitFor();
    await shot(page, 'search-add-to-dashboard');
    expect(await dialog.getByRole('link', { name: 'Ops board' }).getAttribute('href')).toBe(
      `/dashboards/${dashboardId}`,
    );
    const board = await call('GET', `/api/dashboards/${dashboardId}`);
    expect(board.body.widgets).toMatchObject([
      {
        title: 'Server errors',
        query: { type: 'Search', params: { query: ERRORS_QUERY, time_range: { preset: 'last_24_hours' } } },
        visualization: { kind: 'table' },
      },
    ]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  for (const name of ['Tasks', 'Triggers', 'Reports']) {
    it(`${name}: no serious accessibility findings; screenshot`, async () => {
      await nav(name).click();
      await page.waitForURL((u) => u.pathname === `/${name.toLowerCase()}`);
      await page.getByRole('heading', { level: 1, name }).waitFor();
      await expect.poll(() => page.getByText('Loading…').count(), { timeout: 10_000 }).toBe(0);
      if (name === 'Tasks') await page.getByRole('button', { name: 'All' }).click();
      await page.getByRole('table').waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await shot(page, name.toLowerCase());
      await axe(page, name);
    });
  }

  it('logged no errors in the browser console (but the refused query’s 400)', () => {
    expect(consoleErrors.filter((e) => !/status of 400/.test(e))).toEqual([]);
  });
});
