import type { BrowserContext, Locator, Page } from 'playwright-core';
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
  queryText,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// A dashboard maintained in the browser, against a real server: the built-in Top hosts
// showing its ten rows without scrolling; a time range for every widget, kept in the
// address; edit mode (a widget's title, query and chart in a dialog, duplicate, remove
// asked once, rename, delete asked once), each write read back from the API; a reader
// who may not change the dashboard offered none of it; a value or a time bucket of a
// chart opening Search on its events. Setup: ./browser.ts.

const OWNER = { username: 'dash-owner', password: 'dash-owner-password-1', admin: false };
const READER = { username: 'dash-reader', password: 'dash-reader-password-1' };
const HOUR = 3_600_000;
/** Events of two hosts of our own: one within the last hour, one 3 hours ago. */
const RECENT = 'range-recent';
const OLD = 'range-old';

interface ApiWidget {
  id: number;
  title: string;
  query: { type: string; params: Record<string, unknown> };
  visualization: { kind: string };
}

describeBrowser('test/browser/dashboards-edit.test.ts', 'dashboards maintained in Chromium', () => {
  let server: LiveApp;
  let base: string;
  let b: Browsing;
  let page: Page;
  let ownerToken: string;
  let readerToken: string;
  let dashboardId: number;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  const region = (title: string, on: Page = page) => on.getByRole('region', { name: title, exact: true });
  const barLabels = (title: string) => region(title).locator('.dash-bar-label');
  const dashboard = async () => {
    const res = await server.t.as(ownerToken, { method: 'GET', url: `/api/dashboards/${dashboardId}` });
    return res.json() as { title: string; description: string; widgets: ApiWidget[] };
  };
  const events = (host: string, count: number, at: number) =>
    Array.from({ length: count }, (_, i) => ({
      time: new Date(at - i * 1000).toISOString(),
      host,
      app: 'range-test',
      msg: `event ${i} of ${host}`,
    }));

  beforeAll(async () => {
    server = await startApp();
    base = server.base;
    ownerToken = await createUser(server.t, OWNER);
    const made = await server.t.as(server.t.adminToken, {
      method: 'POST',
      url: '/api/users',
      payload: { ...READER, is_admin: false, permissions: ['manage_dashboards'] },
    });
    expect(made.statusCode).toBe(201);
    const login = await server.t.as(null, { method: 'POST', url: '/api/auth/login', payload: READER });
    readerToken = login.json().secret_key as string;
    await ingest(server.t, demoEvents(5, 1500, Date.now() - 23.5 * HOUR, Date.now() - 60_000));
    await ingest(server.t, [
      ...events(RECENT, 30, Date.now() - 20 * 60_000),
      ...events(OLD, 30, Date.now() - 3 * HOUR),
    ]);
    const created = await server.t.as(ownerToken, {
      method: 'POST',
      url: '/api/dashboards',
      payload: { template: 'builtin/overview' },
    });
    dashboardId = created.json().id as number;
    b = await openBrowser({
      context: { viewport: { width: 1440, height: 900 } },
      token: ownerToken,
      consoleErrors,
    });
    page = b.page;
  }, 120_000);

  afterAll(async () => {
    writeFindings('dashboards-edit-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('shows all ten rows of Top hosts without scrolling, at 1440 and 1024 px', async () => {
    for (const width of [1440, 1024]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}/dashboards/${dashboardId}`);
      await expect.poll(() => barLabels('Top hosts').count(), { timeout: 15_000 }).toBe(10);
      const body = region('Top hosts').locator('.dash-widget-body');
      const fits = await body.evaluate((el) => ({ scroll: el.scrollHeight, client: el.clientHeight }));
      expect(fits.scroll, `${width} px: the body does not scroll`).toBeLessThanOrEqual(fits.client);
      const box = await body.boundingBox();
      const tenth = await barLabels('Top hosts').nth(9).boundingBox();
      if (!box || !tenth) throw new Error('no Top hosts body or 10th row');
      expect(tenth.y).toBeGreaterThanOrEqual(box.y);
      expect(tenth.y + tenth.height, `${width} px: the 10th row inside the body`).toBeLessThanOrEqual(
        box.y + box.height,
      );
      await expect.poll(() => barLabels('Top hosts').nth(9).isVisible()).toBe(true);
    }
  });

  it('applies a time range to every widget, kept in the address and by a reload', async () => {
    const picker = page.getByRole('combobox', { name: 'Time range' });
    const hosts = () => barLabels('Top hosts').allTextContents();
    await expect.poll(hosts).toEqual(expect.arrayContaining([RECENT, OLD]));
    expect(await picker.inputValue()).toBe('');

    await picker.selectOption('last_hour');
    await expect.poll(() => new URL(page.url()).searchParams.get('range')).toBe('last_hour');
    await expect.poll(hosts).toContain(RECENT);
    expect(await hosts()).not.toContain(OLD);
    // Every widget follows: the event rate's chart covers an hour, not a day.
    await expect
      .poll(() => region('Event rate').getByRole('img').getAttribute('aria-label'))
      .toMatch(/in \d+ buckets from/);
    const rate = await region('Event rate').getByRole('img').getAttribute('aria-label');
    const [, first, last] =
      /from (\d{4}-\d\d-\d\d \d\d:\d\d) to (\d{4}-\d\d-\d\d \d\d:\d\d)/.exec(rate ?? '') ?? [];
    const at = (time: string | undefined) => Date.parse(`${time?.replace(' ', 'T')}:00Z`);
    expect(at(last) - at(first)).toBeLessThanOrEqual(HOUR);

    await page.reload();
    expect(await picker.inputValue()).toBe('last_hour');
    await expect.poll(hosts).toContain(RECENT);
    expect(await hosts()).not.toContain(OLD);

    // A custom range from the keyboard: 4 to 2 hours ago holds the old events only.
    await picker.focus();
    await picker.selectOption('custom');
    const iso = (ms: number) => {
      const d = new Date(ms);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:00`;
    };
    await page.getByLabel('From', { exact: true }).fill(iso(Date.now() - 4 * HOUR));
    await page.getByLabel('To', { exact: true }).fill(iso(Date.now() - 2 * HOUR));
    await page.getByLabel('To', { exact: true }).press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('from')).not.toBeNull();
    await expect.poll(hosts).toContain(OLD);
    expect(await hosts()).not.toContain(RECENT);
    await shot(page, 'dashboard-custom-range');
    await axe(page, 'dashboard with a custom range', findings);

    await picker.selectOption('');
    await expect.poll(() => new URL(page.url()).search).toBe('');
    await expect.poll(hosts).toEqual(expect.arrayContaining([RECENT, OLD]));
  }, 90_000);

  it('opens Search on a bar, a pie slice, a table value and a time bucket', async () => {
    await page.goto(`${base}/dashboards/${dashboardId}?range=last_24_hours`);
    /** On Search, `query` in the query box (null: none), and events found. */
    const onSearch = async (query: string | null) => {
      await page.waitForURL((u) => u.pathname === '/search');
      if (query === null) expect(new URL(page.url()).searchParams.get('q')).toBeNull();
      else await expect.poll(() => queryText(page)).toBe(query);
      await expect
        .poll(
          () =>
            page
              .getByRole('status')
              .filter({ hasText: /^[\d,]+ events$/ })
              .textContent(),
          {
            timeout: 10_000,
          },
        )
        .not.toBe('0 events');
      return new URL(page.url()).searchParams;
    };

    // A bar, by the mouse: its host, in the dashboard's range.
    await expect.poll(() => barLabels('Top hosts').count(), { timeout: 15_000 }).toBe(10);
    const host = (await barLabels('Top hosts').first().textContent()) ?? '';
    await region('Top hosts').locator('svg.dash-bar').first().click();
    const params = await onSearch(`host:"${host}"`);
    expect(params.get('range')).toBe('last_24_hours');
    await expect
      .poll(() => page.getByRole('region', { name: 'Results' }).getByText(host).count())
      .toBeGreaterThan(0);

    // A pie slice, by the mouse: the severity its legend names first.
    await page.goBack();
    const pie = region('Severity breakdown');
    await expect
      .poll(() => pie.locator('svg[role="img"] path').count(), { timeout: 15_000 })
      .toBeGreaterThan(0);
    const severity = (await pie.locator('.dash-legend a').first().textContent()) ?? '';
    // Into the first slice: from 12 o'clock clockwise by its share, 30 % out from the centre.
    const share = Number.parseFloat(
      (await pie.locator('.dash-legend li .muted').first().textContent()) ?? '',
    );
    await pie.scrollIntoViewIfNeeded();
    const disc = await pie.locator('svg[role="img"]').boundingBox();
    if (!disc) throw new Error('no pie');
    const angle = -Math.PI / 2 + (share / 100) * Math.PI;
    await page.mouse.click(
      disc.x + disc.width * (0.5 + 0.3 * Math.cos(angle)),
      disc.y + disc.height * (0.5 + 0.3 * Math.sin(angle)),
    );
    await onSearch(`severity:"${severity}"`);

    // A table's value, by the keyboard: Latest errors' first host, within their query.
    await page.goBack();
    const cell = region('Latest errors').locator('tbody tr').first().locator('a.dash-drill').nth(0);
    await expect.poll(() => cell.count(), { timeout: 15_000 }).toBe(1);
    const errorHost = (await cell.textContent()) ?? '';
    await cell.focus();
    await page.keyboard.press('Enter');
    await onSearch(`severity:(emergency OR alert OR critical OR error) host:"${errorHost}"`);

    // A time bucket, by the keyboard: one tab stop, on the latest bucket; arrow keys choose.
    await page.goBack();
    const buckets = region('Event rate').getByRole('group', { name: /search a time/ });
    const link = buckets.getByRole('link');
    await expect.poll(() => link.count(), { timeout: 15_000 }).toBe(1);
    const latest = (await link.getAttribute('aria-label')) ?? '';
    await link.focus();
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowRight');
    const label = (await link.getAttribute('aria-label')) ?? '';
    expect(label).not.toBe(latest);
    const [, day, start, end] =
      /^(\d{4}-\d\d-\d\d) (\d\d:\d\d)–((?:\d{4}-\d\d-\d\d )?\d\d:\d\d): [\d,]+ events$/.exec(label) ?? [];
    expect(day).toBeDefined();
    await page.keyboard.press('Enter');
    const span = await onSearch(null);
    // The search covers that bucket: its start and end, in the browser's zone.
    const local = (time = '') =>
      new Date(`${time.length > 5 ? time.replace(' ', 'T') : `${day}T${time}`}:00`).getTime() / 1000;
    expect(Number(span.get('from'))).toBe(local(start));
    expect(Number(span.get('to'))).toBe(local(end));
    expect(consoleErrors).toEqual([]);
  }, 90_000);

  /** The edit-mode controls on the page: none for a reader, none outside edit mode. */
  const writeControls = (on: Page) =>
    on.getByRole('button', { name: /^(Edit |Duplicate |Remove |Move |Resize |Rename|Delete dashboard)/ });

  it('edits, duplicates and removes widgets in edit mode, each change read back from the API', async () => {
    await page.goto(`${base}/dashboards/${dashboardId}`);
    await region('Top apps').waitFor();
    expect(await writeControls(page).count()).toBe(0);
    const toggle = page.getByRole('button', { name: 'Edit', exact: true });
    await toggle.focus();
    await page.keyboard.press('Enter');
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    await page.getByRole('group', { name: 'Edit dashboard' }).waitFor();
    expect(await page.getByRole('button', { name: /^Remove / }).count()).toBe(5);
    await axe(page, 'dashboard in edit mode', findings);

    // Edit a widget's title, query and chart in its dialog.
    await page.getByRole('button', { name: 'Edit Top apps' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit “Top apps”' });
    await dialog.waitFor();
    await axe(page, 'widget dialog', findings);
    await dialog.getByLabel('Title').fill('Nginx apps');
    await dialog.getByLabel('Query').fill('app:nginx');
    await dialog.getByLabel('Chart').selectOption('pie');
    await shot(page, 'dashboard-widget-dialog');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await region('Nginx apps').waitFor();
    // The focus is back on the widget's Edit button.
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')))
      .toBe('Edit Nginx apps');
    await expect
      .poll(() => region('Nginx apps').locator('.dash-legend a').allTextContents())
      .toEqual(['nginx']);
    const edited = (await dashboard()).widgets.find((w) => w.title === 'Nginx apps');
    expect(edited?.query.params.query).toBe('app:nginx');
    expect(edited?.visualization.kind).toBe('pie');

    // Duplicate: the copy comes at the bottom, with its Edit button focused.
    await page.getByRole('button', { name: 'Duplicate Event rate' }).click();
    await region('Event rate (copy)').waitFor();
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')))
      .toBe('Edit Event rate (copy)');
    await expect
      .poll(async () => (await dashboard()).widgets.map((w) => w.title))
      .toContain('Event rate (copy)');
    const copy = (await dashboard()).widgets.find((w) => w.title === 'Event rate (copy)');
    expect(copy?.query).toEqual((await dashboard()).widgets.find((w) => w.title === 'Event rate')?.query);
    await expect
      .poll(() => region('Event rate (copy)').getByRole('img').count(), { timeout: 15_000 })
      .toBe(1);

    // Remove asks once: Cancel (focused) keeps it; the keyboard confirms.
    await page.getByRole('button', { name: 'Remove Event rate (copy)' }).focus();
    await page.keyboard.press('Enter');
    const ask = page.getByRole('dialog', { name: 'Remove “Event rate (copy)”?' });
    await ask.waitFor();
    await axe(page, 'remove dialog', findings);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await page.keyboard.press('Enter');
    await ask.waitFor({ state: 'detached' });
    expect((await dashboard()).widgets).toHaveLength(6);
    await page.getByRole('button', { name: 'Remove Event rate (copy)' }).click();
    await ask.waitFor();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await ask.waitFor({ state: 'detached' });
    await region('Event rate (copy)').waitFor({ state: 'detached' });
    expect((await dashboard()).widgets.map((w) => w.title)).not.toContain('Event rate (copy)');
    expect((await dashboard()).widgets).toHaveLength(5);
  }, 90_000);

  it('renames the dashboard in edit mode; screenshots, light and dark', async () => {
    await page.getByRole('button', { name: 'Rename…' }).click();
    const rename = page.getByRole('dialog', { name: 'Rename dashboard' });
    await rename.getByLabel('Title').fill('Overview, maintained');
    await rename.getByLabel('Description').fill('Kept by the web team.');
    await rename.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Overview, maintained', level: 1 }).waitFor();
    expect(await dashboard()).toMatchObject({
      title: 'Overview, maintained',
      description: 'Kept by the web team.',
    });

    // Screenshots in edit mode: 1440 and 1024 px, light and dark.
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1440, 1024]) {
        await page.setViewportSize({ width, height: 900 });
        await page.locator('main').evaluate((m) => m.scrollTo(0, 0));
        await shot(page, `dashboard-edit-${width}-${scheme}`);
      }
    }
    await axe(page, 'dashboard in edit mode (dark)', findings);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1440, height: 900 });

    // Done: no write controls in the way.
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await writeControls(page).count()).toBe(0);
  }, 90_000);

  it('offers a reader who may not change the dashboard no edit controls', async () => {
    let context: BrowserContext | undefined;
    try {
      context = await b.browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' });
      await context.addInitScript(
        `window.localStorage.setItem('logscope.token', ${JSON.stringify(readerToken)})`,
      );
      const reader = await context.newPage();
      await reader.goto(`${base}/dashboards/${dashboardId}`);
      await reader.getByRole('heading', { name: 'Overview, maintained', level: 1 }).waitFor();
      const hosts: Locator = region('Top hosts', reader).locator('.dash-bar-label');
      await expect.poll(() => hosts.count(), { timeout: 15_000 }).toBe(10);
      expect(await reader.getByRole('button', { name: 'Edit', exact: true }).count()).toBe(0);
      expect(await writeControls(reader).count()).toBe(0);
      expect(await reader.locator('.dash-movable, .dash-resize, .dash-grip').count()).toBe(0);
      await axe(reader, 'dashboard for a reader', findings);
      // The API refuses the reader anyway.
      const refused = await server.t.as(readerToken, {
        method: 'PATCH',
        url: `/api/dashboards/${dashboardId}`,
        payload: { title: 'Taken over' },
      });
      expect(refused.statusCode).toBe(403);
    } finally {
      await context?.close();
    }
  }, 90_000);

  it('deletes the dashboard after asking once, back on the list', async () => {
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Delete dashboard…' }).click();
    const ask = page.getByRole('dialog', { name: 'Delete “Overview, maintained”?' });
    await ask.waitFor();
    await axe(page, 'delete dialog', findings);
    await ask.getByRole('button', { name: 'Delete dashboard' }).click();
    await page.waitForURL((u) => u.pathname === '/dashboards');
    await page.getByRole('heading', { name: 'Dashboards', level: 1 }).waitFor();
    await page.getByText('No dashboards yet.').waitFor();
    const gone = await server.t.as(ownerToken, { method: 'GET', url: `/api/dashboards/${dashboardId}` });
    expect(gone.statusCode).toBe(404);
    expect(consoleErrors).toEqual([]);
  });
});
