import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  axe,
  type Browsing,
  closeAll,
  createUser,
  demoEvents,
  describeBrowser,
  ingest as ingestInto,
  type LiveApp,
  openBrowser,
  shot,
  signIn,
  startApp,
  storedToken,
} from './browser.js';

// Dashboards in a real browser against a real server: one made from a built-in template
// over demo data, its widgets by title, moving one in edit mode (kept after a reload and
// in the API), a widget following new events live, cloning, dragging and resizing one
// with the pointer (kept after a reload, what it met pushed down), saving as a template,
// axe and screenshots (test-artifacts/ui/). Setup: ./browser.ts. Edit mode's other
// tools, the time range and links to Search: ./dashboards-edit.test.ts.

const EVENTS = 1500;
const USERNAME = 'dash-operator';
const PASSWORD = 'dash-operator-password-1';
const OVERVIEW_WIDGETS = ['Event rate', 'Top hosts', 'Top apps', 'Severity breakdown', 'Latest errors'];

describeBrowser('test/browser/dashboards.test.ts', 'dashboards in Chromium', () => {
  let server: LiveApp;
  let t: LiveApp['t'];
  let base: string;
  let b: Browsing;
  let page: Page;
  let operatorToken: string;
  let dashboardId: number;
  const consoleErrors: string[] = [];

  const region = (title: string) => page.getByRole('region', { name: title, exact: true });

  const ingest = (records: object[]) => ingestInto(t, records);

  /** Edit mode on: the widgets' move buttons and resize handles are there only then. */
  const editMode = async () => {
    const toggle = page.getByRole('button', { name: 'Edit', exact: true });
    if ((await toggle.getAttribute('aria-pressed')) !== 'true') await toggle.click();
    await page.getByRole('group', { name: 'Edit dashboard' }).waitFor();
  };

  beforeAll(async () => {
    server = await startApp();
    ({ t, base } = server);
    await createUser(t, { username: USERNAME, password: PASSWORD, admin: true });
    await ingest(demoEvents(11, EVENTS, Date.now() - 23.5 * 3_600_000, Date.now() - 60_000));
    b = await openBrowser({ consoleErrors });
    page = b.page;
  }, 120_000);

  afterAll(async () => {
    await closeAll(b, server);
  }, 30_000);

  it('signs in and opens the dashboards list', async () => {
    await signIn(page, base, { username: USERNAME, password: PASSWORD }, '/dashboards');
    await page.waitForURL((u) => u.pathname === '/dashboards');
    await page.getByRole('heading', { name: 'Dashboards', level: 1 }).waitFor();
    operatorToken = (await storedToken(page)) ?? '';
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
    // A chart is drawn from the widget's results, which may first come back without the
    // seeded events (the widget says "No data." until the next): polled, as the rest is.
    await expect.poll(() => region('Event rate').getByRole('img').count()).toBe(1);
    await expect.poll(() => region('Severity breakdown').getByRole('img').count()).toBe(1);
    expect(await page.getByText('read-only').count()).toBe(0);
    await shot(page, 'dashboard-view');
    await region('Latest errors').scrollIntoViewIfNeeded();
    await shot(page, 'dashboard-view-lower');
    await page.locator('main').evaluate((m) => m.scrollTo(0, 0));
    await axe(page, 'dashboard');
  });

  it('moves a widget with its button in edit mode; the move persists', async () => {
    const before = await region('Severity breakdown').boundingBox();
    expect(await page.getByRole('button', { name: 'Move Severity breakdown down' }).count()).toBe(0);
    await editMode();
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
    expect(widget?.position).toEqual({ x: 0, y: 10, w: 4, h: 5 });
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
    await shot(page, 'dashboard-view-phone');
    await region('Severity breakdown').scrollIntoViewIfNeeded();
    await shot(page, 'dashboard-view-phone-lower');
    await page.locator('main').evaluate((m) => m.scrollTo(0, 0));
    await axe(page, 'dashboard (phone)');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('clones a dashboard from the list', async () => {
    await page.getByRole('link', { name: 'Dashboards', exact: true }).first().click();
    await page.waitForURL((u) => u.pathname === '/dashboards');
    await page.getByRole('link', { name: 'Overview', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Clone Overview' }).click();
    await page.getByRole('link', { name: 'Copy of Overview', exact: true }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Created “Copy of Overview”.' }).waitFor();
    await shot(page, 'dashboard-list');
    await axe(page, 'dashboards list');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, 'dashboard-list-phone');
    await page.setViewportSize({ width: 1280, height: 800 });

    // The clone opens with the same widgets.
    await page.getByRole('link', { name: 'Copy of Overview', exact: true }).click();
    await page.getByRole('heading', { name: 'Copy of Overview', level: 1 }).waitFor();
    for (const title of OVERVIEW_WIDGETS) await region(title).waitFor();
    expect(consoleErrors).toEqual([]);
  });

  /** The saved positions of the test dashboard's widgets, by title. */
  async function positions() {
    const res = await t.as(operatorToken, { method: 'GET', url: `/api/dashboards/${dashboardId}` });
    return Object.fromEntries(
      (res.json().widgets as Array<{ title: string; position: object }>).map((w) => [w.title, w.position]),
    );
  }

  /** One grid column (cell and gap) and one row, in CSS pixels. */
  async function gridSteps() {
    return page.locator('.dash-grid').evaluate((g) => {
      const css = getComputedStyle(g);
      const gap = Number.parseFloat(css.columnGap);
      return {
        col: (g.getBoundingClientRect().width + gap) / 12,
        row: Number.parseFloat(css.gridAutoRows) + Number.parseFloat(css.rowGap),
      };
    });
  }

  it('drags a widget to another column; it stays there and what it met moved down', async () => {
    await page.goto(`${base}/dashboards/${dashboardId}`);
    await region('Top hosts').waitFor();
    await editMode();
    expect(await positions()).toMatchObject({
      'Top hosts': { x: 0, y: 4, w: 6, h: 5 },
      'Top apps': { x: 6, y: 4, w: 6, h: 5 },
      'Latest errors': { x: 4, y: 9, w: 8, h: 5 },
    });
    const target = await region('Top apps').boundingBox();
    const step = await gridSteps();
    const head = await region('Top hosts').locator('.dash-widget-head h2').boundingBox();
    const from = { x: (head?.x ?? 0) + 20, y: (head?.y ?? 0) + (head?.height ?? 0) / 2 };
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(from.x + step.col * 3, from.y + 4, { steps: 4 });
    await page.mouse.move(from.x + step.col * 6, from.y + 4, { steps: 4 });
    // Mid-drag: the widget is in its new column already, Top apps below it.
    await expect.poll(async () => (await region('Top hosts').boundingBox())?.x).toBe(target?.x);
    await shot(page, 'dashboard-dragging');
    await page.mouse.up();
    await expect.poll(positions).toMatchObject({
      'Top hosts': { x: 6, y: 4, w: 6, h: 5 },
      'Top apps': { x: 6, y: 9, w: 6, h: 5 },
      'Latest errors': { x: 4, y: 14, w: 8, h: 5 },
      'Severity breakdown': { x: 0, y: 10, w: 4, h: 5 },
      'Event rate': { x: 0, y: 0, w: 12, h: 4 },
    });
    await page.reload();
    await region('Top hosts').waitFor();
    await editMode();
    const after = await region('Top hosts').boundingBox();
    expect(after?.x).toBe(target?.x);
    expect(after?.y).toBe(target?.y);
    expect((await region('Top apps').boundingBox())?.y).toBeGreaterThan(
      (after?.y ?? 0) + (after?.height ?? 0),
    );
    await shot(page, 'dashboard-dragged');
  });

  it('resizes a widget by its corner handle; the size stays after a reload', async () => {
    await editMode();
    const handle = page.getByRole('button', { name: 'Resize Severity breakdown' });
    await handle.evaluate((el) => el.scrollIntoView({ block: 'center' }));
    const before = await region('Severity breakdown').boundingBox();
    const step = await gridSteps();
    const box = await handle.boundingBox();
    const from = { x: (box?.x ?? 0) + 9, y: (box?.y ?? 0) + 9 };
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(from.x + step.col * 2, from.y + step.row, { steps: 6 });
    await page.mouse.up();
    await expect.poll(positions).toMatchObject({
      'Severity breakdown': { x: 0, y: 10, w: 6, h: 6 },
      // It met Latest errors (columns 4-11 from row 14), which went below it.
      'Latest errors': { x: 4, y: 16, w: 8, h: 5 },
    });
    await page.reload();
    await region('Severity breakdown').waitFor();
    await editMode();
    const after = await region('Severity breakdown').boundingBox();
    expect(after?.width).toBeCloseTo((before?.width ?? 0) + step.col * 2, 0);
    expect(after?.height).toBeCloseTo((before?.height ?? 0) + step.row, 0);

    // The handle is a button: arrow keys resize too, and it keeps the focus.
    await handle.focus();
    await page.keyboard.press('ArrowLeft');
    await expect
      .poll(async () => (await positions())['Severity breakdown'])
      .toEqual({ x: 0, y: 10, w: 5, h: 6 });
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Resize Severity breakdown',
    );
    await page.locator('main').evaluate((m) => m.scrollTo(0, 0));
    await shot(page, 'dashboard-resized');
    await axe(page, 'dashboard after moving and resizing');
  });

  it('saves the dashboard as a template, offered under From template', async () => {
    await page.getByRole('button', { name: 'Save as template' }).click();
    const path = page.getByLabel('Template path');
    expect(await path.inputValue()).toBe('saved/overview');
    await path.fill('e2e/overview-layout');
    await shot(page, 'dashboard-save-template');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved as template “e2e/overview-layout”.' }).waitFor();

    await page.getByRole('link', { name: 'Dashboards', exact: true }).first().click();
    await page.waitForURL((u) => u.pathname === '/dashboards');
    const option = page
      .getByLabel('Template', { exact: true })
      .locator('option[value="e2e/overview-layout"]');
    await option.waitFor({ state: 'attached' });
    expect(await option.textContent()).toBe('Overview (e2e/overview-layout)');

    // A dashboard made from it has the layout as saved.
    await page.getByLabel('Template', { exact: true }).selectOption('e2e/overview-layout');
    await page.getByRole('button', { name: 'Create from template' }).click();
    await page.waitForURL(
      (u) => /^\/dashboards\/\d+$/.test(u.pathname) && !u.pathname.endsWith(`/${dashboardId}`),
    );
    for (const title of OVERVIEW_WIDGETS) await region(title).waitFor();
    const id = Number(new URL(page.url()).pathname.split('/').pop());
    const res = await t.as(operatorToken, { method: 'GET', url: `/api/dashboards/${id}` });
    const top = (res.json().widgets as Array<{ title: string; position: object }>).find(
      (w) => w.title === 'Top hosts',
    );
    expect(top?.position).toEqual({ x: 6, y: 4, w: 6, h: 5 });
    expect(consoleErrors).toEqual([]);
  });
});
