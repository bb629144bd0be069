import { readFileSync } from 'node:fs';
import type { Download, Page } from 'playwright-core';
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
  shot,
  startApp,
  writeFindings,
} from './browser.js';

// An admin's user management in Settings (create, edit permissions, admin flag and
// password, delete, the API's refusal to delete yourself) and the search page's Export
// menu operated with the keyboard alone (the WAI-ARIA menu button pattern), in a real
// browser against a real server. Setup: ./browser.ts.

const ADMIN = 'keeper';
const PASSWORD = 'keeper-password-1';
const EVENTS = 200;

describeBrowser('test/browser/admin.test.ts', 'user management and keyboard menus in Chromium', () => {
  let server: LiveApp;
  let t: LiveApp['t'];
  let base: string;
  let b: Browsing;
  let page: Page;
  let adminToken: string;
  const findings: AxeFinding[] = [];
  const consoleErrors: string[] = [];

  const api = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t.app.inject({
      method,
      url,
      headers: { authorization: `token ${adminToken}` },
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };

  /** The focused element: its role (explicit or the tag) and text. */
  const focused = () =>
    page.evaluate(() => {
      const el = document.activeElement;
      return { role: el?.getAttribute('role') ?? el?.tagName.toLowerCase(), text: el?.textContent?.trim() };
    });
  const focusedItem = async () => {
    const f = await focused();
    return f.role === 'menuitem' ? f.text : `not a menu item: ${f.role} ${f.text}`;
  };

  beforeAll(async () => {
    server = await startApp();
    ({ t, base } = server);
    adminToken = await createUser(t, { username: ADMIN, password: PASSWORD, admin: true });
    await ingest(t, demoEvents(5, EVENTS, Date.now() - 3 * 3_600_000, Date.now() - 60_000));
    b = await openBrowser({ token: adminToken, consoleErrors, context: { acceptDownloads: true } });
    ({ page } = b);
  }, 120_000);

  afterAll(async () => {
    writeFindings('admin-findings.json', findings, consoleErrors);
    await closeAll(b, server);
  }, 30_000);

  it('an admin creates a user, edits their permissions, admin flag and password, then deletes them', async () => {
    await page.goto(`${base}/settings`);
    const users = page.getByRole('region', { name: 'Users' });
    await users.getByRole('cell', { name: ADMIN, exact: true }).waitFor();

    const form = users.getByRole('form', { name: 'New user' });
    await form.getByLabel('Username').fill('auditor');
    await form.getByLabel('Password').fill('auditor-password-1');
    await form.getByRole('checkbox', { name: 'manage_tasks' }).check();
    await form.getByRole('button', { name: 'Create user' }).click();
    await users.getByRole('status').filter({ hasText: 'Created user “auditor”.' }).waitFor();
    const row = users
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: 'auditor', exact: true }) });
    await row.waitFor();
    const listed = await api('GET', '/api/users?username=auditor');
    const id = (listed.body.results as { id: number; username: string }[]).find(
      (u) => u.username === 'auditor',
    )?.id;
    expect(id).toBeGreaterThan(0);

    // Edit: permissions, admin flag, a new password.
    await row.getByRole('button', { name: 'Edit auditor' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit user auditor' });
    await dialog.waitFor();
    expect(await dialog.getByLabel('Username').inputValue()).toBe('auditor');
    expect(await dialog.getByRole('checkbox', { name: 'manage_tasks' }).isChecked()).toBe(true);
    await dialog.getByRole('checkbox', { name: 'manage_tasks' }).uncheck();
    await dialog.getByRole('checkbox', { name: 'manage_triggers' }).check();
    await dialog.getByRole('checkbox', { name: 'manage_dashboards' }).check();
    await dialog.getByRole('checkbox', { name: 'Admin', exact: true }).check();
    await dialog.getByLabel('New password').fill('short');
    await shot(page, 'settings-edit-user');
    await axe(page, 'settings, editing a user', findings);

    // A password the API refuses: its message at the field, the dialog stays.
    const before = consoleErrors.length;
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/password/i);
    expect(await dialog.getByLabel('New password').getAttribute('aria-invalid')).toBe('true');
    consoleErrors.splice(before); // the browser logs the refused request itself

    await dialog.getByLabel('New password').fill('auditor-password-2');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await users.getByRole('status').filter({ hasText: 'Saved user “auditor”.' }).waitFor();
    await expect.poll(() => row.innerText()).toContain('manage_triggers');
    expect(await row.innerText()).not.toContain('manage_tasks');
    const edited = await api('GET', `/api/users/${id}`);
    expect(edited.body).toMatchObject({
      username: 'auditor',
      is_admin: true,
      permissions: expect.arrayContaining(['manage_dashboards', 'manage_triggers']),
    });
    expect(edited.body.permissions).toHaveLength(2);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'auditor', password: 'auditor-password-2' },
    });
    expect(login.statusCode).toBe(200);

    // Esc closes the dialog without saving.
    await row.getByRole('button', { name: 'Edit auditor' }).click();
    await dialog.waitFor();
    await dialog.getByRole('checkbox', { name: 'Admin', exact: true }).uncheck();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await api('GET', `/api/users/${id}`)).body.is_admin).toBe(true);

    // Delete: nothing when the confirm is dismissed, gone when it is accepted.
    const confirms: string[] = [];
    page.once('dialog', (d) => {
      confirms.push(d.message());
      void d.dismiss();
    });
    await row.getByRole('button', { name: 'Delete auditor' }).click();
    await expect.poll(() => confirms).toEqual([expect.stringContaining('auditor')]);
    expect((await api('GET', `/api/users/${id}`)).status).toBe(200);

    page.once('dialog', (d) => void d.accept());
    await row.getByRole('button', { name: 'Delete auditor' }).click();
    await row.waitFor({ state: 'detached' });
    await users.getByRole('status').filter({ hasText: 'Deleted user “auditor”.' }).waitFor();
    expect((await api('GET', `/api/users/${id}`)).status).toBe(404);

    // Yourself: the API refuses, and says so.
    const self = consoleErrors.length;
    page.once('dialog', (d) => void d.accept());
    await users.getByRole('button', { name: `Delete ${ADMIN}` }).click();
    await expect.poll(() => users.getByRole('alert').textContent()).toBe('You cannot delete yourself.');
    consoleErrors.splice(self);
    await users.getByRole('cell', { name: ADMIN, exact: true }).waitFor();
  });

  it('the Export menu works with the keyboard alone', async () => {
    await page.goto(`${base}/search?range=last_24_hours`);
    await expect
      .poll(
        () =>
          page
            .getByRole('status')
            .filter({ hasText: /events$/ })
            .textContent(),
        { timeout: 15_000 },
      )
      .toBe(`${EVENTS} events`);
    const button = page.getByRole('button', { name: 'Export' });
    expect(await button.getAttribute('aria-haspopup')).toBe('menu');
    const menu = page.getByRole('menu', { name: 'Export' });

    // Enter opens it on the first item; the arrows move and wrap; Home and End.
    await button.focus();
    await page.keyboard.press('Enter');
    await menu.waitFor();
    expect(await button.getAttribute('aria-expanded')).toBe('true');
    expect(await focusedItem()).toBe('CSV');
    await page.keyboard.press('ArrowDown');
    expect(await focusedItem()).toBe('Excel (xlsx)');
    await page.keyboard.press('End');
    expect(await focusedItem()).toBe('Report…');
    await page.keyboard.press('ArrowDown');
    expect(await focusedItem()).toBe('CSV');
    await page.keyboard.press('ArrowUp');
    expect(await focusedItem()).toBe('Report…');
    await page.keyboard.press('Home');
    expect(await focusedItem()).toBe('CSV');
    // A letter goes to the next item starting with it.
    await page.keyboard.press('n');
    expect(await focusedItem()).toBe('NDJSON');
    await shot(page, 'search-export-menu-keyboard');
    await axe(page, 'search with the Export menu open (keyboard)', findings);

    // Esc closes it and the button has the focus again.
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    expect(await button.getAttribute('aria-expanded')).toBe('false');
    expect(await focused()).toMatchObject({ role: 'button', text: 'Export' });

    // ArrowUp opens it on the last item; Tab closes it and moves on.
    await page.keyboard.press('ArrowUp');
    await menu.waitFor();
    expect(await focusedItem()).toBe('Report…');
    await page.keyboard.press('Tab');
    await menu.waitFor({ state: 'detached' });
    expect(await focused()).toMatchObject({ role: 'button', text: 'Add to dashboard' });

    // Space opens it; Enter on an item chooses it: a CSV of the search.
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toMatchObject({ role: 'button', text: 'Export' });
    await page.keyboard.press('Space');
    await menu.waitFor();
    expect(await focusedItem()).toBe('CSV');
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 20_000 }),
      page.keyboard.press('Enter'),
    ]);
    expect((download as Download).suggestedFilename()).toMatch(/\.csv$/);
    const csv = readFileSync(await (download as Download).path()).toString('utf8');
    expect(csv.split(/\r?\n/).filter(Boolean)).toHaveLength(EVENTS + 1);
    await menu.waitFor({ state: 'detached' });

    // ArrowDown opens it; Report… opens its dialog, and Esc there returns to the button.
    await expect.poll(() => button.isEnabled()).toBe(true);
    await button.focus();
    await page.keyboard.press('ArrowDown');
    await menu.waitFor();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Report' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await focused()).toMatchObject({ role: 'button', text: 'Export' });
  });

  it('logged no errors in the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
