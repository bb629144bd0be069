import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
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
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// A query with pipes on the search page: its table, the chart picker over its columns,
// highlighting and completion of pipes in the query box, and Add to dashboard keeping
// the pipes (a Table widget drawn as the chosen chart). Setup: ./browser.ts.

describeBrowser('test/browser/pipes.test.ts', 'pipes on the search page in Chromium', () => {
  let server: LiveApp;
  let base: string;
  let token: string;
  let b: Browsing;
  let page: Page;
  let dashboardId: number;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];
  const editor = () => page.locator('.cm-content[aria-label="Query"]');
  const results = () => page.getByRole('region', { name: 'Results table' });
  const search = async (query: string) => {
    await page.goto(`${base}/search?q=${encodeURIComponent(query)}&range=last_hour`);
    await results().waitFor();
  };

  beforeAll(async () => {
    server = await startApp();
    base = server.base;
    token = await createUser(server.t, { username: 'analyst', password: 'analyst-password-1', admin: true });
    const now = Math.floor(Date.now() / 1000) - 60;
    const hosts = ['web-1', 'web-1', 'web-1', 'web-2', 'web-2', 'db-1'];
    await ingest(
      server.t,
      Array.from({ length: 60 }, (_, i) => ({
        app: 'nginx',
        host: hosts[i % hosts.length],
        status: i % 5 === 0 ? 500 : 200,
        bytes: 100 + i,
        message: `GET /page/${i % 4} ${i % 5 === 0 ? 500 : 200}`,
        timestamp: now - i * 30,
      })),
    );
    const d = await server.t.as(token, {
      method: 'POST',
      url: '/api/dashboards',
      payload: { title: 'Traffic' },
    });
    expect(d.statusCode, d.body).toBe(201);
    dashboardId = d.json().id;
    b = await openBrowser({ token, consoleErrors });
    ({ page } = b);
  }, 120_000);

  afterAll(async () => {
    writeFindings('pipes-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('shows the rows of a query with pipes as a table, counted in rows', async () => {
    await search('app:nginx | stats count() as n, sum(bytes) as bytes by host | sort -n');
    const table = results().getByRole('table');
    await table.waitFor();
    expect(await table.getByRole('columnheader').allInnerTexts()).toEqual(['host', 'n', 'bytes']);
    const rows = table.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.first().locator('td').allInnerTexts()).toEqual(['web-1', '30', expect.any(String)]);
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: /rows$/ }).first().textContent())
      .toBe('3 rows');
    // No timeline, no Events/Patterns tabs: the table is the answer.
    expect(await page.getByRole('tab', { name: 'Events' }).count()).toBe(0);
    await shot(page, 'search-pipes-table');
    await axe(page, 'search page, a query with pipes', findings);
  });

  it('charts a number column as bars, a pie or a number, and a timechart as lines', async () => {
    await results().getByText('Bar', { exact: true }).click();
    const bars = results().getByRole('list', { name: 'Results: bar chart' });
    await bars.waitFor();
    expect(await bars.getByRole('listitem').count()).toBe(3);
    // The value charted can be another number column.
    await results().getByLabel('Value').selectOption('bytes');
    await results().getByText('Number', { exact: true }).click();
    await results().locator('.dash-number-value').waitFor();
    expect(await results().locator('.dash-number-label').first().innerText()).toBe('bytes');
    // Line and area need a time column: disabled here.
    expect(await results().getByRole('radio', { name: 'Line' }).isDisabled()).toBe(true);
    await search('app:nginx | timechart span=5m count() by host');
    await results().getByText('Line', { exact: true }).click();
    const chart = results().locator('svg').first();
    await chart.waitFor();
    await shot(page, 'search-pipes-timechart');
    await axe(page, 'search page, a timechart as lines', findings);
  });

  it('highlights and completes pipes in the query box', async () => {
    await page.goto(`${base}/search?q=${encodeURIComponent('app:nginx')}&range=last_hour`);
    await editor().waitFor();
    await editor().click();
    await page.keyboard.press('End');
    await page.keyboard.type(' | st');
    const listbox = page.getByRole('listbox');
    await listbox.waitFor();
    expect(await listbox.getByRole('option').allInnerTexts()).toContain('stats');
    await page.waitForTimeout(150);
    await page.keyboard.press('Enter');
    await page.keyboard.type('cou');
    await listbox.waitFor();
    expect(await listbox.getByRole('option').first().innerText()).toMatch(/^count/);
    await page.keyboard.press('Escape');
    const colour = (text: string) =>
      editor()
        .locator('span')
        .filter({ hasText: new RegExp(`^${text}$`) })
        .first()
        .evaluate((el) => getComputedStyle(el).color);
    expect(await colour('stats')).toBe(await colour('\\|'));
    await shot(page, 'search-pipes-completion');
  });

  it('adds the query to a dashboard with its pipes, drawn as the chosen chart', async () => {
    await search('app:nginx | top 3 host');
    await results().getByText('Pie', { exact: true }).click();
    await page.getByRole('button', { name: 'Add to dashboard' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add to dashboard' });
    await dialog.getByLabel('Dashboard').selectOption({ label: 'Traffic' });
    await dialog.getByLabel('Widget title').fill('Top hosts');
    await dialog.getByRole('button', { name: 'Add widget' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Added' }).waitFor();
    const d = (await server.t.as(token, { method: 'GET', url: `/api/dashboards/${dashboardId}` })).json();
    const w = d.widgets.find((x: { title: string }) => x.title === 'Top hosts');
    expect(w.query).toMatchObject({ type: 'Table', params: { query: 'app:nginx | top 3 host' } });
    expect(w.visualization.kind).toBe('pie');
    await page.goto(`${base}/dashboards/${dashboardId}`);
    const card = page.getByRole('region', { name: 'Top hosts' });
    await card.getByText('web-1').first().waitFor();
    await shot(page, 'dashboard-pipes-widget');
    await axe(page, 'dashboard with a Table widget', findings);
  });

  it('logged no errors in the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
