import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

// Alerting in a real browser against a real server and a real webhook receiver: a channel
// made and tested on the Alerting page, a threshold trigger made with the trigger form
// (condition, group, channel), the notification arriving, and the delivery history; axe
// and screenshots (test-artifacts/ui/).

const USERNAME = 'alerter';
const PASSWORD = 'alerter-password-1';

describeBrowser('test/browser/alerting.test.ts', 'alerting in Chromium', () => {
  let server: LiveApp;
  let b: Browsing;
  let page: Page;
  const consoleErrors: string[] = [];
  const received: Array<Record<string, unknown>> = [];
  const hook = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      received.push(JSON.parse(body) as Record<string, unknown>);
      res.end('ok');
    });
  });
  let hookUrl = '';

  beforeAll(async () => {
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    server = await startApp();
    await createUser(server.t, { username: USERNAME, password: PASSWORD, admin: false });
    b = await openBrowser({ consoleErrors });
    page = b.page;
    await signIn(page, server.base, { username: USERNAME, password: PASSWORD });
    await page.waitForURL((u) => u.pathname === '/search');
  }, 120_000);

  afterAll(async () => {
    await closeAll(b, server);
    hook.close();
  }, 30_000);

  it('makes a webhook channel and tests it', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerting' }).click();
    await page.getByRole('heading', { level: 1, name: 'Alerting' }).waitFor();
    await page.getByLabel('Name').fill('Ops webhook');
    await page.getByLabel('URL').fill(hookUrl);
    await page.getByLabel('Secret').fill('shared-secret');
    await page.getByRole('button', { name: 'Create channel' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Ops webhook' });
    await row.waitFor();
    expect(await row.textContent()).toContain(hookUrl);
    await row.getByRole('button', { name: 'Send a test to “Ops webhook”' }).click();
    await expect.poll(() => row.getByRole('status').textContent()).toMatch(/^Sent in \d+ ms\.$/);
    expect(received).toMatchObject([{ kind: 'test' }]);
  });

  it('makes a threshold trigger that notifies the channel, and the delivery shows', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Triggers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Triggers' }).waitFor();
    await page.getByLabel('Name').fill('Login failures burst');
    await page.getByLabel('Query').fill('alertword');
    await page.getByLabel('Fires on').selectOption('gt');
    await page.getByLabel('N (events)').fill('2');
    await page.getByLabel('Window (minutes)').fill('1');
    await page.getByLabel('Per (fields)').fill('host');
    await page.getByLabel('Ops webhook').check();
    const create = page.getByRole('button', { name: 'Create trigger' });
    await expect.poll(() => create.isEnabled()).toBe(true);
    await create.click();
    const row = page.getByRole('row').filter({ hasText: 'Login failures burst' });
    await row.waitFor();
    expect(await row.textContent()).toContain('More than 2 in 1 min per host');
    expect(await row.textContent()).toContain('Notifies 1 channel');
    await shot(page, 'triggers-threshold');

    await ingest(
      server,
      [1, 2, 3].map((i) => ({ host: 'web-7', message: `alertword ${i}` })),
    );
    await expect.poll(() => received.length, { timeout: 10_000 }).toBe(2);
    expect(received[1]).toMatchObject({ kind: 'fire', count: 3, group: { host: 'web-7' } });

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerting' }).click();
    const history = page.getByRole('region', { name: 'Delivery history' });
    const delivery = history.getByRole('row').filter({ hasText: 'Login failures burst' });
    await delivery.waitFor({ timeout: 10_000 });
    expect(await delivery.textContent()).toContain('sent');
    expect(await delivery.textContent()).toContain('Ops webhook');
  });

  it('Alerting: no serious accessibility findings; screenshot', async () => {
    await page.getByRole('heading', { level: 1, name: 'Alerting' }).waitFor();
    await expect.poll(() => page.getByText('Loading…').count(), { timeout: 10_000 }).toBe(0);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await shot(page, 'alerting');
    await axe(page, 'Alerting');
  });

  it('edits a channel (its secret kept) and a trigger’s condition in place', async () => {
    const channelRow = page.getByRole('row').filter({ hasText: 'Ops webhook' });
    await channelRow.getByRole('button', { name: 'Edit “Ops webhook”' }).click();
    await page.getByRole('heading', { name: 'Edit channel “Ops webhook”' }).waitFor();
    expect(await page.getByLabel('URL').inputValue()).toBe(hookUrl);
    await page.getByLabel('Name').fill('Ops hook');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved channel “Ops hook”.' }).waitFor();
    await page.getByRole('heading', { name: 'New channel' }).waitFor();
    const channels = await server.app.inject({
      method: 'GET',
      url: '/api/channels?show_all=true',
      headers: { authorization: `token ${server.t.adminToken}` },
    });
    expect(channels.json().results).toMatchObject([
      { name: 'Ops hook', config: { url: hookUrl, secret: '********' } },
    ]);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Triggers' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Login failures burst' });
    await row.getByRole('button', { name: 'Edit “Login failures burst”' }).click();
    await page.getByRole('heading', { name: 'Edit trigger “Login failures burst”' }).waitFor();
    expect(await page.getByLabel('Fires on').inputValue()).toBe('gt');
    expect(await page.getByLabel('Per (fields)').inputValue()).toBe('host');
    expect(await page.getByLabel('Ops hook').isChecked()).toBe(true);
    await page.getByLabel('Fires on').selectOption('gte');
    await page.getByLabel('N (events)').fill('5');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'New trigger' }).waitFor();
    await expect.poll(() => row.textContent()).toContain('At least 5 in 1 min per host');
    expect(await row.textContent()).toContain('Notifies 1 channel');
    await shot(page, 'triggers-edited');
    await axe(page, 'Triggers (edited)');
  });

  it('logged no errors in the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
