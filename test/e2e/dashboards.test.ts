import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoGenerator } from '../../src/cli/demo-generator.js';
import { PACKAGE_ROOT } from '../../src/config/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// Dashboards in a real browser against a real server: one made from a built-in template
// over demo data, its widgets by title, moving one (kept after a reload and in the API),
// a widget following new events live, cloning, axe and screenshots (test-artifacts/ui/).

const CHROMIUM = process.env.LOGSCOPE_TEST_CHROMIUM ?? '/usr/bin/chromium';
const REQUIRE_BROWSER = process.env.LOGSCOPE_TEST_REQUIRE_BROWSER === '1';
const SKIP = !existsSync(CHROMIUM) && !REQUIRE_BROWSER;
const ARTIFACTS = path.join(PACKAGE_ROOT, 'test-artifacts', 'ui');
const EVENTS = 1500;
const USERNAME = 'dash-operator';
const PASSWORD = 'dash-operator-password-1';
const OVERVIEW_WIDGETS = ['Event rate', 'Top hosts', 'Top apps', 'Severity breakdown', 'Latest errors'];

if (SKIP)
  console.warn(
    `test/e2e/dashboards.test.ts: skipped, no Chromium at ${CHROMIUM} (set LOGSCOPE_TEST_CHROMIUM)`,
  );

