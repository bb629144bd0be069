import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  axe,
  type Browsing,
  closeAll,
  createUser,
  describeBrowser,
  ingest,
  type LiveApp,
  openBrowser,
  shot,
  signIn,
  startApp,
} from './browser.js';

// The Metrics page (/log-metrics) in a real browser against a real server: a metric made
// through the form (its 400 shown at the field and as an alert naming it), listed, its page
// charting the events ingested after it (a line per label value, a legend), the labels to
// keep, the Prometheus names and scrape configuration; a backfill from the page counting
// the events stored before it, DONE; "Create metric" from the search page with the query
// filled in and the offered backfill of the last 24 hours; the form's preview of what a
// metric would count (events per step, label values, a field's sum) and of a bad query;
// deleted. Screenshots: test-artifacts/ui/log-metrics-*.png (the preview at 1440 and 1024
// px, light and dark) and /tmp/log-metrics-*.png.

const USER = { username: 'metrician', password: 'metrician-password-1' };

interface MetricJson {
  id: number;
  name: string;
  query: string;
  kind: string;
  labels: string[];
  backfilled: { from: number; to: number }[];
}

describeBrowser('test/browser/log-metrics.test.ts', 'the Metrics page in Chromium', () => {
  let server: LiveApp;
  let b: Browsing;
  let page: Page;
  let token = '';
  const consoleErrors: string[] = [];

  const metrics = async () => {
    const res = await server.app.inject({
      method: 'GET',
      url: '/api/log-metrics',
      headers: { authorization: `token ${token}` },
    });
    expect(res.statusCode).toBe(200);
    return res.json().results as MetricJson[];
  };
  const event = (host: string, minutesAgo: number, message = 'GET / 200') => ({
    ts: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
    host,
    app: 'web',
    message,
  });
  /** A screenshot in test-artifacts/ui and /tmp, `height` tall (the page scrolls inside its main). */
  const both = async (name: string, height = 800) => {
    await page.setViewportSize({ width: 1280, height });
    await shot(page, name);
    await page.screenshot({ path: `/tmp/${name}.png` });
    await page.setViewportSize({ width: 1280, height: 800 });
  };
  const boxShot = (l: Locator, name: string) => l.screenshot({ path: `/tmp/${name}.png` });

  beforeAll(async () => {
    server = await startApp();
    token = await createUser(server.t, { ...USER, admin: true });
    // Stored before any metric: only a backfill counts these.
    await ingest(server, [event('web-1', 120), event('web-2', 110), event('db-1', 100)]);
    b = await openBrowser({ consoleErrors });
    page = b.page;
    await signIn(page, server.base, USER);
    await page.waitForURL((u) => u.pathname === '/search');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Metrics' }).click();
    await page.waitForURL((u) => u.pathname === '/log-metrics');
    await page.getByRole('heading', { level: 1, name: 'Metrics' }).waitFor();
  }, 120_000);

  afterAll(async () => {
    await closeAll(b, server);
    expect(consoleErrors.filter((e) => !e.includes('400'))).toEqual([]);
  }, 30_000);

  const dialog = (name: string) => page.getByRole('dialog', { name });
  const row = (name: string) => page.getByRole('row').filter({ hasText: name });

  it('refuses an invalid name at its field, then creates a metric through the form and lists it', async () => {
    await page.getByText('No metrics yet.').waitFor();
    await page.getByRole('button', { name: 'New metric' }).click();
    const form = dialog('New metric');
    await form.waitFor();
    // A count takes no field; another kind does, quantiles take their list.
    expect(await form.getByLabel('Field').count()).toBe(0);
    await form.getByLabel('Kind').selectOption('quantiles');
    expect(await form.getByLabel('Quantiles').inputValue()).toBe('0.5, 0.9, 0.99');
    await form.getByLabel('Kind').selectOption('count');
    expect(await form.getByLabel('Field').count()).toBe(0);

    await form.getByLabel('Name').fill('9_web_requests');
    await form.getByLabel('Query').fill('app:web');
    await form.getByLabel('Labels').fill('host');
    await form.getByRole('button', { name: 'Create metric' }).click();
    const alert = form.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('Name: ');
    expect(await alert.textContent()).toContain('not starting with a digit');
    expect(await form.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    expect(await metrics()).toEqual([]);
    await boxShot(form, 'log-metrics-form-error');
    await axe(page, 'Metrics: the form with an error');

    await form.getByLabel('Name').fill('web_requests');
    await form.getByLabel('Description').fill('Requests to the web app, per host');
    await form.getByLabel('Resolution').fill('300');
    await boxShot(form, 'log-metrics-form');
    await form.getByRole('button', { name: 'Create metric' }).click();
    await form.getByRole('status').filter({ hasText: 'Created the metric web_requests' }).waitFor();
    expect(await form.getByLabel('Name').getAttribute('aria-invalid')).toBeNull();
    await form.getByRole('button', { name: 'Close' }).click();
    await form.waitFor({ state: 'detached' });

    const [made] = await metrics();
    expect(made).toMatchObject({ name: 'web_requests', query: 'app:web', kind: 'count', labels: ['host'] });
    const listed = row('web_requests');
    await listed.waitFor();
    const cells = await listed.getByRole('cell').allTextContents();
    expect(cells.slice(0, 7)).toEqual([
      'web_requestsRequests to the web app, per host',
      'count',
      'app:web',
      'host',
      '0',
      '0',
      'you',
    ]);
    await both('log-metrics-list');
    await axe(page, 'Metrics: the list');
  });

  it('charts the events ingested after it on its page, a line per host, and the labels to keep', async () => {
    await ingest(server, [
      event('web-1', 3),
      event('web-1', 2),
      event('web-1', 1),
      event('web-2', 2),
      event('db-1', 1),
      { ...event('web-9', 1), app: 'api' },
    ]);
    await page.getByRole('link', { name: 'web_requests' }).click();
    await page.waitForURL((u) => /^\/log-metrics\/\d+$/.test(u.pathname));
    await page.getByRole('heading', { level: 1, name: 'Metric web_requests' }).waitFor();
    const series = page.getByRole('region', { name: 'Last 24 hours' });
    await series.getByRole('status').filter({ hasText: '3 series, 5 events' }).waitFor();
    const legend = series.locator('.dash-legend li');
    expect((await legend.allTextContents()).sort()).toEqual(['host=db-1', 'host=web-1', 'host=web-2']);
    expect(await series.getByRole('img').getAttribute('aria-label')).toContain('5 events');

    const prometheus = page.getByRole('region', { name: 'Prometheus' });
    expect(await prometheus.locator('code').allTextContents()).toEqual(['web_requests_total']);
    const config = await prometheus.locator('pre').textContent();
    expect(config).toContain('metrics_path: /api/log-metrics/prometheus');
    expect(config).toContain(`targets: ["127.0.0.1:${server.port}"]`);
    await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
    await prometheus.getByRole('button', { name: 'Copy' }).click();
    await prometheus.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(config);
    await both('log-metrics-page', 1300);
    await axe(page, 'Metrics: a metric’s page');

    // No label kept: one series of every event.
    await series.getByRole('group', { name: 'Labels' }).getByRole('checkbox', { name: 'host' }).uncheck();
    await series.getByRole('status').filter({ hasText: '1 series, 5 events' }).waitFor();
    expect(await legend.allTextContents()).toEqual(['all']);
  });

  it('backfills from the page: the job reaches DONE and counts the events stored before', async () => {
    await page.getByRole('button', { name: 'Backfill', exact: true }).click();
    const form = dialog('Backfill web_requests');
    // The last 24 hours by default.
    const from = new Date(await form.getByLabel('From').inputValue()).getTime();
    expect(Math.abs(Date.now() - 86_400_000 - from)).toBeLessThan(5 * 60_000);
    await form.getByRole('button', { name: 'Start backfill' }).click();
    await expect
      .poll(() => form.getByRole('status').textContent(), { timeout: 20_000 })
      .toContain('Backfill DONE: 3 events counted.');
    await boxShot(form, 'log-metrics-backfill');
    await form.getByRole('button', { name: 'Close' }).click();
    const [m] = await metrics();
    expect(m?.backfilled.length).toBe(1);
    // The page reads the metric again: its backfilled range is listed.
    await expect.poll(() => page.locator('.metric-ranges li').count()).toBe(1);
    const series = page.getByRole('region', { name: 'Last 24 hours' });
    await series.getByRole('button', { name: 'Refresh' }).click();
    await series.getByRole('status').filter({ hasText: '1 series, 8 events' }).waitFor();
  });

  it('previews in the form what the metric would count: the events per step and per host, a field’s sum, over the last hour and 24 hours', async () => {
    // Events of another app with a number `ms` (one without it: an event, no number); one
    // 200 minutes old, inside the last 24 hours only.
    const worker = (host: string, minutesAgo: number, ms?: number) => ({
      ...event(host, minutesAgo),
      app: 'worker',
      ...(ms === undefined ? {} : { ms }),
    });
    await ingest(server, [worker('w-1', 5, 10), worker('w-1', 4, 20), worker('w-2', 3, 5), worker('w-2', 2)]);
    await ingest(server, [worker('w-1', 200, 100)]);
    await page.goto(`${server.base}/log-metrics`);
    await row('web_requests').waitFor();
    await page.getByRole('button', { name: 'New metric' }).click();
    const form = dialog('New metric');
    await form.waitFor();
    const preview = form.getByRole('region', { name: 'Preview' });
    expect(await preview.textContent()).toContain('computed now from the stored events');
    expect(await preview.textContent()).toContain('Nothing is counted until the metric is saved.');
    const status = preview.getByRole('status');
    /** The table's rows as text, sorted (equal counts come in any order). */
    const rows = async () =>
      (await preview.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.textContent ?? ''))).sort();

    // The events of app:web as ingested by this file: 5 in the last hour (web-1 three, web-2
    // and db-1 one each), 3 more 100 to 120 minutes ago.
    await form.getByLabel('Name').fill('web_preview');
    await form.getByLabel('Query').fill('app:web');
    await form.getByLabel('Labels').fill('host');
    await preview.getByRole('button', { name: 'Preview' }).click();
    await status.filter({ hasText: '5 events in the last hour, 3 series.' }).waitFor();
    expect(await preview.getByRole('table').getAttribute('class')).toContain('metric-preview-table');
    expect(await preview.locator('thead th').allTextContents()).toEqual(['host', 'Events']);
    expect(await rows()).toEqual(['db-11', 'web-13', 'web-21']);
    const chart = preview.getByRole('img');
    expect(await chart.getAttribute('aria-label')).toMatch(
      /^Matching events per 1 min: bar chart of 5 events in 60 buckets/,
    );
    await axe(page, 'Metrics: the form’s preview');

    await preview.getByLabel('Preview range').selectOption({ label: 'Last 24 hours' });
    await status.filter({ hasText: '8 events in the last 24 hours, 3 series.' }).waitFor();
    expect(await rows()).toEqual(['db-12', 'web-14', 'web-22']);
    expect(await chart.getAttribute('aria-label')).toMatch(
      /^Matching events per 12 min: bar chart of 8 events in 120 buckets/,
    );
    for (const width of [1440, 1024])
      for (const scheme of ['light', 'dark'] as const) {
        await page.setViewportSize({ width, height: 1000 });
        await page.emulateMedia({ colorScheme: scheme });
        await shot(page, `log-metrics-preview-${width}-${scheme}`);
      }
    await page.emulateMedia({ colorScheme: 'dark' });
    await axe(page, 'Metrics: the form’s preview, dark theme');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });

    // A sum: the preview follows the form once shown. w-1: 10 + 20 (+ 100 a day ago), w-2: 5
    // and an event without ms.
    await form.getByLabel('Query').fill('app:worker');
    await form.getByLabel('Kind').selectOption('sum');
    await form.getByLabel('Field').fill('ms');
    await status.filter({ hasText: '5 events in the last 24 hours, 2 series; sum of ms: 135.' }).waitFor();
    expect(await preview.locator('thead th').allTextContents()).toEqual(['host', 'Events', 'sum of ms']);
    expect(await rows()).toEqual(['w-13130', 'w-225']);
    await preview.getByLabel('Preview range').selectOption({ label: 'Last hour' });
    await status.filter({ hasText: '4 events in the last hour, 2 series; sum of ms: 35.' }).waitFor();
    expect(await rows()).toEqual(['w-1230', 'w-225']);
    // Two tuples past a Max series of 1: the preview says the rest would fold.
    await form.getByLabel('Max series').fill('1');
    await status
      .filter({ hasText: '2 series (past Max series, 1, the others would count as __other__)' })
      .waitFor();
    await form.getByLabel('Max series').fill('10000');
    await form.getByLabel('Kind').selectOption('max');
    await status.filter({ hasText: '4 events in the last hour, 2 series; max of ms: 20.' }).waitFor();
    await form.getByLabel('Labels').fill('');
    await status.filter({ hasText: /^4 events in the last hour; max of ms: 20\.$/ }).waitFor();
    expect(await preview.getByRole('table').count()).toBe(0);
    await boxShot(form, 'log-metrics-preview-sum');
  });

  it('a preview of a query with a syntax error: the error at the Query field, no preview, nothing saved', async () => {
    const form = dialog('New metric');
    const preview = form.getByRole('region', { name: 'Preview' });
    await form.getByLabel('Query').fill('app:(worker');
    await preview.getByRole('button', { name: 'Preview' }).click();
    const query = form.getByLabel('Query');
    await expect.poll(() => query.getAttribute('aria-invalid')).toBe('true');
    const described = (await query.getAttribute('aria-describedby')) ?? '';
    const errorId = described.split(' ').find((id) => id.endsWith('-error')) ?? '';
    const message = await form.locator(`[id="${errorId}"]`).textContent();
    expect(message).toContain('Syntax error at position 11');
    expect(await preview.getByRole('alert').textContent()).toBe(`No preview: Query: ${message}`);
    expect(await preview.getByRole('status').textContent()).toBe('');
    expect(await preview.getByRole('img').count()).toBe(0);
    expect(await preview.getByRole('table').count()).toBe(0);
    await both('log-metrics-preview-error', 1000);
    await axe(page, 'Metrics: the form’s preview of a bad query');

    // Mended, the preview follows; the form is cancelled and nothing was saved.
    await query.fill('app:worker');
    await preview.getByRole('status').filter({ hasText: '4 events in the last hour' }).waitFor();
    expect(await query.getAttribute('aria-invalid')).toBeNull();
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });
    expect((await metrics()).map((m) => m.name)).toEqual(['web_requests']);
  });

  it('“Save” waits while a field is wrong, an alert naming it; a field no recent event holds is flagged, not refused', async () => {
    await page.getByRole('button', { name: 'New metric' }).click();
    const form = dialog('New metric');
    await form.getByLabel('Name').fill('worker_ms');
    await form.getByLabel('Query').fill('app:worker');
    const save = form.getByRole('button', { name: 'Create metric' });
    expect(await save.isDisabled()).toBe(false);
    await form.getByLabel('Resolution').fill('7');
    await expect.poll(() => save.isDisabled()).toBe(true);
    const waiting = form.getByRole('alert').filter({ hasText: 'Not ready to save' });
    expect(await waiting.textContent()).toBe(
      'Not ready to save: Resolution: Whole seconds from 10 to 3600 that divide 3600 (10, 15, 20, 30, 60, 300, 900, 3600, ...).',
    );
    await boxShot(form, 'log-metrics-form-waiting');
    await form.getByLabel('Resolution').fill('60');
    await expect.poll(() => save.isDisabled()).toBe(false);
    expect(await waiting.count()).toBe(0);
    // A field none of the last day's matching events holds a number in: flagged, "Save" stays.
    await form.getByLabel('Kind').selectOption('sum');
    await form.getByLabel('Field').fill('no_such_number');
    const flag = form.getByText('No event of the last 24 hours that the query matches holds a number here');
    await flag.waitFor();
    expect(await save.isDisabled()).toBe(false);
    await boxShot(form, 'log-metrics-form-unheld-field');
    // The numeric fields are offered; one of them is not flagged.
    expect(
      await form
        .locator('#metric-numeric-fields option')
        .evaluateAll((os) => os.map((o) => o.getAttribute('value'))),
    ).toContain('ms');
    await form.getByLabel('Field').fill('ms');
    await expect.poll(() => flag.count()).toBe(0);
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });
  });

  it('“Create metric” on the search page opens the form with the query; the 24-hour backfill it offers ends DONE', async () => {
    await page.goto(
      `${server.base}/search?q=${encodeURIComponent('host:web-1 | stats count() by app')}&range=last_24_hours`,
    );
    await page.getByRole('button', { name: 'Create metric' }).click();
    const form = dialog('New metric');
    // A metric counts events: the pipes are left out.
    expect(await form.getByLabel('Query').inputValue()).toBe('host:web-1');
    await page.goto(`${server.base}/search?q=${encodeURIComponent('host:web-1')}&range=last_24_hours`);
    await page
      .getByRole('status')
      .filter({ hasText: /^4 events$/ })
      .waitFor();
    await both('log-metrics-search-toolbar');
    await page.getByRole('button', { name: 'Create metric' }).click();
    expect(await form.getByLabel('Query').inputValue()).toBe('host:web-1');
    await form.getByLabel('Name').fill('web_1_events');
    await form.getByRole('button', { name: 'Create metric' }).click();
    await form.getByRole('status').filter({ hasText: 'Created the metric web_1_events' }).waitFor();
    await form.getByRole('button', { name: 'Backfill the last 24 hours' }).click();
    await expect
      .poll(() => form.getByRole('status').filter({ hasText: 'Backfill' }).textContent(), { timeout: 20_000 })
      .toContain('Backfill DONE: 4 events counted.');
    await boxShot(form, 'log-metrics-created');
    await axe(page, 'Search: a metric created');
    await form.getByRole('button', { name: 'Close' }).click();
    expect((await metrics()).map((m) => m.name).sort()).toEqual(['web_1_events', 'web_requests']);
  });

  it('deletes a metric after a confirmation', async () => {
    await page.goto(`${server.base}/log-metrics`);
    await row('web_1_events').waitFor();
    page.once('dialog', (d) => void d.dismiss());
    await row('web_1_events').getByRole('button', { name: 'Delete “web_1_events”' }).click();
    expect((await metrics()).length).toBe(2);
    page.once('dialog', (d) => void d.accept());
    await row('web_1_events').getByRole('button', { name: 'Delete “web_1_events”' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted “web_1_events”.' }).waitFor();
    await row('web_1_events').waitFor({ state: 'detached' });
    expect((await metrics()).map((m) => m.name)).toEqual(['web_requests']);
  });
});
