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
  queryText,
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// The search page's Patterns tab: templates of the events shown, variables marked, counts,
// a sparkline, "new" badges; Filter in, Exclude and samples that open the event. Setup: ./browser.ts.

describeBrowser('test/browser/patterns.test.ts', 'the Patterns tab in Chromium', () => {
  let server: LiveApp;
  let base: string;
  let b: Browsing;
  let page: Page;
  let token: string;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];
  const count = () =>
    page
      .getByRole('status')
      .filter({ hasText: /events$/ })
      .first();

  beforeAll(async () => {
    server = await startApp();
    base = server.base;
    token = await createUser(server.t, {
      username: 'analyst',
      password: 'analyst-password-1',
      admin: true,
    });
    const now = Math.floor(Date.now() / 1000) - 300;
    const users = ['webmaster', 'test9', 'admin', 'oracle', 'guest'];
    await ingest(server.t, [
      ...users.map((u, i) => ({
        app: 'sshd',
        host: 'bastion',
        message: `Invalid user ${u} from 10.0.0.${i + 1}`,
        timestamp: now - i * 30,
      })),
      ...[22, 2222].map((port, i) => ({
        app: 'sshd',
        host: 'bastion',
        message: `Accepted publickey for deploy from 10.1.0.${i} port ${port} ssh2`,
        timestamp: now - i * 40,
      })),
      { app: 'sshd', host: 'bastion', message: 'Server listening on 0.0.0.0 port 22.', timestamp: now - 200 },
      // One template from three apps: three ids, one row.
      ...['orders', 'orders', 'orders', 'billing', 'billing', 'shipping'].map((app, i) => ({
        app,
        host: 'svc',
        message: `Timeout after ${100 + i} ms calling inventory`,
        timestamp: now - i * 10,
      })),
    ]);
    b = await openBrowser({ token, consoleErrors });
    ({ page } = b);
  }, 120_000);

  afterAll(async () => {
    writeFindings('patterns-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('lists the templates of the events shown, with variables marked, counts and new badges', async () => {
    await page.goto(`${base}/search?q=${encodeURIComponent('app:sshd')}&tab=patterns`);
    const tab = page.getByRole('tab', { name: 'Patterns' });
    expect(await tab.getAttribute('aria-selected')).toBe('true');
    const table = page.getByRole('region', { name: 'Patterns' }).getByRole('table');
    await table.waitFor();
    const rows = table.locator('tr.pattern-row');
    await expect.poll(() => rows.count()).toBe(3);
    const first = rows.first();
    expect(await first.locator('.pattern-template').innerText()).toBe('Invalid user <*> from <*>');
    expect(await first.locator('mark.pattern-var').count()).toBe(2);
    expect(await first.locator('td.num').first().innerText()).toBe('5');
    expect(await first.locator('.badge-new').innerText()).toBe('new');
    await shot(page, 'search-patterns');
    await axe(page, 'search page, Patterns tab', findings);
  });

  it('opens a sample, filters in a pattern (back to the events) and excludes one', async () => {
    const table = page.getByRole('region', { name: 'Patterns' }).getByRole('table');
    const first = table.locator('tr.pattern-row').first();
    await first.getByRole('button', { name: 'Samples' }).click();
    const samples = table.getByRole('list', { name: /^Samples of Invalid user/ });
    await expect.poll(() => samples.getByRole('listitem').count()).toBe(3);
    await samples.getByRole('button').first().click();
    const dialog = page.getByRole('dialog', { name: 'Event' });
    await dialog.waitFor();
    expect(await dialog.innerText()).toContain('Invalid user webmaster');
    await page.keyboard.press('Escape');
    await first.getByRole('button', { name: 'Filter in' }).click();
    await expect.poll(() => queryText(page)).toMatch(/^app:sshd pattern_id:[A-Za-z0-9]+$/);
    expect(await page.getByRole('tab', { name: 'Events' }).getAttribute('aria-selected')).toBe('true');
    await expect.poll(() => count().textContent()).toBe('5 events');
    await page.getByRole('tab', { name: 'Patterns' }).click();
    await page.waitForURL(/tab=patterns/);
    // Keyboard: the arrows move between the tabs.
    await page.getByRole('tab', { name: 'Patterns' }).press('ArrowLeft');
    expect(await page.getByRole('tab', { name: 'Events' }).getAttribute('aria-selected')).toBe('true');
  });

  it('lists one template from several apps as one row naming them; Filter in takes all its ids', async () => {
    await page.goto(`${base}/search?q=${encodeURIComponent('host:svc')}&tab=patterns`);
    const table = page.getByRole('region', { name: 'Patterns' }).getByRole('table');
    await table.waitFor();
    const rows = table.locator('tr.pattern-row');
    await expect.poll(() => rows.count()).toBe(1);
    const row = rows.first();
    expect(await row.locator('.pattern-template').innerText()).toBe('Timeout after <*> calling inventory');
    expect(await row.locator('td.num').first().innerText()).toBe('6');
    expect(await row.locator('.pattern-apps').innerText()).toBe('from orders (3), billing (2), shipping (1)');
    expect(await row.locator('.badge-new').getAttribute('title')).toMatch(/^First seen in this range/);
    for (const width of [1440, 1024]) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, `search-patterns-apps-${width}`);
    }
    await axe(page, 'search page, Patterns tab, one template from three apps', findings);
    await row.getByRole('button', { name: 'Filter in' }).click();
    await expect
      .poll(() => queryText(page))
      .toMatch(/^host:svc pattern_id:\([A-Za-z0-9]+ OR [A-Za-z0-9]+ OR [A-Za-z0-9]+\)$/);
    await expect.poll(() => count().textContent()).toBe('6 events');
    await page.goto(`${base}/search?q=${encodeURIComponent('host:svc')}&tab=patterns`);
    await table.locator('tr.pattern-row').first().getByRole('button', { name: 'Exclude' }).click();
    await expect.poll(() => queryText(page)).toMatch(/^host:svc -pattern_id:\(/);
    await expect.poll(() => count().textContent()).toBe('0 events');
  });

  it('makes a trigger that fires on a new kind of message, from the trigger form', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Triggers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Triggers' }).waitFor();
    await page.getByLabel('Name').fill('New sshd messages');
    await page.getByLabel('Query').fill('app:sshd');
    await page.getByLabel('Fires on').selectOption('new_pattern');
    await page.getByLabel('Warm-up (hours)').fill('2');
    const create = page.getByRole('button', { name: 'Create trigger' });
    await expect.poll(() => create.isEnabled()).toBe(true);
    await create.click();
    const row = page.getByRole('row').filter({ hasText: 'New sshd messages' });
    await row.waitFor();
    expect(await row.textContent()).toContain('A new kind of message (after 2 h of warm-up)');
    await shot(page, 'triggers-new-pattern');
    await axe(page, 'triggers, new-pattern trigger', findings);
  });

  it('adds the Patterns tab to a dashboard as a Patterns widget: templates, counts, new badges', async () => {
    const made = await server.t.as(token, {
      method: 'POST',
      url: '/api/dashboards',
      payload: { title: 'SSH' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const dashboardId = made.json().id as number;
    await page.goto(`${base}/search?q=${encodeURIComponent('app:sshd')}&tab=patterns`);
    await page.getByRole('region', { name: 'Patterns' }).getByRole('table').waitFor();
    await page.getByRole('button', { name: 'Add to dashboard' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add to dashboard' });
    expect(await dialog.innerText()).toContain('most common patterns');
    await dialog.getByLabel('Dashboard').selectOption({ label: 'SSH' });
    await dialog.getByLabel('Widget title').fill('Kinds of sshd message');
    await dialog.getByRole('button', { name: 'Add widget' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Added' }).waitFor();
    const d = (await server.t.as(token, { method: 'GET', url: `/api/dashboards/${dashboardId}` })).json();
    const w = d.widgets.find((x: { title: string }) => x.title === 'Kinds of sshd message');
    expect(w.query).toMatchObject({ type: 'Patterns', params: { query: 'app:sshd', n: 20 } });
    // Compared with as long a period just before its range, whatever the preset.
    expect(w.query.params.compare_to).toEqual(w.query.params.time_range);
    expect(w.visualization.kind).toBe('list');

    await page.goto(`${base}/dashboards/${dashboardId}`);
    const card = page.getByRole('region', { name: 'Kinds of sshd message' });
    const rows = card.locator('tr.pattern-row');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(3);
    expect(await rows.first().locator('.pattern-template').innerText()).toBe('Invalid user <*> from <*>');
    expect(await rows.first().locator('mark.pattern-var').count()).toBe(2);
    expect(await rows.first().locator('td.num').first().innerText()).toBe('5');
    expect(await rows.first().locator('.badge-new').innerText()).toBe('new');
    await shot(page, 'dashboard-patterns-widget');
    await axe(page, 'dashboard with a Patterns widget', findings);
  });

  it('logged no errors in the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