describe.skipIf(SKIP)('dashboards in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let operatorToken: string;
  let dashboardId: number;
  const consoleErrors: string[] = [];

  const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  const region = (title: string) => page.getByRole('region', { name: title, exact: true });

  async function axe(name: string) {
    const result = await new AxeBuilder({ page }).analyze();
    expect(result.passes.length).toBeGreaterThan(0);
    const serious = result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    expect(serious, `axe on ${name}`).toEqual([]);
  }

  async function ingest(records: object[]) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/ingest',
      headers: { authorization: `token ${t.adminToken}`, 'content-type': 'application/x-ndjson' },
      payload: `${records.map((r) => JSON.stringify(r)).join('\n')}\n`,
    });
    expect(res.json()).toMatchObject({ accepted: records.length, rejected: 0 });
  }

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
      cwd: PACKAGE_ROOT,
      stdio: 'pipe',
      timeout: 110_000,
    });
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    base = `http://127.0.0.1:${port}`;
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/users',
      headers: { authorization: `token ${t.adminToken}` },
      payload: { username: USERNAME, password: PASSWORD, is_admin: true },
    });
    expect(created.statusCode).toBe(201);

    const gen = demoGenerator(11);
    const to = Date.now() - 60_000;
    const from = Date.now() - 23.5 * 3_600_000;
    const lines = [];
    for (let i = 0; i < EVENTS; i++) lines.push(gen.next(Math.round(from + ((to - from) * i) / EVENTS)));
    await ingest(lines);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--no-first-run',
      ],
      timeout: 20_000,
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
  }, 120_000);

  afterAll(async () => {
    await context?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await t?.close();
  }, 30_000);

  it('signs in and opens the dashboards list', async () => {
    await page.goto(`${base}/login?next=${encodeURIComponent('/dashboards')}`);
    await page.getByLabel('Username').fill(USERNAME);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname === '/dashboards');
    await page.getByRole('heading', { name: 'Dashboards', level: 1 }).waitFor();
    operatorToken = (await page.evaluate(() => localStorage.getItem('logscope.token'))) ?? '';
    expect(operatorToken).not.toBe('');
  });

  it('creates a dashboard from a built-in template and shows every widget by title, live', async () => {
    await page.getByLabel('Template', { exact: true }).selectOption('builtin/overview');
    await page.getByRole('button', { name: 'Create from template' }).click();
    await page.waitForURL((u) => /^\/dashboards\/\d+$/.test(u.pathname));
    dashboardId = Number(new URL(page.url()).pathname.split('/').pop());
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    for (const title of OVERVIEW_WIDGETS) await region(title).waitFor();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Live' }).count()).toBe(1);
    // Every widget got its results over the subscription.
    await expect
      .poll(() => page.locator('.dash-widget-body').filter({ hasText: 'Loading…' }).count(), {
        timeout: 15_000,
      })
      .toBe(0);
    await expect.poll(() => region('Top hosts').getByRole('listitem').count()).toBeGreaterThan(0);
    await expect.poll(() => region('Latest errors').locator('tbody tr').count()).toBeGreaterThan(0);
    expect(await region('Event rate').getByRole('img').count()).toBe(1);
    expect(await region('Severity breakdown').getByRole('img').count()).toBe(1);
    expect(await page.getByText('read-only').count()).toBe(0);
    await shot('dashboard-view');
    await region('Latest errors').scrollIntoViewIfNeeded();
    await shot('dashboard-view-lower');
    await page.locator('main').evaluate((m) => m.scrollTo(0, 0));
    await axe('dashboard');
  });

  it('moves a widget with its button; the move persists', async () => {
    const before = await region('Severity breakdown').boundingBox();
    const saved = page.waitForResponse(
      (r) => r.request().method() === 'PATCH' && r.url().includes('/api/widgets/'),
    );
    await page.getByRole('button', { name: 'Move Severity breakdown down' }).click();
    expect((await saved).status()).toBe(200);
    // The focus stays on the button, so it can be pressed again from the keyboard.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Move Severity breakdown down',
    );
    await page.reload();
    await region('Severity breakdown').waitFor();
    const after = await region('Severity breakdown').boundingBox();
    expect(after?.y).toBeGreaterThan((before?.y ?? 0) + 20);
    expect(after?.x).toBe(before?.x);

    const res = await t.as(operatorToken, { method: 'GET', url: `/api/dashboards/${dashboardId}` });
    const widget = (res.json().widgets as Array<{ title: string; position: object }>).find(
      (w) => w.title === 'Severity breakdown',
    );
    expect(widget?.position).toEqual({ x: 0, y: 9, w: 4, h: 5 });
  });

  it('shows new matching events in a widget without reloading', async () => {
    const latest = region('Latest errors');
    await expect.poll(() => latest.locator('tbody tr').count()).toBeGreaterThan(0);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Live' }).count()).toBe(1);
    const marker = `checkout failed: dashboard live marker ${Date.now()}`;
    await ingest([
      {
        time: new Date(Date.now() - 5_000).toISOString(),
        service: 'checkout',
        host: 'checkout-9',
        level: 'error',
        msg: marker,
      },
    ]);
    await latest.getByText(marker).waitFor({ timeout: 5_000 });
  });

  it('lays the widgets out in one column on a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await region('Event rate').waitFor();
    const boxes = await Promise.all(OVERVIEW_WIDGETS.map(async (title) => region(title).boundingBox()));
    for (const b of boxes) expect(b?.width).toBeGreaterThan(300);
    await shot('dashboard-view-phone');
    await region('Severity breakdown').scrollIntoViewIfNeeded();
    await shot('dashboard-view-phone-lower');
    await page.locator('main').evaluate((m) => m.scrollTo(0, 0));
    await axe('dashboard (phone)');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('clones a dashboard from the list', async () => {
    await page.getByRole('link', { name: 'Dashboards', exact: true }).first().click();
    await page.waitForURL((u) => u.pathname === '/dashboards');
    await page.getByRole('link', { name: 'Overview', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Clone Overview' }).click();
    await page.getByRole('link', { name: 'Copy of Overview', exact: true }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Created “Copy of Overview”.' }).waitFor();
    await shot('dashboard-list');
    await axe('dashboards list');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot('dashboard-list-phone');
    await page.setViewportSize({ width: 1280, height: 800 });

    // The clone opens with the same widgets.
    await page.getByRole('link', { name: 'Copy of Overview', exact: true }).click();
    await page.getByRole('heading', { name: 'Copy of Overview', level: 1 }).waitFor();
    for (const title of OVERVIEW_WIDGETS) await region(title).waitFor();
    expect(consoleErrors).toEqual([]);
  });
});
