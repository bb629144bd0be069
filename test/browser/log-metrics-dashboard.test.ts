import type { Page } from 'playwright-core';
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

// "Add to dashboard" on the Metrics page in a real browser against a real server: a new
// dashboard named in the dialog gets a Metric widget (a line chart of the last 24 h, titled
// with the metric's name) and opens, its chart a line per series with their legend; a second
// metric added to that dashboard; the widget edited (title, time range, chart, figure) and
// drawn as a number and a table of the series' totals. Screenshots:
// test-artifacts/ui/log-metrics-dashboard-*.png at 1440 and 1024 px.

const USER = { username: 'metric-board', password: 'metric-board-password-1' };

interface WidgetJson {
  title: string;
  query: { type: string; params: Record<string, unknown> };
  visualization: { kind: string; options: Record<string, unknown> };
}

describeBrowser(
  'test/browser/log-metrics-dashboard.test.ts',
  'Metric widgets from the Metrics page in Chromium',
  () => {
    let server: LiveApp;
    let b: Browsing;
    let page: Page;
    let token = '';
    const consoleErrors: string[] = [];
    const ids: Record<string, number> = {};

    const api = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const res = await server.app.inject({
        method,
        url,
        headers: { authorization: `token ${token}` },
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return res.json();
    };
    const event = (host: string, minutesAgo: number, status: number) => ({
      ts: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
      host,
      app: 'web',
      status,
      message: `GET / ${status}`,
    });
    const dialog = (name: string) => page.getByRole('dialog', { name });
    const region = (name: string) => page.getByRole('region', { name });
    const widths = async (name: string) => {
      for (const width of [1440, 1024]) {
        await page.setViewportSize({ width, height: 900 });
        await shot(page, `${name}-${width}`);
      }
      await page.setViewportSize({ width: 1280, height: 800 });
    };

    beforeAll(async () => {
      server = await startApp();
      token = await createUser(server.t, { ...USER, admin: false });
      for (const [name, query] of [
        ['web_errors', 'status:>=500'],
        ['web_requests', 'app:web'],
      ] as const)
        ids[name] = (await api('POST', '/api/log-metrics', { name, query, labels: ['host'] })).id;
      // Stored after the metrics were made: counted.
      await ingest(server, [
        event('web-1', 50, 500),
        event('web-1', 40, 503),
        event('web-1', 30, 200),
        event('web-2', 20, 502),
        event('web-2', 10, 200),
      ]);
      b = await openBrowser({ consoleErrors });
      page = b.page;
      await signIn(page, server.base, USER);
      await page.waitForURL((u) => u.pathname === '/search');
      await page.goto(`${server.base}/log-metrics`);
      await page.getByRole('heading', { level: 1, name: 'Metrics' }).waitFor();
    }, 120_000);

    afterAll(async () => {
      await closeAll(b, server);
      expect(consoleErrors).toEqual([]);
    }, 30_000);

    it('adds a metric to a new dashboard and opens it: a line per series, with its legend', async () => {
      await page.getByRole('row').filter({ hasText: 'web_errors' }).waitFor();
      await axe(page, 'Metrics: the list');
      await widths('log-metrics-dashboard-list');
      await page.getByRole('button', { name: 'Add to dashboard “web_errors”' }).click();
      const add = dialog('Add “web_errors” to a dashboard');
      await add.waitFor();
      // No dashboard yet: a new one, named here.
      expect(await add.getByLabel('Dashboard', { exact: true }).inputValue()).toBe('new');
      await add.getByLabel('Name of the new dashboard').fill('Web health');
      await axe(page, 'Metrics: Add to dashboard');
      await widths('log-metrics-dashboard-add');
      await add.getByRole('button', { name: 'Add widget' }).click();
      await page.waitForURL((u) => /^\/dashboards\/\d+$/.test(u.pathname));
      const widget = region('web_errors');
      await widget.locator('svg[role="img"]').waitFor();
      expect(await widget.locator('.dash-legend li').allTextContents()).toEqual(['web-1', 'web-2']);
      const summary = await widget.locator('svg[role="img"]').getAttribute('aria-label');
      expect(summary).toMatch(/^web_errors: line chart of 3 events in \d+ buckets/);
      const boards = (await api('GET', '/api/dashboards')).results;
      expect(boards.map((d: { title: string }) => d.title)).toEqual(['Web health']);
      expect(boards[0].widgets.map((w: WidgetJson) => [w.title, w.query, w.visualization])).toEqual([
        [
          'web_errors',
          {
            type: 'Metric',
            params: expect.objectContaining({
              metric_id: ids.web_errors,
              time_range: { preset: 'last_24_hours' },
            }),
          },
          { kind: 'line', options: {} },
        ],
      ]);
      await axe(page, 'dashboard with a Metric widget');
      await widths('log-metrics-dashboard-line');
    });

    it('adds another metric to the dashboard from its page', async () => {
      await page.goto(`${server.base}/log-metrics/${ids.web_requests}`);
      await page.getByRole('button', { name: 'Add to dashboard' }).click();
      const add = dialog('Add “web_requests” to a dashboard');
      await add.waitFor();
      expect(await add.getByLabel('Dashboard', { exact: true }).inputValue()).not.toBe('new');
      await add.getByRole('button', { name: 'Add widget' }).click();
      await page.waitForURL((u) => /^\/dashboards\/\d+$/.test(u.pathname));
      await region('web_errors').locator('svg[role="img"]').waitFor();
      const widget = region('web_requests');
      await widget.locator('svg[role="img"]').waitFor();
      expect(await widget.locator('.dash-legend li').allTextContents()).toEqual(['web-1', 'web-2']);
    });

    it('edits a Metric widget: title, time range, chart and figure; as a number and a table', async () => {
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      await page.getByRole('button', { name: 'Edit web_requests' }).click();
      const edit = dialog('Edit “web_requests”');
      await edit.waitFor();
      expect(await edit.getByLabel('Metric').inputValue()).toBe(String(ids.web_requests));
      expect(await edit.getByLabel('Time range').inputValue()).toBe('last_24_hours');
      await edit.getByLabel('Title').fill('Requests');
      await edit.getByLabel('Time range').selectOption('last_hour');
      await edit.getByLabel('Chart').selectOption('number');
      await edit.getByLabel('Figure').selectOption('events');
      await axe(page, 'Metric widget dialog');
      await widths('log-metrics-dashboard-dialog');
      await edit.getByRole('button', { name: 'Save' }).click();
      await edit.waitFor({ state: 'detached' });
      const requests = region('Requests');
      await expect.poll(() => requests.locator('.dash-number-value').textContent()).toBe('5');
      expect(await requests.locator('.dash-number-label').textContent()).toBe('events, the sum of 2 series');

      await page.getByRole('button', { name: 'Edit web_errors' }).click();
      const errors = dialog('Edit “web_errors”');
      await errors.getByLabel('Chart').selectOption('table');
      await errors.getByRole('button', { name: 'Save' }).click();
      await errors.waitFor({ state: 'detached' });
      const table = region('web_errors').getByRole('table');
      await table.waitFor();
      expect(await table.getByRole('columnheader').allTextContents()).toEqual(['host', 'events']);
      expect(await table.getByRole('row').allTextContents()).toEqual(['hostevents', 'web-12', 'web-21']);
      await page.getByRole('button', { name: 'Done' }).click();
      await axe(page, 'dashboard with Metric number and table');
      await widths('log-metrics-dashboard-number-table');
      const stored = (await api('GET', '/api/widgets?title=Requests')).results[0] as WidgetJson;
      expect(stored.query.params.time_range).toEqual({ preset: 'last_hour' });
      expect(stored.visualization).toEqual({ kind: 'number', options: { y: 'events' } });
    });
  },
);
